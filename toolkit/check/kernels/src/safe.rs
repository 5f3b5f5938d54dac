//! Check kernels: safe kernels (`pub fn`, slices in, `DisjointSlice` out), next to the same
//! work over raw pointers for comparison.

use ptxkit_device::kernel;
use ptxkit_device::safe::{DisjointSlice, DisjointSlice2d, ThreadIndex, ThreadIndex2d};

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
