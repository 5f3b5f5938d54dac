//! 4. Exclusive prefix sum of `u32`: reduce, then scan, in three kernels.

use ptxkit_device::{SharedArray, kernel, shared, thread, warp};

/// Threads per block of the tile passes.
pub const SCAN_BLOCK: u32 = 256;
/// Consecutive elements per thread.
pub const SCAN_ITEMS: u32 = 8;
/// Elements per tile (one block each): 2048.
pub const SCAN_TILE: u32 = SCAN_BLOCK * SCAN_ITEMS;
/// Threads of the one block that scans the tile sums.
pub const SCAN_SUMS_BLOCK: u32 = 1024;

/// The inclusive scan of `value` across the warp (Kogge–Stone with `shfl_up`).
/// A thread's `SCAN_ITEMS` consecutive inputs from `base` (0 past `n`). A run wholly inside
/// the input (every thread but the last tile's) loads all its items unconditionally, so the
/// eight loads are in flight at once; only a run that crosses `n` checks each item (a load
/// under a branch per item kept them one at a time: 21% slower than nvcc, whose twin does
/// the same).
///
/// # Safety
/// `input` holds `n` elements.
#[inline(always)]
unsafe fn load_items(input: *const u32, base: usize, n: u32) -> [u32; SCAN_ITEMS as usize] {
    let mut items = [0u32; SCAN_ITEMS as usize];
    if base + SCAN_ITEMS as usize <= n as usize {
        for (k, item) in items.iter_mut().enumerate() {
            // SAFETY: base + k < base + SCAN_ITEMS <= n.
            *item = unsafe { *input.add(base + k) };
        }
    } else {
        for (k, item) in items.iter_mut().enumerate() {
            if base + k < n as usize {
                // SAFETY: base + k < n.
                *item = unsafe { *input.add(base + k) };
            }
        }
    }
    items
}

#[inline(always)]
fn warp_inclusive_scan(mut value: u32, lane: u32) -> u32 {
    let mut delta = 1;
    while delta < warp::SIZE {
        let up = warp::shfl_up(warp::FULL_MASK, value, delta, warp::SIZE);
        if lane >= delta {
            value = value.wrapping_add(up);
        }
        delta *= 2;
    }
    value
}

/// The exclusive scan of one value per thread across a block of `WARPS` warps, and the
/// block's total, with `warp_totals` (`WARPS` elements) as scratch. Every thread of the block
/// must call it (it holds two barriers).
///
/// # Safety
/// `warp_totals` has at least `WARPS` elements, no other code of the block touches it between
/// the two barriers, and the block has `WARPS × 32` threads.
#[inline(always)]
unsafe fn block_exclusive_scan<const WARPS: u32>(value: u32, warp_totals: SharedArray<u32>) -> (u32, u32) {
    let (lane, warp_index) = (warp::lane(), thread::thread_idx_x() / warp::SIZE);
    let inclusive = warp_inclusive_scan(value, lane);
    if lane == warp::SIZE - 1 {
        // SAFETY: warp_index < WARPS (the caller's contract).
        unsafe { warp_totals.store(warp_index, inclusive) };
    }
    thread::sync_threads();
    let (mut before, mut total) = (0u32, 0u32);
    for w in 0..WARPS {
        // SAFETY: w < WARPS; written before the barrier.
        let t = unsafe { warp_totals.load(w) };
        if w < warp_index {
            before = before.wrapping_add(t);
        }
        total = total.wrapping_add(t);
    }
    // The next call's writes must wait until every thread has read.
    thread::sync_threads();
    (before.wrapping_add(inclusive).wrapping_sub(value), total)
}

