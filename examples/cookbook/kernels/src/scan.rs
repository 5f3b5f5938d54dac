//! 4. Exclusive prefix sum of `u32`: reduce, then scan, in three kernels.

use ptxkit_device::{SharedArray, atomic, kernel, memory, shared, thread, warp};

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

// ---- 4b. the single-pass scan: decoupled look-back (Merrill & Garland) -----------------------

/// Threads per block of [`scan_lookback`].
pub const LOOKBACK_BLOCK: u32 = 256;
/// Consecutive elements per thread of [`scan_lookback`].
pub const LOOKBACK_ITEMS: u32 = 8;
/// Elements per tile of [`scan_lookback`] (one block each): 2048.
pub const LOOKBACK_TILE: u32 = LOOKBACK_BLOCK * LOOKBACK_ITEMS;

/// A tile's status word (one `u64` per tile): the flag in the high 32 bits, the value in the
/// low 32, written and read as one 64-bit access so that a reader never sees a flag without
/// its value. Flag 0: nothing yet (the word the host zeroed).
pub const LOOKBACK_FLAG_AGGREGATE: u64 = 1 << 32;
/// Flag 2: the value is the inclusive prefix, the sum of this tile and every tile before it.
pub const LOOKBACK_FLAG_PREFIX: u64 = 2 << 32;

/// The exclusive prefix of tile `tile` (> 0), by warp 0 of its block, every lane calling:
/// lane *l* reads the status word of tile `tile − 1 − l` (acquire loads, each lane polling
/// until its word has a flag), then the lanes up to the nearest inclusive prefix add their
/// values (`redux.sync`); with no prefix among the 32, the window moves 32 tiles back. Tiles
/// before 0 count as a prefix of 0.
///
/// # Safety
/// `state` holds a status word per tile below `tile`; every one of those tiles belongs to a
/// block that has started (their tiles came from the ticket before this one's), so each
/// publishes at least its aggregate without waiting for this one.
#[inline(always)]
unsafe fn look_back(state: *const u64, tile: u32, lane: u32) -> u32 {
    let mut prefix = 0u32;
    let mut end = tile;
    loop {
        let word = if end > lane {
            let at = (end - 1 - lane) as usize;
            loop {
                // SAFETY: at < tile, a status word the host passes; others write it only with
                // release stores.
                let word = unsafe { memory::load_acquire(state.add(at)) };
                if word >> 32 != 0 {
                    break word;
                }
            }
        } else {
            LOOKBACK_FLAG_PREFIX
        };
        let prefixes = warp::ballot(warp::FULL_MASK, word >= LOOKBACK_FLAG_PREFIX);
        // The nearest inclusive prefix (lowest lane) ends the look-back: lanes below it hold
        // aggregates, it holds the prefix, lanes above it are not counted.
        let stop = if prefixes != 0 { prefixes.trailing_zeros() } else { warp::SIZE };
        let value = if lane <= stop { word as u32 } else { 0 };
        prefix = prefix.wrapping_add(warp::reduce_add(warp::FULL_MASK, value));
        if prefixes != 0 {
            return prefix;
        }
        end -= warp::SIZE;
    }
}

