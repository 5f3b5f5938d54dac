// Launch bounds outside a block's limits, and an unknown argument, are refused by #[kernel].
use ptxkit_device::kernel;

#[kernel(launch_bounds(2048, 1))]
pub unsafe fn too_many_threads(x: *mut f32) {}

#[kernel(launch_bounds(256, 0))]
pub unsafe fn no_blocks(x: *mut f32) {}

#[kernel(max_registers = 32)]
pub unsafe fn unknown(x: *mut f32) {}

#[kernel]
pub fn not_unsafe(x: *mut f32) {}

fn main() {}
