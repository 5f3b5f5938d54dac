// The control case for safe kernels: slices, views and rows passed right compile.
#[path = "../ui/common/safe_kernel.rs"]
mod safe_kernel;
use ptxkit_host::{Gpu, RowsMut, cudarc::driver::CudaSlice, grid_1d, grid_2d};
use safe_kernel::{safe_copy_2d, safe_saxpy};

fn run(gpu: &Gpu, x: &CudaSlice<f32>, y: &mut CudaSlice<f32>) {
    gpu.launch(safe_saxpy, grid_1d(1000, 256), (x, &mut *y, 2.0f32)).unwrap();
    gpu.launch(safe_saxpy, grid_1d(500, 256), (&x.slice(0..500), &mut y.slice_mut(500..1000), 2.0f32))
        .unwrap();
    gpu.launch(safe_copy_2d, grid_2d(40, 25, (32, 8)), (x, RowsMut::new(y, 40))).unwrap();
}

fn main() {
    let _ = run;
}
