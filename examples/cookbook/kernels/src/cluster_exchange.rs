//! 20. A neighbour exchange through distributed shared memory (sm_90a, the Hopper module).
//!
//! A 1-D smoothing iterated in shared memory by the blocks of a cluster, each step's edge
//! values stored straight into the neighbouring blocks' shared memory by `st.async`.

use ptxkit_device::mbarrier::{self, Mbarrier};
use ptxkit_device::{cluster, kernel, shared, thread};

/// Threads (and cells) per block of [`cluster_smooth_f32`].
pub const EXCHANGE_BLOCK: u32 = 256;
/// Blocks per cluster of [`cluster_smooth_f32`]: a segment of the array is one cluster's.
pub const EXCHANGE_CLUSTER: u32 = 4;
/// Cells of a segment, smoothed on their own (zero outside it).
pub const EXCHANGE_SEGMENT: u32 = EXCHANGE_BLOCK * EXCHANGE_CLUSTER;
/// A block's cells in shared memory, with a pad cell at each end for the neighbours' edge.
const SPAN: u32 = EXCHANGE_BLOCK + 2;

/// One smoothing step at a cell: `(left + centre + right) · (1/3)`, the CPU's rounding
/// (`cpu::cluster_smooth`).
#[inline(always)]
pub fn smooth(left: f32, centre: f32, right: f32) -> f32 {
    (left + centre + right) * (1.0 / 3.0)
}

/// `steps` smoothing steps of each segment of [`EXCHANGE_SEGMENT`] cells of `x` (zero outside
/// the segment) into `y`.
///
/// Thread mapping: one thread per cell, blocks of 256 in clusters of 4, one cluster per
/// segment (block `rank` its `rank`-th 256 cells). A cell's value stays in its thread's
/// register; each step the block writes its cells into one of two shared buffers (by the
/// step's parity) and reads its neighbours there after one barrier. The block's first and last
/// threads also store their value into the pad cell of the block beside with
/// `RemoteShared::store_async` (`st.async`), which counts its 4 bytes on that block's
/// `mbarrier` of the buffer and side; the receiving thread arrives on its own barrier expecting
/// them, and waits for the phase (acquire at cluster scope) before reading the pad. No cluster
/// barrier in the loop: the blocks pace each other pairwise (a block writes a buffer's pad
/// again only two steps on, after its neighbour's next value has reached it; the neighbour
/// computes that value from the pad, so its read of the pad comes before it, by a data
/// dependency). Blocks of exactly 256 threads (`#[kernel(block(256))]`: the last thread is
/// the right edge). Bytes per cell: 8 (read x, write y), for any
/// number of steps. Shows: `RemoteShared::store_async`, `cluster::map_mbarrier`,
/// `Mbarrier::arrive_expect_tx` / `wait_parity_cluster`, `mbarrier::fence_init`,
/// `Gpu::launch_cluster`.
#[kernel(block(256))]
pub unsafe fn cluster_smooth_f32(x: *const f32, y: *mut f32, steps: u32) {
    let cells = shared!(exchange_cells: [f32; 2 * SPAN as usize]);
    // Barrier `2·buffer + side` counts the pad of that buffer on that side (0: left, 1: right).
    let barriers = shared!(exchange_barriers: [u64; 4]);
    let (tid, rank, blocks) = (thread::thread_idx_x(), cluster::block_rank(), cluster::blocks());
    let i = (thread::block_idx_x() * EXCHANGE_BLOCK + tid) as usize;
    // SAFETY: the host launches one thread per element of `x`.
    let mut value = unsafe { *x.add(i) };
    // The pads at the segment's ends stay zero (the boundary); the others are overwritten by
    // the neighbours before every read.
    if tid < 4 {
        // SAFETY: cells 0 and SPAN − 1 of each buffer.
        unsafe { cells.store((tid / 2) * SPAN + (tid % 2) * (SPAN - 1), 0.0) };
    }
    if tid == 0 {
        for k in 0..4 {
            // SAFETY: one thread, before the cluster barrier below, which every use follows.
            unsafe { Mbarrier::at(barriers, k).init(1) };
        }
        // The initialisations visible to the other blocks' `st.async`.
        mbarrier::fence_init();
    }
    // Every block's pads and barriers are ready before any neighbour stores into them.
    cluster::sync();
    let (has_left, has_right) = (rank > 0, rank + 1 < blocks);
    let (left, right) = (rank.saturating_sub(1), (rank + 1).min(blocks - 1));
    for step in 0..steps {
        let (buffer, parity) = (step & 1, (step >> 1) & 1);
        let base = buffer * SPAN;
        // SAFETY: this thread's cell of this buffer; its previous readers read it before the
        // last step's barrier, which this thread has passed.
        unsafe { cells.store(base + 1 + tid, value) };
        if tid == 0 && has_left {
            // This block's first cell is the right pad of the block on the left.
            let barrier = cluster::map_mbarrier(Mbarrier::at(barriers, 2 * buffer + 1), left);
            // SAFETY: a cell of the left block, which reads it only after this phase of that
            // barrier, whose one arrival expects these 4 bytes; its read of the cell two steps
            // ago produced the value this block waited for last step (a data dependency), so
            // it comes first; the block has not exited (it waits for this phase).
            unsafe {
                cluster::map_shared_rank(cells, left).store_async(base + SPAN - 1, value, barrier);
                Mbarrier::at(barriers, 2 * buffer).arrive_expect_tx(4);
            }
        }
        if tid == EXCHANGE_BLOCK - 1 && has_right {
            // This block's last cell is the left pad of the block on the right.
            let barrier = cluster::map_mbarrier(Mbarrier::at(barriers, 2 * buffer), right);
            // SAFETY: as for the left block.
            unsafe {
                cluster::map_shared_rank(cells, right).store_async(base, value, barrier);
                Mbarrier::at(barriers, 2 * buffer + 1).arrive_expect_tx(4);
            }
        }
        thread::sync_threads();
        // SAFETY: this phase completes: this thread arrived, and the block beside stores the
        // 4 bytes at its own step `step`.
        if tid == 0 && has_left {
            unsafe { Mbarrier::at(barriers, 2 * buffer).wait_parity_cluster(parity) };
        }
        if tid == EXCHANGE_BLOCK - 1 && has_right {
            unsafe { Mbarrier::at(barriers, 2 * buffer + 1).wait_parity_cluster(parity) };
        }
        // SAFETY: cells tid and tid + 2 of this buffer (the pads at the ends), written before
        // the barrier or, the pads, waited for above.
        value = smooth(unsafe { cells.load(base + tid) }, value, unsafe { cells.load(base + tid + 2) });
    }
    // SAFETY: one thread per element of `y`.
    unsafe { *y.add(i) = value };
    // Every store into this block was waited for in the loop, so none is still in flight; the
    // cluster barrier is the toolkit's rule for distributed shared memory, kept as a margin.
    cluster::sync();
}
