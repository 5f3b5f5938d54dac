// `axpy_f64`, the f64 instance of a generic kernel, is launched with f32 buffers.
#[path = "common/generic_kernel.rs"]
mod kernel;
use kernel::axpy_f64;
use ptxkit_host::{Gpu, cudarc::driver::CudaSlice, grid_1d};

fn run(gpu: &Gpu, x: &CudaSlice<f32>, y: &mut CudaSlice<f32>) {
    gpu.launch(axpy_f64, grid_1d(1000, 256), (x, y, 1000u32, 2.0f64)).unwrap();
}

fn main() {}
