//! Grid-wide synchronisation for cooperative launches (`cooperative_groups::this_grid().sync()`),
//! and the kernel side of programmatic dependent launch (sm_90: `griddepcontrol`, CUDA C's
//! `cudaGridDependencySynchronize` and `cudaTriggerProgrammaticLaunchCompletion`).

#[cfg(target_arch = "nvptx64")]
use crate::thread;

/// The bit of the barrier word that flips each time every block has arrived.
#[cfg(target_arch = "nvptx64")]
const PHASE_BIT: u32 = 0x8000_0000;

/// Waits until every thread of every block of the grid has called it; the memory accesses
/// of the whole grid before it are then visible to the whole grid after it.
///
/// `barrier` is a `u32` in device memory shared by the blocks, the algorithm of CUDA's
/// cooperative groups (sm_70+): after a block barrier, thread (0, 0, 0) of each block adds to
/// it with a device-scope release `atom.add` (block (0, 0, 0) adds `0x8000_0000 - (blocks - 1)`,
/// the others 1, so the top bit flips when the last block arrives), spins on device-scope
/// acquire loads until the top bit differs from the one it saw, and a second block barrier
/// releases the block. The word is left with its top bit flipped and otherwise zero, so
/// several syncs in one launch reuse it.
///
/// # Safety
/// - The kernel was launched cooperatively (the host's `Gpu::launch_cooperative`), so that all
///   its blocks are resident at once; otherwise blocks waiting here may keep the others from
///   ever starting (a deadlock).
/// - Every thread of every block calls it, the same number of times (it contains block
///   barriers; a block that skips it hangs the grid).
/// - `barrier` points to a 4-byte aligned `u32` in global memory, zero before the launch,
///   written by nothing else and used by one launch at a time.
#[inline(always)]
pub unsafe fn sync(barrier: *mut u32) {
    on_gpu!("grid::sync", {
        thread::sync_threads();
        let is_block_leader = thread::thread_idx_x() | thread::thread_idx_y() | thread::thread_idx_z() == 0;
        if is_block_leader {
            let blocks =
                thread::grid_dim_x().wrapping_mul(thread::grid_dim_y()).wrapping_mul(thread::grid_dim_z());
            let is_first_block = thread::block_idx_x() | thread::block_idx_y() | thread::block_idx_z() == 0;
            let arrival = if is_first_block { PHASE_BIT.wrapping_sub(blocks - 1) } else { 1 };
            let before: u32;
            // SAFETY: the caller guarantees that `barrier` is a valid, aligned `u32` in global
            // memory that only the grid barrier touches.
            unsafe {
                core::arch::asm!(
                    "atom.add.release.gpu.u32 {before}, [{barrier}], {arrival};",
                    before = out(reg32) before,
                    barrier = in(reg64) barrier,
                    arrival = in(reg32) arrival,
                    options(nostack, preserves_flags),
                );
            }
            loop {
                let now: u32;
                // SAFETY: as above.
                unsafe {
                    core::arch::asm!(
                        "ld.acquire.gpu.u32 {now}, [{barrier}];",
                        now = out(reg32) now,
                        barrier = in(reg64) barrier,
                        options(nostack, preserves_flags),
                    );
                }
                if (before ^ now) & PHASE_BIT != 0 {
                    break;
                }
            }
        }
        thread::sync_threads();
    })
}

/// Waits until the kernels this one was launched to overlap have completed and their memory
/// is visible to it (`griddepcontrol.wait`; CUDA C's `cudaGridDependencySynchronize()`).
/// sm_90+ (a module built for `sm_90` or later, PTX ISA 7.8+).
///
/// A kernel launched with programmatic dependence (the host's `Gpu::launch_programmatic`)
/// may start while the kernel before it on the stream is still running; it calls this before
/// it reads what that kernel writes, or writes what that kernel reads: what comes before the
/// call (index arithmetic, shared-memory set-up, loads of data nothing earlier writes) overlaps
/// the previous kernel's end. In a kernel launched the ordinary way it returns at once.
#[doc(alias = "cudaGridDependencySynchronize")]
#[inline(always)]
pub fn dependency_synchronize() {
    on_gpu!("grid::dependency_synchronize", {
        // SAFETY: a wait with no operands; not `nomem`, so no memory access moves across it.
        unsafe { core::arch::asm!("griddepcontrol.wait;", options(nostack, preserves_flags)) }
    })
}

/// Lets the next kernel on the stream, if it was launched with programmatic dependence,
/// start its blocks before this kernel has finished (`griddepcontrol.launch_dependents`;
/// CUDA C's `cudaTriggerProgrammaticLaunchCompletion()`). sm_90+. The launch happens once
/// every block of this kernel has called it or exited; it is a hint about scheduling only:
/// what this kernel writes becomes visible to the next one at the next one's
/// [`dependency_synchronize`], wherever this is called, so a kernel may call it early (as
/// soon as it no longer needs the SM to itself).
#[doc(alias = "cudaTriggerProgrammaticLaunchCompletion")]
#[inline(always)]
pub fn trigger_dependent_launch() {
    on_gpu!("grid::trigger_dependent_launch", {
        // SAFETY: a scheduling hint with no operands.
        unsafe { core::arch::asm!("griddepcontrol.launch_dependents;", options(nostack, preserves_flags)) }
    })
}
