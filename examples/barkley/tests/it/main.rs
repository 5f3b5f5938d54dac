//! The `barkley` command's tests, one binary with a module per area (linking one test binary,
//! not one per file, is most of what a test build saves). The GPU tests (`gpu`, `gpu_split`)
//! are `#[ignore]`d ("needs a CUDA GPU") and run on a GPU machine a module at a time:
//! `cargo test --release -p barkley --test it -- --ignored gpu::` (libtest's filters match the
//! path `module::test`; scripts/gpu-check.sh runs each module so).

mod common;

mod cli;
mod cpu;
mod driven;
mod gpu;
mod gpu_split;
mod serve;
mod split;
