//! 3. A 256-bin histogram of bytes.

use ptxkit_device::{atomic, kernel, shared, thread};

/// Threads per block: one per bin.
pub const HISTOGRAM_BLOCK: u32 = 256;

/// `bins[b] += ` the number of bytes equal to `b` among the `4·n_words` bytes of `words`
/// (little-endian; the host zeroes `bins` first).
///
/// Thread mapping: a grid-stride loop over the words; each thread adds its words' four bytes
/// to the block's histogram in shared memory with shared atomics, then after a barrier thread
/// `t` adds bin `t` to the global histogram with one global atomic (if non-zero). Bytes per
/// element: 1 (one read per byte). Shows: shared-memory atomics (`atom.shared.add.u32`), then
/// global atomics: the two-level pattern that keeps contention inside the block.
#[kernel(launch_bounds(256))]
pub unsafe fn histogram_256(words: *const u32, n_words: u32, bins: *mut u32) {
    let local = shared!(histogram_local: [u32; 256]);
    let t = thread::thread_idx_x();
    // SAFETY: t < 256 (the block is 256 threads); read after the barrier.
    unsafe { local.store(t, 0) };
    thread::sync_threads();
    let stride = thread::grid_size_1d();
    let mut i = thread::index_1d();
    while i < n_words {
        // SAFETY: the host passes `n_words` words; i < n_words.
        let word = unsafe { *words.add(i as usize) };
        // SAFETY: a byte is below 256; the bins were zeroed before the barrier.
        unsafe {
            local.fetch_add(word & 0xff, 1);
            local.fetch_add((word >> 8) & 0xff, 1);
            local.fetch_add((word >> 16) & 0xff, 1);
            local.fetch_add(word >> 24, 1);
        }
        i += stride;
    }
    thread::sync_threads();
    // SAFETY: t < 256; every shared atomic of the block came before the barrier.
    let count = unsafe { local.load(t) };
    if count != 0 {
        // SAFETY: `bins` is the host's buffer of 256 counts.
        unsafe { atomic::add(bins.add(t as usize), count) };
    }
}
