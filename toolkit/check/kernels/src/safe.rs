//! Check kernels: safe kernels (`pub fn`, slices in, `DisjointSlice` out), next to the same
//! work over raw pointers for comparison.

use ptxkit_device::kernel;
use ptxkit_device::safe::{DisjointSlice, DisjointSlice2d, Grid2d, ThreadIndex, ThreadIndex2d};

/// y ← a·x + y, safe. Thread mapping: one thread per element of `y` (1-D launch); a thread
/// past the end of `y` does nothing, one past the end of `x` adds 0. Bytes per element: 12.
#[kernel]
pub fn safe_saxpy(x: &[f32], mut y: DisjointSlice<f32>, a: f32) {
    let i = ThreadIndex::global_1d();
    let xi = x.get(i.get()).copied().unwrap_or(0.0);
    if let Some(yi) = y.get_mut(i) {
        *yi += a * xi;
    }
}

/// y ← a·x + y over raw pointers, as `safe_saxpy` without the types: the comparison for its
/// PTX. Thread mapping: one thread per element. Bytes per element: 12.
///
/// # Safety
/// `x` and `y` point to `n` `f32`s each; `y` overlaps nothing else.
#[kernel]
pub unsafe fn raw_saxpy(x: *const f32, y: *mut f32, n: u32, a: f32) {
    let i = ptxkit_device::thread::index_1d();
    if i < n {
        // SAFETY: i < n, the caller's buffers.
        unsafe { *y.add(i as usize) += a * *x.add(i as usize) };
    }
}

/// out ← value for each element, by indexing (`out[i] = value`): out of bounds stops the
/// kernel with a report naming it. Thread mapping: one thread per element; the launch must not
/// have more threads than elements. Bytes per element: 4.
#[kernel]
pub fn safe_fill_indexed(mut out: DisjointSlice<u32>, value: u32) {
    out[ThreadIndex::global_1d()] = value;
}

/// One explicit step of 2-D diffusion with a 5-point stencil, safe: `out[y][x] = c + k·(w + e +
/// n + s − 4c)` inside the grid, `out = c` on its border. `input` has `out`'s shape (`width` ×
/// `height`, row-major, set by the host's `RowsMut`). Thread mapping: one thread per cell of a
/// 2-D launch. Bytes per cell: 8 (the neighbours mostly from cache).
#[kernel]
pub fn safe_stencil_5pt(input: &[f32], mut out: DisjointSlice2d<f32>, k: f32) {
    let cell = ThreadIndex2d::global_2d();
    let (x, y) = (cell.x(), cell.y());
    let (width, height) = (out.width(), out.height());
    let Some(slot) = out.get_mut(cell) else { return };
    // Here x < width and y < height, so no offset below wraps.
    let at = |x: usize, y: usize| input.get(y * width + x).copied().unwrap_or(0.0);
    let centre = at(x, y);
    *slot = if x > 0 && y > 0 && x + 1 < width && y + 1 < height {
        centre + k * (at(x - 1, y) + at(x + 1, y) + at(x, y - 1) + at(x, y + 1) - 4.0 * centre)
    } else {
        centre
    };
}

/// out(x, y) ← the sum of `input`'s 3×3 neighbourhood of (x, y) where it lies inside
/// `input` (`Grid2d::window`, rows top to bottom, each left to right), else `input`'s own
/// cell, else -1 (a cell past `input`, which may be smaller than `out`). Thread mapping: one
/// thread per cell of `out`, any 2-D block shape. Bytes per cell: 4 read (the neighbours hit
/// in cache), 4 written.
#[kernel]
pub fn safe_window_sum(input: Grid2d<f32>, mut out: DisjointSlice2d<f32>) {
    let cell = ThreadIndex2d::global_2d();
    let (x, y) = (cell.x(), cell.y());
    let Some(slot) = out.get_mut(cell) else { return };
    *slot = match input.window::<1>(x, y) {
        Some(w) => {
            let top = w.at::<-1, -1>() + w.at::<0, -1>() + w.at::<1, -1>();
            let middle = w.at::<-1, 0>() + w.centre() + w.at::<1, 0>();
            let bottom = w.at::<-1, 1>() + w.at::<0, 1>() + w.at::<1, 1>();
            top + middle + bottom
        }
        None => input.get(x, y).unwrap_or(-1.0),
    };
}

