//! Check kernels: thread-block clusters, distributed shared memory and `mbarrier` phases (the
//! `hopper` module: sm_90, PTX ISA 8.1, built by `../build.rs` beside the classic one).
//!
//! Any block shape (a block's threads numbered by `thread::linear_idx`, x fastest), any grid
//! of clusters the host launches (`Gpu::launch_cluster`: at most 8 blocks a cluster, every
//! block of a launch the same shape), within each kernel's limits (the ring needs clusters of
//! at least 2 blocks: a block's `st.async` into its own shared memory is undefined); blocks
//! numbered x fastest over the grid (`block_linear`). The cookbook's cluster kernels run fixed
//! 1-D shapes; these run the odd ones.

use ptxkit_device::mbarrier::{self, Mbarrier};
use ptxkit_device::{cluster, kernel, shared, thread};

/// Values [`cluster_registers`] writes a thread.
pub const CLUSTER_REGISTERS: u32 = 11;
/// The most threads a block of [`cluster_ring_async`] may have (its buffers' size).
pub const RING_MAX_THREADS: u32 = 1024;
/// Counters a block of [`cluster_remote_counts`] holds (its cluster at most this many blocks).
pub const REMOTE_COUNTERS: u32 = 8;
/// Values [`cluster_remote_counts`] writes a block: its counters, its mirror, and the next
/// block's counters read remotely.
pub const REMOTE_OUTPUTS: u32 = 3 * REMOTE_COUNTERS;

/// This block's index in the grid, x fastest.
#[inline(always)]
fn block_linear() -> u32 {
    thread::block_idx_x()
        + thread::grid_dim_x() * (thread::block_idx_y() + thread::grid_dim_y() * thread::block_idx_z())
}

/// This block's thread count.
#[inline(always)]
fn block_threads() -> u32 {
    thread::block_dim_x() * thread::block_dim_y() * thread::block_dim_z()
}

/// Every cluster special register as this thread reads it: `out[(block · threads + thread) ·
/// 11 + k]` for k = block rank, blocks, cluster index x/y/z, block index in the cluster x/y/z,
/// cluster shape x/y/z.
///
/// Thread mapping: one thread per output row, any block and cluster shape. Bytes per thread:
/// 44 written.
#[kernel]
pub unsafe fn cluster_registers(out: *mut u32) {
    let row = (block_linear() * block_threads() + thread::linear_idx()) as usize * CLUSTER_REGISTERS as usize;
    let values = [
        cluster::block_rank(),
        cluster::blocks(),
        cluster::cluster_idx_x(),
        cluster::cluster_idx_y(),
        cluster::cluster_idx_z(),
        cluster::block_idx_in_cluster_x(),
        cluster::block_idx_in_cluster_y(),
        cluster::block_idx_in_cluster_z(),
        cluster::dim_x(),
        cluster::dim_y(),
        cluster::dim_z(),
    ];
    for (k, value) in values.into_iter().enumerate() {
        // SAFETY: the host allocates 11 values per thread of the grid.
        unsafe { *out.add(row + k) = value };
    }
}

/// One round of [`cluster_ring_async`] at a thread: the value it keeps from what it received.
#[inline(always)]
pub fn ring_next(received: u32, rank: u32, round: u32) -> u32 {
    received.wrapping_mul(3).wrapping_add(rank).wrapping_add(round)
}

