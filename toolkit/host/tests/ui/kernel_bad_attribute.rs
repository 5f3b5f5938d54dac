// Launch bounds and block shapes outside a block's limits, a block shape its launch bounds
// contradict, and an unknown argument, are refused by #[kernel].
use ptxkit_device::kernel;

#[kernel(launch_bounds(2048, 1))]
pub unsafe fn too_many_threads(x: *mut f32) {}

#[kernel(launch_bounds(256, 0))]
pub unsafe fn no_blocks(x: *mut f32) {}

#[kernel(max_registers = 32)]
pub unsafe fn unknown(x: *mut f32) {}

#[kernel]
pub fn not_unsafe(x: *mut f32) {}

#[kernel(block(64, 32))]
pub unsafe fn block_too_large(x: *mut f32) {}

#[kernel(block(32, 0))]
pub unsafe fn block_side_zero(x: *mut f32) {}

#[kernel(block(32, 8), launch_bounds(128, 2))]
pub unsafe fn block_against_bounds(x: *mut f32) {}

fn main() {}
