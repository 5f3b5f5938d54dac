// `gray_scott_fused`'s `width` is a u32; an f32 is passed, and the rates struct of another
// simulation for `rates`.
use cudarc::driver::CudaSlice;
use host::cuda::{Gpu, grid_2d};
use kernels::{grayscott::gray_scott_fused, heat::Rk4Terms};

fn step(gpu: &Gpu, u: &CudaSlice<f32>, v: &CudaSlice<f32>, un: &mut CudaSlice<f32>, vn: &mut CudaSlice<f32>) {
    let cfg = grid_2d(64, 16, (128, 2));
    gpu.launch(gray_scott_fused, cfg, (u, v, un, vn, 64.0f32, 64u32, Rk4Terms::new(0.1), 4u32)).unwrap();
}

fn main() {}
