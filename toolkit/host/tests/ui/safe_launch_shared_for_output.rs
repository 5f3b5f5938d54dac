// `safe_saxpy` writes `y: DisjointSlice<f32>`; a shared borrow is passed for it.
#[path = "common/safe_kernel.rs"]
mod safe_kernel;
use ptxkit_host::{Gpu, cudarc::driver::CudaSlice, grid_1d};
use safe_kernel::safe_saxpy;

fn run(gpu: &Gpu, x: &CudaSlice<f32>, y: &CudaSlice<f32>) {
    gpu.launch(safe_saxpy, grid_1d(1000, 256), (x, y, 2.0f32)).unwrap();
}

fn main() {}
