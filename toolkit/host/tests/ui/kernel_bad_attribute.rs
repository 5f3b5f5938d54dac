// Launch bounds and block shapes outside a block's limits, a block shape its launch bounds
// contradict, an unknown argument, and `thread_idx_hints` without a block or with no bool,
// are refused by #[kernel].
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

#[kernel(thread_idx_hints = false)]
pub unsafe fn hints_without_block(x: *mut f32) {}

#[kernel(block(32, 8), thread_idx_hints = no)]
pub unsafe fn hints_not_a_bool(x: *mut f32) {}

fn main() {}
