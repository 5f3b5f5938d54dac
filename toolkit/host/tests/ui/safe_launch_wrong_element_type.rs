// `safe_saxpy` reads `x: &[f32]`; a buffer of f64 is passed for it.
#[path = "common/safe_kernel.rs"]
mod safe_kernel;
use ptxkit_host::{Gpu, cudarc::driver::CudaSlice, grid_1d};
use safe_kernel::safe_saxpy;

fn run(gpu: &Gpu, x: &CudaSlice<f64>, y: &mut CudaSlice<f32>) {
    gpu.launch(safe_saxpy, grid_1d(1000, 256), (x, y, 2.0f32)).unwrap();
}

fn main() {}
