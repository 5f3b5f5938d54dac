//! The cookbook's tests, one binary: `cpu` (the CPU references and the error bounds, the launch
//! shapes, the instructions in the PTX; run in CI) and `gpu` (each kernel on fresh random
//! inputs of odd sizes against the CPU reference; `#[ignore]`d, they need a CUDA GPU:
//! `cargo test --release -p cookbook --test it -- --ignored`).

mod cli;
mod common;
mod cpu;
mod gpu;
mod hopper;
mod ptx;
