//! 19. Programmatic dependent launch (sm_90a, the Hopper module): a chain of short kernels.
//!
//! Each kernel of the chain may start while the one before it is finishing.

use ptxkit_device::{grid, kernel, thread};

/// Threads per block of [`chain_step_f32`].
pub const CHAIN_BLOCK: u32 = 256;

/// One step of the chain `v ← a·v + b` over `n` values, from `input` into `output`, for
/// launches with programmatic dependence (`Gpu::launch_programmatic`): the step before wrote
/// `input` and read `output`, and may still be running when this step's blocks start. Each
/// thread first lets the next step's blocks start (`grid::trigger_dependent_launch`: they
/// only get as far as their own wait), then waits for the step before
/// (`grid::dependency_synchronize`) before it touches `input` or `output`. `a·v + b` is a
/// multiply and an add, as the CPU's (no `fma`): bit-identical.
///
/// Thread mapping: one value per thread, blocks of 256. Bytes per value: 8 a step.
/// Shows: `grid::trigger_dependent_launch` (`griddepcontrol.launch_dependents`),
/// `grid::dependency_synchronize` (`griddepcontrol.wait`), `Gpu::launch_programmatic`.
#[kernel(block(256))]
pub unsafe fn chain_step_f32(input: *const f32, output: *mut f32, n: u32, a: f32, b: f32) {
    let i = thread::block_idx_x() * CHAIN_BLOCK + thread::thread_idx_x();
    grid::trigger_dependent_launch();
    grid::dependency_synchronize();
    if i < n {
        // SAFETY: `i < n`, the length of both buffers (the launcher's contract); the step
        // before has finished (the wait above), so nothing else touches either.
        unsafe { *output.add(i as usize) = a * *input.add(i as usize) + b };
    }
}
