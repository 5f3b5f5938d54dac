//! 1. Reduction: the sum of an array of `f32`.

use ptxkit_device::{atomic, kernel, shared, thread, warp};

/// Threads per block.
pub const REDUCE_BLOCK: u32 = 256;
/// Warps per block.
const WARPS: u32 = REDUCE_BLOCK / warp::SIZE;

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

/// `*sum += Σ x[i]` for `i < n` (the host zeroes `*sum` first).
///
/// Thread mapping: a grid-stride loop, each thread summing every `gridDim.x × 256`-th element;
/// then the warp's sum by `shfl_xor`, the 8 warp sums through shared memory, warp 0 sums them
/// and one atomic add per block. Bytes per element: 4 (one read). Shows: warp shuffles,
/// typed shared memory, a global atomic on `f32`.
#[kernel(launch_bounds(256))]
pub unsafe fn reduce_sum_f32(x: *const f32, n: u32, sum: *mut f32) {
    let warp_sums = shared!(reduce_warp_sums: [f32; WARPS as usize]);
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
        let partial = if lane < WARPS { unsafe { warp_sums.load(lane) } } else { 0.0 };
        let block_sum = warp_sum(partial);
        if lane == 0 {
            // SAFETY: `sum` is the host's one-element buffer.
            unsafe { atomic::add(sum, block_sum) };
        }
    }
}