/// `rounds` rounds of a ring through each cluster: each round every thread sends its value to
/// the same thread of the next block by rank (`rank + 1` mod `blocks`) with
/// `RemoteShared::store_async`, counted on that block's `mbarrier` of the round's buffer (two
/// buffers in turn); the receiving block's thread 0 arrives expecting `4 · threads` bytes, every
/// thread waits for the phase (acquire at cluster scope, parity `(round / 2) mod 2`) and keeps
/// [`ring_next`] of what it received. A cluster barrier split around each round (arrive after
/// the read, wait before the next send) orders every block's read of round r − 1 before any
/// send of round r, so one buffer would do: the second is there so that two barriers go
/// through their phases, each phase's parity waited for.
///
/// Thread mapping: one thread per value (`x` and `y` block after block, `block_linear`, then
/// `linear_idx`), at most [`RING_MAX_THREADS`] a block, clusters of at least 2 blocks. Bytes
/// per thread: 8 global (read x, write y), 4 of distributed shared memory a round.
#[kernel]
pub unsafe fn cluster_ring_async(x: *const u32, y: *mut u32, rounds: u32) {
    let incoming = shared!(ring_incoming: [u32; 2 * RING_MAX_THREADS as usize]);
    let barriers = shared!(ring_barriers: [u64; 2]);
    let (tid, threads) = (thread::linear_idx(), block_threads());
    let i = (block_linear() * threads + tid) as usize;
    // SAFETY: the host allocates one value per thread of the grid.
    let mut value = unsafe { *x.add(i) };
    if tid == 0 {
        for k in 0..2 {
            // SAFETY: one thread, before the cluster barrier that every use follows.
            unsafe { Mbarrier::at(barriers, k).init(1) };
        }
        mbarrier::fence_init();
    }
    cluster::sync();
    let (rank, next) = (cluster::block_rank(), (cluster::block_rank() + 1) % cluster::blocks());
    for round in 0..rounds {
        let (buffer, parity) = (round & 1, (round >> 1) & 1);
        if round > 0 {
            // Every block has read round − 1's buffer and waited for its phase (so also every
            // earlier one).
            cluster::wait();
        }
        let barrier = Mbarrier::at(barriers, buffer);
        // SAFETY: element `tid` of the next block's buffer (tid < 1024), another block of the
        // cluster (at least 2 blocks), which has not exited (it waits for this phase) and
        // accesses the element next only after waiting for it; its last read of the element
        // (round − 2) came before the cluster barrier just waited for, as did that phase's
        // completion; the barrier was initialised before the first cluster barrier; this
        // phase counts these bytes.
        unsafe {
            cluster::map_shared_rank(incoming, next).store_async(
                buffer * RING_MAX_THREADS + tid,
                value,
                cluster::map_mbarrier(barrier, next),
            )
        };
        if tid == 0 {
            // SAFETY: the phase's one arrival; the previous block's threads (as many as this
            // block's: one shape a launch) store 4 bytes each into it.
            unsafe { barrier.arrive_expect_tx(4 * threads) };
        }
        // SAFETY: the phase completes: thread 0 arrived, every thread of the previous block
        // stores its 4 bytes in it; the phase of this parity is the barrier's current one (its
        // previous phase, two rounds ago, was waited for before the cluster barrier).
        unsafe { barrier.wait_parity_cluster(parity) };
        // SAFETY: stored by the previous block's thread `tid`, waited for above.
        value = ring_next(unsafe { incoming.load(buffer * RING_MAX_THREADS + tid) }, rank, round);
        cluster::arrive();
    }
    if rounds > 0 {
        // No block exits while another may still store into it.
        cluster::wait();
    }
    // SAFETY: one value per thread of the grid.
    unsafe { *y.add(i) = value };
}

/// Distributed shared memory's atomics, loads and stores: each block zeroes its
/// [`REMOTE_COUNTERS`] counters and mirror; after a cluster barrier, thread `t` of the block of
/// rank `r` adds `t + 1` to counter `r` of the block of rank `(t + r) mod blocks`
/// (`RemoteShared::fetch_add`, its returned value written to `returned[block · threads + t]`,
/// `block` x fastest in the grid); after another, thread `k < blocks` stores the block's counter
/// `k` into mirror `r` of block `k` (`RemoteShared::store`); after another, it writes
/// `out[block · 24 + k]` = counter `k`, `+ 8 + k` = mirror `k`, `+ 16 + k` = counter `k` of the
/// next block by rank (`RemoteShared::load`).
///
/// Thread mapping: any block shape (a block of fewer threads than counters takes them in
/// turn), clusters of at most 8 blocks. Bytes per block: 96 written, and 4 a thread.
#[kernel]
pub unsafe fn cluster_remote_counts(out: *mut u32, returned: *mut u32) {
    let counters = shared!(remote_counters: [u32; REMOTE_COUNTERS as usize]);
    let mirror = shared!(remote_mirror: [u32; REMOTE_COUNTERS as usize]);
    let (tid, threads) = (thread::linear_idx(), block_threads());
    let (rank, blocks) = (cluster::block_rank(), cluster::blocks());
    // Strided over the block's threads: a block may have fewer threads than counters.
    for k in (tid..REMOTE_COUNTERS).step_by(threads as usize) {
        // SAFETY: one thread per element, before the cluster barrier.
        unsafe {
            counters.store(k, 0);
            mirror.store(k, 0);
        }
    }
    cluster::sync();
    // SAFETY: element `rank` (< 8) of a block of this cluster, zeroed before the barrier; an
    // atomic among the cluster's adds. `returned` holds one value per thread of the grid (host).
    unsafe {
        let old = cluster::map_shared_rank(counters, (tid + rank) % blocks).fetch_add(rank, tid + 1);
        *returned.add((block_linear() * threads + tid) as usize) = old;
    }
    cluster::sync();
    for k in (tid..blocks).step_by(threads as usize) {
        // SAFETY: element `rank` of block `k`'s mirror, whose one writer is this thread (of
        // rank `rank`, taking `k`).
        unsafe { cluster::map_shared_rank(mirror, k).store(rank, counters.load(k)) };
    }
    cluster::sync();
    for k in (tid..REMOTE_COUNTERS).step_by(threads as usize) {
        let row = (block_linear() * REMOTE_OUTPUTS + k) as usize;
        // SAFETY: 24 values per block (host); the next block's counters were written before
        // the last barrier.
        unsafe {
            *out.add(row) = counters.load(k);
            *out.add(row + REMOTE_COUNTERS as usize) = mirror.load(k);
            *out.add(row + 2 * REMOTE_COUNTERS as usize) =
                cluster::map_shared_rank(counters, (rank + 1) % blocks).load(k);
        }
    }
    // No block exits while another may still read its counters.
    cluster::sync();
}
