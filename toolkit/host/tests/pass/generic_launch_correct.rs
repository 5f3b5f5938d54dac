// The control case of `launch_generic_wrong_instance`: each instance of a generic kernel
// launched with buffers of its own type compiles.
#[path = "../ui/common/generic_kernel.rs"]
mod kernel;
use kernel::{axpy_f32, axpy_f64};
use ptxkit_host::{Gpu, cudarc::driver::CudaSlice, grid_1d};

fn run(gpu: &Gpu, x: &CudaSlice<f32>, y: &mut CudaSlice<f32>, x64: &CudaSlice<f64>, y64: &mut CudaSlice<f64>) {
    gpu.launch(axpy_f32, grid_1d(1000, 256), (x, y, 1000u32, 2.0f32)).unwrap();
    gpu.launch(axpy_f64, grid_1d(1000, 256), (x64, y64, 1000u32, 2.0f64)).unwrap();
}

fn main() {
    let _ = run;
}
