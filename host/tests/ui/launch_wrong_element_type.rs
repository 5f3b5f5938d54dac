// `gray_scott_fused` reads `*const f32`; a buffer of u32 is passed for `u`.
use cudarc::driver::CudaSlice;
use host::cuda::{Gpu, grid_2d};
use kernels::grayscott::{Rates, gray_scott_fused};

fn step(gpu: &Gpu, u: &CudaSlice<u32>, v: &CudaSlice<f32>, un: &mut CudaSlice<f32>, vn: &mut CudaSlice<f32>, rates: Rates) {
    let cfg = grid_2d(64, 16, (128, 2));
    gpu.launch(gray_scott_fused, cfg, (u, v, un, vn, 64u32, 64u32, rates, 4u32)).unwrap();
}

fn main() {}
