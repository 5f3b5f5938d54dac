// `gray_scott_step`'s `width` is a u32; an f32 is passed, and a struct of the same size but
// another type for `rates`.
#[path = "common/kernel.rs"]
mod kernel;
use kernel::{OtherTerms, gray_scott_step};
use ptxkit_host::{Gpu, cudarc::driver::CudaSlice, grid_2d};

fn step(gpu: &Gpu, u: &CudaSlice<f32>, v: &CudaSlice<f32>, un: &mut CudaSlice<f32>, vn: &mut CudaSlice<f32>) {
    let cfg = grid_2d(64, 16, (128, 2));
    gpu.launch(gray_scott_step, cfg, (u, v, un, vn, 64.0f32, 64u32, OtherTerms { terms: [0.0; 4] }, 4u32)).unwrap();
}

fn main() {}
