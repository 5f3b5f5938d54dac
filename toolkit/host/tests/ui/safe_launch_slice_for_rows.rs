// `safe_copy_2d` writes `out: DisjointSlice2d<f32>`, which needs its row width: a plain
// buffer is passed instead of a `RowsMut`.
#[path = "common/safe_kernel.rs"]
mod safe_kernel;
use ptxkit_host::{Gpu, cudarc::driver::CudaSlice, grid_2d};
use safe_kernel::safe_copy_2d;

fn run(gpu: &Gpu, x: &CudaSlice<f32>, out: &mut CudaSlice<f32>) {
    gpu.launch(safe_copy_2d, grid_2d(40, 25, (32, 8)), (x, out)).unwrap();
}

fn main() {}
