//! 16. Cluster reduction (sm_90a, the Hopper module): the sum of an array of `f32`.
//!
//! Each cluster's blocks combine their partial sums through distributed shared memory: one
//! atomic per cluster instead of one per block.

use ptxkit_device::{atomic, cluster, kernel, shared, thread, warp};

/// Threads per block of [`cluster_reduce_f32`].
pub const CLUSTER_REDUCE_BLOCK: u32 = 256;
/// Blocks per cluster of [`cluster_reduce_f32`] (the portable maximum; at most 32, one lane
/// of warp 0 of the leading block per block of the cluster).
pub const CLUSTER_REDUCE_CLUSTER: u32 = 8;
/// Warps per block.
const WARPS: u32 = CLUSTER_REDUCE_BLOCK / warp::SIZE;

/// The sum of `value` over the warp, in every lane (a butterfly of `shfl_xor`).
#[inline(always)]
fn warp_sum(mut value: f32) -> f32 {
    let mut offset = warp::SIZE / 2;
    while offset > 0 {
        value += warp::shfl_xor(warp::FULL_MASK, value, offset, warp::SIZE);
        offset /= 2;
    }
    value
}

/// `*sum += Σ x[i]` for `i < n` (the host zeroes `*sum` first), one atomic per cluster.
///
/// Thread mapping: blocks of 256 threads in clusters of [`CLUSTER_REDUCE_CLUSTER`], a
/// grid-stride loop, each thread summing every `gridDim.x × 256`-th element; the warp's sum by
/// `shfl_xor`, the 8 warp sums through shared memory, warp 0 sums them into the block's
/// partial (in its shared memory). After a cluster barrier, warp 0 of the cluster's block of
/// rank 0 reads the cluster's partials, lane `r` the one of the block of rank `r`
/// (`ld.shared::cluster` at the address `mapa` gives), sums them by `shfl_xor` and adds the
/// cluster's sum to `*sum`; a second cluster barrier keeps every block's shared memory alive
/// until it has been read. Bytes per element: 4 (one read). Shows: `cluster::map_shared_rank`,
/// `RemoteShared::load`, `cluster::sync`, `cluster::block_rank`; launched with
/// `Gpu::launch_cluster`.
#[kernel(launch_bounds(256))]
pub unsafe fn cluster_reduce_f32(x: *const f32, n: u32, sum: *mut f32) {
    let warp_sums = shared!(cluster_reduce_warp_sums: [f32; WARPS as usize]);
    let partial = shared!(cluster_reduce_partial: [f32; 1]);
    let stride = thread::grid_size_1d();
    let mut acc = 0.0f32;
    let mut i = thread::index_1d();
    while i < n {
        // SAFETY: the host passes `n` elements; i < n.
        acc += unsafe { *x.add(i as usize) };
        i += stride;
    }
    let acc = warp_sum(acc);
    let (lane, warp_index) = (warp::lane(), thread::thread_idx_x() / warp::SIZE);
    if lane == 0 {
        // SAFETY: warp_index < WARPS; read only after the barrier below.
        unsafe { warp_sums.store(warp_index, acc) };
    }
    thread::sync_threads();
    if warp_index == 0 {
        // SAFETY: lane < WARPS is inside; written before the barrier.
        let block_sum = warp_sum(if lane < WARPS { unsafe { warp_sums.load(lane) } } else { 0.0 });
        if lane == 0 {
            // SAFETY: one element; read (by the leading block) only after the cluster barrier.
            unsafe { partial.store(0, block_sum) };
        }
    }
    // Every block's partial is written (release) before the leading block reads it (acquire).
    cluster::sync();
    if cluster::block_rank() == 0 && warp_index == 0 {
        let blocks = cluster::blocks();
        let remote = if lane < blocks {
            // SAFETY: lane < the cluster's size is a block of this cluster, which waits at the
            // closing cluster barrier before it exits; its partial was written before the barrier
            // above.
            unsafe { cluster::map_shared_rank(partial, lane).load(0) }
        } else {
            0.0
        };
        let cluster_sum = warp_sum(remote);
        if lane == 0 {
            // SAFETY: `sum` is the host's one-element buffer.
            unsafe { atomic::add(sum, cluster_sum) };
        }
    }
    // No block exits (its shared memory gone) before the leading block has read its partial.
    cluster::sync();
}