/// The exclusive prefix sum of `input` (`n` elements, wrapping) into `output` in one pass:
/// the decoupled look-back scan of Merrill and Garland (single-pass parallel prefix scan with
/// decoupled look-back, NVIDIA 2016; what CUB's `DeviceScan` does).
///
/// Each block takes the next tile from a ticket counter (`atomic::fetch_add`, so a block
/// waits only on tiles whose blocks have started), loads 8 items a thread and scans the
/// block (`shfl_up` within warps, the warp totals through shared memory); warp 0 publishes the tile's aggregate in its status word
/// (`memory::store_release`, flag [`LOOKBACK_FLAG_AGGREGATE`]), looks back over the
/// predecessors' words (`look_back`: `memory::load_acquire`, `warp::ballot`,
/// `warp::reduce_add`), then publishes the inclusive prefix ([`LOOKBACK_FLAG_PREFIX`]); tile
/// 0 publishes its prefix at once. `state` holds a status word per tile and, after them, the
/// ticket counter (the low half of word `gridDim.x`), all zero at the launch.
///
/// Thread mapping: one block of 256 per tile of 2048 elements (tiles in ticket order, not
/// block order), each thread 8 consecutive elements; warp 0 of each block does the
/// look-back, 32 predecessors at a time. Bytes per element: 8 (one read, one write; the
/// status words add 8 bytes a tile). Shows: flags between blocks with acquire/release
/// (`ld.acquire.gpu`, `st.release.gpu`), a ticket for forward progress, the warp's vote and
/// reduction; one pass where [`scan_tiles`] and its two passes read the input twice.
///
/// # Safety
/// `input` and `output` hold `n` elements; `state` holds `gridDim.x + 1` zeroed words; the
/// grid has a block per tile (⌈n / 2048⌉, at least 1) of 256 threads.
// At most 32 registers, 8 blocks of 256 an SM, as scan_tiles (and the twin's bound).
#[kernel(launch_bounds(256, 8))]
pub unsafe fn scan_lookback(input: *const u32, n: u32, output: *mut u32, state: *mut u64) {
    let warp_totals = shared!(lookback_warp_totals: [u32; (LOOKBACK_BLOCK / 32) as usize]);
    let broadcast = shared!(lookback_broadcast: [u32; 2]);
    let (lane, warp_index) = (warp::lane(), thread::thread_idx_x() / warp::SIZE);
    if thread::thread_idx_x() == 0 {
        // SAFETY: word gridDim.x of `state` is the ticket counter (its low half: the target
        // is little-endian); slot 0 of the broadcast array is read after the barrier.
        unsafe {
            let ticket = state.add(thread::grid_dim_x() as usize) as *mut u32;
            broadcast.store(0, atomic::fetch_add(ticket, 1));
        }
    }
    thread::sync_threads();
    // SAFETY: written before the barrier.
    let tile = unsafe { broadcast.load(0) };
    let base = tile as usize * LOOKBACK_TILE as usize + (thread::thread_idx_x() * LOOKBACK_ITEMS) as usize;
    // SAFETY: the host passes `n` elements.
    let items = unsafe { load_items(input, base, n) };
    let acc = items.iter().fold(0u32, |sum, &item| sum.wrapping_add(item));
    // The block's scan as in `block_exclusive_scan`, but the warp totals are read where they
    // are used: the tile's total by warp 0 before the look-back, each thread's warps-before
    // sum after it (summed before, the eight loads stayed live across the look-back: a
    // spill under the 32-register bound).
    let within_warp = warp_inclusive_scan(acc, lane).wrapping_sub(acc);
    if lane == warp::SIZE - 1 {
        // SAFETY: warp_index < 8; read after the barrier, never written again.
        unsafe { warp_totals.store(warp_index, within_warp.wrapping_add(acc)) };
    }
    thread::sync_threads();
    if warp_index == 0 {
        // SAFETY: lane < 8 reads a warp total written before the barrier.
        let total = warp::reduce_add(
            warp::FULL_MASK,
            if lane < LOOKBACK_BLOCK / 32 { unsafe { warp_totals.load(lane) } } else { 0 },
        );
        // SAFETY: `tile` < gridDim.x (one ticket per block): its status word, written only
        // here (release stores); the predecessors' words per `look_back`.
        let prefix = unsafe {
            let word = state.add(tile as usize);
            if tile == 0 {
                if lane == 0 {
                    memory::store_release(word, LOOKBACK_FLAG_PREFIX | total as u64);
                }
                0
            } else {
                if lane == 0 {
                    memory::store_release(word, LOOKBACK_FLAG_AGGREGATE | total as u64);
                }
                let prefix = look_back(state, tile, lane);
                if lane == 0 {
                    memory::store_release(word, LOOKBACK_FLAG_PREFIX | prefix.wrapping_add(total) as u64);
                }
                prefix
            }
        };
        if lane == 0 {
            // SAFETY: slot 1, read after the barrier.
            unsafe { broadcast.store(1, prefix) };
        }
    }
    thread::sync_threads();
    let mut before = 0u32;
    for w in 0..LOOKBACK_BLOCK / 32 {
        if w < warp_index {
            // SAFETY: w < 8; written before the first barrier.
            before = before.wrapping_add(unsafe { warp_totals.load(w) });
        }
    }
    // SAFETY: written before the barrier.
    let mut running = unsafe { broadcast.load(1) }.wrapping_add(before).wrapping_add(within_warp);
    // How many of this thread's 8 elements are below `n`, in 32 bits: testing `base + k < n`
    // here kept the eight 64-bit `base + k` of the loads live across the look-back (36 bytes
    // spilled on sm_80 under the 32-register bound; nvcc's twin recomputes them).
    let count = (n as usize).saturating_sub(base).min(LOOKBACK_ITEMS as usize) as u32;
    for (k, item) in items.iter().enumerate() {
        if (k as u32) < count {
            // SAFETY: base + k < n; each element is written by one thread.
            unsafe { *output.add(base + k) = running };
        }
        running = running.wrapping_add(*item);
    }
}
