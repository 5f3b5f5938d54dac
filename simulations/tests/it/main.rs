//! The library's integration tests, one binary with a module per area (linking one test
//! binary, not one per file, is most of what a test build saves). CPU tests run in CI; the
//! GPU tests are `#[ignore]`d ("needs a CUDA GPU") and run on a GPU machine, a module at a
//! time: `cargo test --release -p simulations --test it -- --ignored gpu_heat::` (libtest's
//! filters match the path `module::test`; scripts/gpu-check.sh runs each module so).

// The kernel images (src/cuda/images.rs).
use simulations_images as _;

mod common;
mod gpu_helpers;

// On the CPU.
mod cpu_grayscott;
mod cpu_heat;
mod cubin;
mod docs_tables;
mod faults_autotune_cache;
mod frame_writer;
mod golden_runs;
mod initial_conditions;
mod map;
mod outputs_checkpoint;
mod outputs_export;
mod outputs_mp4;
mod presets;
mod ptx;
mod serve_steering;

// On a GPU.
mod gpu_device_layer;
mod gpu_grayscott;
mod gpu_heat;
mod gpu_physarum;
mod gpu_split;
mod outputs_gpu;
