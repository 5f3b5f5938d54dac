//! Block-wide operations beyond `thread::sync_threads`: barriers that count or vote
//! (`__syncthreads_count`, `__syncthreads_and`, `__syncthreads_or`).
//!
//! Each is a `__syncthreads()` as well (`bar.red` on barrier 0: every thread of the block
//! waits, and the memory accesses before it are visible to the block after it). Call them from
//! all threads of a block or from none.

/// `__syncthreads_count(predicate)`: waits for the whole block, then returns to every thread
/// how many threads of the block passed a true `predicate` (`bar.red.popc.u32`).
#[inline(always)]
pub fn sync_threads_count(predicate: bool) -> u32 {
    on_gpu!("sync_threads_count", {
        let count: u32;
        // SAFETY: a block barrier has no memory-safety preconditions (see the module doc for
        // its use); it orders memory, hence no `nomem`.
        unsafe {
            core::arch::asm!(
                "{{ .reg .pred vote_in;",
                "setp.ne.u32 vote_in, {p}, 0;",
                "bar.red.popc.u32 {count}, 0, vote_in; }}",
                count = out(reg32) count,
                p = in(reg32) u32::from(predicate),
                options(nostack, preserves_flags),
            );
        }
        count
    })
}

/// `__syncthreads_and(predicate)`: waits for the whole block, then returns to every thread
/// whether `predicate` was true in all threads of the block (`bar.red.and.pred`).
#[inline(always)]
pub fn sync_threads_and(predicate: bool) -> bool {
    on_gpu!("sync_threads_and", {
        let all: u32;
        // SAFETY: as in `sync_threads_count`.
        unsafe {
            core::arch::asm!(
                "{{ .reg .pred vote_in, vote_out;",
                "setp.ne.u32 vote_in, {p}, 0;",
                "bar.red.and.pred vote_out, 0, vote_in;",
                "selp.u32 {all}, 1, 0, vote_out; }}",
                all = out(reg32) all,
                p = in(reg32) u32::from(predicate),
                options(nostack, preserves_flags),
            );
        }
        all != 0
    })
}

/// `__syncthreads_or(predicate)`: waits for the whole block, then returns to every thread
/// whether `predicate` was true in some thread of the block (`bar.red.or.pred`).
#[inline(always)]
pub fn sync_threads_or(predicate: bool) -> bool {
    on_gpu!("sync_threads_or", {
        let any: u32;
        // SAFETY: as in `sync_threads_count`.
        unsafe {
            core::arch::asm!(
                "{{ .reg .pred vote_in, vote_out;",
                "setp.ne.u32 vote_in, {p}, 0;",
                "bar.red.or.pred vote_out, 0, vote_in;",
                "selp.u32 {any}, 1, 0, vote_out; }}",
                any = out(reg32) any,
                p = in(reg32) u32::from(predicate),
                options(nostack, preserves_flags),
            );
        }
        any != 0
    })
}
