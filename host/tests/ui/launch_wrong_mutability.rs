// `gray_scott_fused` writes through `u_next: *mut f32`; a shared borrow is passed for it.
use cudarc::driver::CudaSlice;
use host::cuda::{Gpu, grid_2d};
use kernels::grayscott::{Rates, gray_scott_fused};

fn step(gpu: &Gpu, u: &CudaSlice<f32>, v: &CudaSlice<f32>, un: &CudaSlice<f32>, vn: &mut CudaSlice<f32>, rates: Rates) {
    let cfg = grid_2d(64, 16, (128, 2));
    gpu.launch(gray_scott_fused, cfg, (u, v, un, vn, 64u32, 64u32, rates, 4u32)).unwrap();
}

fn main() {}
