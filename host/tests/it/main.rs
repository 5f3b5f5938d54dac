//! The command's tests, one binary with a module per area (linking one test binary, not one
//! per file, is most of what a test build saves): `rust-gpu-sim` and `rust-gpu-sim serve` run
//! as a user runs them. The library's own tests are in simulations/tests/it. GPU tests are
//! `#[ignore]`d ("needs a CUDA GPU") and run on a GPU machine a module at a time:
//! `cargo test --release -p host --test it -- --ignored serve_gpu::` (libtest's filters match the
//! path `module::test`; scripts/gpu-check.sh runs each module so).

// The simulations' kernel images, which the library (host/cli) leaves to what links it.
use simulations_images as _;

mod common;
mod serve_server;

mod chart;
mod cli;
mod cli_outputs;
mod cpu_physarum;
mod faults_fifo_input;
mod faults_gpu;
mod hostile;
mod outfile_no_proc;
mod outfile_sigkill;
mod outputs_readback;
mod png_dir_sigkill;
mod serve_browser;
mod serve_gpu;
mod serve_protocol;
mod settings;
mod split_cpu;
mod teardown_gpu;
