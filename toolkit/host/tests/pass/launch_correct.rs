// The control case: the same launch with matching arguments compiles (built by the passing
// half of `compile_fail.rs`, so the failing cases fail for their one mistake).
#[path = "../ui/common/kernel.rs"]
mod kernel;
use kernel::{Rates, gray_scott_step};
use ptxkit_host::{Gpu, cudarc::driver::CudaSlice, grid_2d};

fn step(gpu: &Gpu, u: &CudaSlice<f32>, v: &CudaSlice<f32>, un: &mut CudaSlice<f32>, vn: &mut CudaSlice<f32>, rates: Rates) {
    let cfg = grid_2d(64, 16, (128, 2));
    gpu.launch(gray_scott_step, cfg, (u, v, un, vn, 64u32, 64u32, rates, 4u32)).unwrap();
}

fn main() {
    let _ = step;
}