/// out[i] ← the global 1-D index of the thread that wrote it, in a launch with more threads
/// than elements (the extra threads get `None`, so they write nothing). Thread mapping: one
/// thread per element. Bytes per element: 4.
#[kernel]
pub fn safe_write_index(mut out: DisjointSlice<u64>) {
    let i = ThreadIndex::global_1d();
    let index = i.get() as u64;
    if let Some(slot) = out.get_mut(i) {
        *slot = index;
    }
}

// ---------------------------------------------------------------------------------------------
// Safe kernels that tile: a shared tile, block- and warp-level outputs, a launch contract.

use ptxkit_device::safe::{BlockIndex, BlockSlice, GridSlice, WarpIndex, WarpSlice};
use ptxkit_device::{shared_tile, warp};

/// The sum of `value` over the warp, in every lane (a butterfly of `shfl.sync.bfly`).
#[inline(always)]
fn warp_sum(mut value: f32) -> f32 {
    let mut offset = warp::SIZE / 2;
    while offset > 0 {
        value += warp::shfl_xor(warp::FULL_MASK, value, offset, warp::SIZE);
        offset /= 2;
    }
    value
}

/// sums[b] ← the sum of block b's elements of `x`, safe: each warp sums its 32 values with
/// shuffles, lane 0 of each warp puts the warp's sum in a shared tile (one slot per warp),
/// and after the barrier warp 0 sums the tile and the block's leader writes the block's
/// element (`sums` has one element per block: the launch checks it). Thread mapping: one
/// thread per element, 1-D launch, blocks of a multiple of 32 threads, at most 1024. Bytes per
/// element: 4.
#[kernel(launch_bounds(1024))]
pub fn safe_block_sum(x: &[f32], mut sums: BlockSlice<f32>) {
    let i = ThreadIndex::global_1d();
    let value = warp_sum(x.get(i.get()).copied().unwrap_or(0.0));
    let partials = shared_tile!(safe_block_sum_warps: [f32; 32]).write_per_warp(value).sync();
    if warp::warp_id() == 0 {
        let total = warp_sum(partials.get(warp::lane() as usize).unwrap_or(0.0));
        if let Some(block) = BlockIndex::leader() {
            sums[block] = total;
        }
    }
}

/// sums[w] ← the sum of warp w's 32 elements of `x`, safe: lane 0 of each warp writes the
/// warp's element (`sums` has one element per warp: the launch checks it). Thread mapping:
/// one thread per element, 1-D blocks whose size is a multiple of 32. Bytes per element: 4.
#[kernel]
pub fn safe_warp_sum(x: &[f32], mut sums: WarpSlice<f32>) {
    let i = ThreadIndex::global_1d();
    let total = warp_sum(x.get(i.get()).copied().unwrap_or(0.0));
    if let Some(warp) = WarpIndex::leader() {
        sums[warp] = total;
    }
}

/// out[i] ← the mean of x[i - R ..= i + R] (zero outside `x`), R = 4, safe: each block fills
/// a shared tile with its 256 + 2R inputs (every slot, from the block's threads in turn),
/// then each thread reads its window from the tile. Thread mapping: one thread per element,
/// blocks of 256 threads. Bytes per element: 8.
#[kernel(launch_bounds(256))]
pub fn safe_box_filter(x: &[f32], mut out: DisjointSlice<f32>) {
    const RADIUS: usize = 4;
    const BLOCK: usize = 256;
    let block_start = ptxkit_device::thread::block_idx_x() as usize * BLOCK;
    let window = shared_tile!(safe_box_filter_window: [f32; BLOCK + 2 * RADIUS])
        .fill(|slot| {
            // Slot s holds x[block_start + s - R].
            (block_start + slot).checked_sub(RADIUS).and_then(|at| x.get(at)).copied().unwrap_or(0.0)
        })
        .sync();
    let i = ThreadIndex::global_1d();
    let local = ptxkit_device::thread::thread_idx_x() as usize;
    let mut sum = 0.0;
    for k in 0..=2 * RADIUS {
        sum += window.get(local + k).unwrap_or(0.0);
    }
    if let Some(slot) = out.get_mut(i) {
        *slot = sum / (2 * RADIUS + 1) as f32;
    }
}

/// y ← a·x + y with the launch contract on `y`: the host proved `y` has an element for every
/// thread, so `y[i]` has no bounds check; `x` has no contract, so `x.get(i)` keeps its one.
/// Thread mapping: one thread per element of `y` (1-D launch). Bytes per element: 12.
#[kernel]
pub fn contract_saxpy(x: &[f32], mut y: GridSlice<f32>, a: f32) {
    let i = ThreadIndex::global_1d();
    let xi = x.get(i.get()).copied().unwrap_or(0.0);
    y[i] += a * xi;
}