/// Pass 1: `tile_sums[b]` = the sum (wrapping) of tile `b` of `input` (elements
/// `2048·b .. 2048·(b+1)`, those below `n`).
///
/// Thread mapping: one block of 256 per tile, each thread 8 consecutive elements; the warp's
/// sum by `warp::reduce_add` (`redux.sync`, sm_80+), the 8 warp sums through shared memory.
/// Bytes per element: 4. Shows: the hardware warp reduction on integers.
#[kernel(launch_bounds(256))]
pub unsafe fn scan_tile_sums(input: *const u32, n: u32, tile_sums: *mut u32) {
    let warp_sums = shared!(scan_warp_sums: [u32; (SCAN_BLOCK / 32) as usize]);
    let base =
        thread::block_idx_x() as usize * SCAN_TILE as usize + (thread::thread_idx_x() * SCAN_ITEMS) as usize;
    // SAFETY: the host passes `n` elements.
    let items = unsafe { load_items(input, base, n) };
    let acc = items.iter().fold(0u32, |sum, &item| sum.wrapping_add(item));
    let acc = warp::reduce_add(warp::FULL_MASK, acc);
    let (lane, warp_index) = (warp::lane(), thread::thread_idx_x() / warp::SIZE);
    if lane == 0 {
        // SAFETY: warp_index < 8; read after the barrier.
        unsafe { warp_sums.store(warp_index, acc) };
    }
    thread::sync_threads();
    if thread::thread_idx_x() == 0 {
        let mut sum = 0u32;
        for w in 0..SCAN_BLOCK / warp::SIZE {
            // SAFETY: w < 8; written before the barrier.
            sum = sum.wrapping_add(unsafe { warp_sums.load(w) });
        }
        // SAFETY: the host passes one tile sum per block.
        unsafe { *tile_sums.add(thread::block_idx_x() as usize) = sum };
    }
}

/// Pass 2: the exclusive scan of `sums[..count]` in place.
///
/// Thread mapping: one block of 1024 threads walks the sums 1024 at a time, each chunk scanned
/// by [`block_exclusive_scan`] and offset by the total so far. Bytes per element: 8 (tiny: one
/// sum per 2048 elements of the input).
#[kernel(launch_bounds(1024))]
pub unsafe fn scan_block_sums(sums: *mut u32, count: u32) {
    let warp_totals = shared!(scan_sums_warp_totals: [u32; (SCAN_SUMS_BLOCK / 32) as usize]);
    let mut carry = 0u32;
    let mut start = 0;
    while start < count {
        let i = start + thread::thread_idx_x();
        // SAFETY: the host passes `count` sums; read only when i < count.
        let value = if i < count { unsafe { *sums.add(i as usize) } } else { 0 };
        // SAFETY: 32 warp totals for a block of 1024 threads, used only here.
        let (exclusive, total) =
            unsafe { block_exclusive_scan::<{ SCAN_SUMS_BLOCK / 32 }>(value, warp_totals) };
        if i < count {
            // SAFETY: as above; each sum is read and written by one thread.
            unsafe { *sums.add(i as usize) = carry.wrapping_add(exclusive) };
        }
        carry = carry.wrapping_add(total);
        start += SCAN_SUMS_BLOCK;
    }
}

/// Pass 3: `output` = the exclusive scan of each tile of `input`, offset by the tile's entry
/// of `tile_offsets` (the scanned tile sums).
///
/// Thread mapping: one block of 256 per tile; each thread loads its 8 consecutive elements
/// into registers, the block scans the threads' totals ([`block_exclusive_scan`]: `shfl_up`
/// within warps, warp totals through shared memory), then each thread writes its 8 outputs.
/// Bytes per element: 8 (one read, one write).
// At most 32 registers, 8 blocks of 256 threads per SM: nvcc's twin gets there with 28; without
// the bound rustc's build took 35 and ran at 71% occupancy against 95% (ncu, H200), 17% slower.
#[kernel(launch_bounds(256, 8))]
pub unsafe fn scan_tiles(input: *const u32, n: u32, tile_offsets: *const u32, output: *mut u32) {
    let warp_totals = shared!(scan_tile_warp_totals: [u32; (SCAN_BLOCK / 32) as usize]);
    let base =
        thread::block_idx_x() as usize * SCAN_TILE as usize + (thread::thread_idx_x() * SCAN_ITEMS) as usize;
    // SAFETY: the host passes `n` elements.
    let items = unsafe { load_items(input, base, n) };
    let acc = items.iter().fold(0u32, |sum, &item| sum.wrapping_add(item));
    // SAFETY: 8 warp totals for a block of 256 threads, used only here.
    let (exclusive, _) = unsafe { block_exclusive_scan::<{ SCAN_BLOCK / 32 }>(acc, warp_totals) };
    // SAFETY: the host passes one offset per tile (block).
    let mut running = unsafe { *tile_offsets.add(thread::block_idx_x() as usize) }.wrapping_add(exclusive);
    for (k, item) in items.iter().enumerate() {
        if base + k < n as usize {
            // SAFETY: as above; each element is written by one thread.
            unsafe { *output.add(base + k) = running };
        }
        running = running.wrapping_add(*item);
    }
}
