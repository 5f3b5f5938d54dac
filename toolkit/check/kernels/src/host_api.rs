//! Check kernels: host_api (kernels the host API's tests launch: streams, graphs, events,
//! run-time modules by name, cooperative launches with grid-wide syncs).

use ptxkit_device::{atomic::atomic_add_u32, grid, kernel, thread};

/// y ← a·x + y, accumulating, so that N replays of a graph (or N launches) leave
/// y₀ + N·a·x. Thread mapping: one thread per element, 1-D. Bytes per element: 12.
#[kernel]
pub unsafe fn host_api_axpy(x: *const f32, y: *mut f32, n: u32, a: f32) {
    let i = thread::index_1d();
    if i < n {
        // SAFETY: the launcher gives `n` values in each buffer; `i < n`.
        unsafe { *y.add(i as usize) += a * *x.add(i as usize) };
    }
}

/// Two phases split by a grid-wide sync: every block adds its grid-stride share of `values`
/// into `partials[blockIdx.x]`; after `grid::sync`, thread 0 of block 0 adds the partials
/// into `total[0]`. Only correct if the sync waited for every block. Launch cooperatively,
/// 1-D, with `partials` (one per block), `total` and `barrier` zeroed. Thread mapping:
/// grid-stride over `n` values. Bytes per value: 4.
#[kernel]
pub unsafe fn host_api_grid_sum(
    values: *const u32,
    partials: *mut u32,
    total: *mut u32,
    n: u32,
    barrier: *mut u32,
) {
    let mut sum = 0u32;
    let mut i = thread::index_1d();
    while i < n {
        // SAFETY: `values` holds `n` values; `i < n`.
        sum = sum.wrapping_add(unsafe { *values.add(i as usize) });
        i += thread::grid_size_1d();
    }
    let block = thread::block_idx_x();
    // SAFETY: `partials` holds one `u32` per block.
    unsafe { atomic_add_u32(partials.add(block as usize), sum) };
    // SAFETY: launched cooperatively (the host's contract); every thread calls it once;
    // `barrier` is a zeroed word used by this launch alone.
    unsafe { grid::sync(barrier) };
    if block == 0 && thread::thread_idx_x() == 0 {
        let mut grand = 0u32;
        for b in 0..thread::grid_dim_x() {
            // SAFETY: one partial per block; written before the grid sync.
            grand = grand.wrapping_add(unsafe { core::ptr::read_volatile(partials.add(b as usize)) });
        }
        // SAFETY: `total` holds one value.
        unsafe { *total = grand };
    }
}

/// `rounds` grid-wide syncs on one barrier word: in round r thread 0 of every block adds 1 to
/// `arrivals[r]`, the grid syncs, and thread 0 of every block writes the count it then reads
/// to `seen[r · blocks + blockIdx.x]`: every entry equals the block count exactly when every
/// sync waited for every block. Launch cooperatively, 1-D, with `arrivals` (`rounds` values)
/// and `barrier` zeroed, `seen` of `rounds · blocks` values. Thread mapping: one leader
/// thread per block does the counting; all threads sync.
#[kernel]
pub unsafe fn host_api_grid_rounds(arrivals: *mut u32, seen: *mut u32, rounds: u32, barrier: *mut u32) {
    let (block, blocks) = (thread::block_idx_x(), thread::grid_dim_x());
    let is_leader = thread::thread_idx_x() == 0;
    for round in 0..rounds {
        if is_leader {
            // SAFETY: `arrivals` holds `rounds` values; `round < rounds`.
            unsafe { atomic_add_u32(arrivals.add(round as usize), 1) };
        }
        // SAFETY: launched cooperatively; every thread of every block makes the same `rounds`
        // calls; `barrier` is a zeroed word used by this launch alone.
        unsafe { grid::sync(barrier) };
        if is_leader {
            let at = (round * blocks + block) as usize;
            // SAFETY: `seen` holds `rounds · blocks` values; `arrivals[round]` is in bounds.
            unsafe { *seen.add(at) = core::ptr::read_volatile(arrivals.add(round as usize)) };
        }
    }
}
