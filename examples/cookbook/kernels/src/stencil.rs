//! 8b. A 2-D stencil (one Jacobi sweep, 5 points), safe and as an `unsafe` raw-pointer twin.

use ptxkit_device::{kernel, safe::DisjointSlice2d, safe::ThreadIndex2d, thread};

/// The stencil kernels' block: 32×8 threads.
pub const STENCIL_BLOCK: (u32, u32) = (32, 8);

/// The new value of the cell at `i` (x, y) of a `width × height` grid read through `at`: the
/// mean of its four neighbours inside, itself on the boundary. Shared by both kernels (and
/// the same expression as the CPU reference's).
#[inline(always)]
fn jacobi_cell(at: impl Fn(usize) -> f32, i: usize, x: usize, y: usize, width: usize, height: usize) -> f32 {
    if x == 0 || y == 0 || x + 1 == width || y + 1 == height {
        at(i)
    } else {
        mean_of_neighbours(at(i - 1), at(i + 1), at(i - width), at(i + width))
    }
}

/// An interior cell's new value from its left, right, upper and lower neighbours.
#[inline(always)]
fn mean_of_neighbours(left: f32, right: f32, up: f32, down: f32) -> f32 {
    0.25 * ((left + right) + (up + down))
}

/// One Jacobi sweep of Laplace's equation: each interior cell of `output` becomes the mean of
/// the four neighbours of its cell in `input`; boundary cells are copied. The grid's width and
/// height are `output`'s (`input` must hold as many cells, row-major).
///
/// Thread mapping: one thread per cell of a 2-D launch, blocks of 32×8. Bytes per cell: 8
/// (one read, the neighbours hit in cache; one write). Shows: a safe 2-D `#[kernel]`:
/// `DisjointSlice2d` gives each thread its own cell; the reads of `input` are bounds-checked
/// once per cell, for its whole window (a check per read cost 14% on an H200).
#[kernel(launch_bounds(256))]
pub fn jacobi_5pt(input: &[f32], mut output: DisjointSlice2d<f32>) {
    let index = ThreadIndex2d::global_2d();
    let (x, y) = (index.x(), index.y());
    let (width, height) = (output.width(), output.height());
    if let Some(out) = output.get_mut(index) {
        *out = if x == 0 || y == 0 || x + 1 >= width || y + 1 >= height {
            input[y * width + x]
        } else if let Some(rows) = input.get((y - 1) * width..(y - 1) * width + 3 * width) {
            // One bounds check for the cell's three rows; split into rows of `width` cells,
            // and with 0 < x < width − 1 every read below is provably inside its row, so the
            // compiler drops their checks (a check per read cost 14% on an H200).
            let (up, rest) = rows.split_at(width);
            let (row, down) = rest.split_at(width);
            mean_of_neighbours(row[x - 1], row[x + 1], up[x], down[x])
        } else {
            // `input` is shorter than the output: the host's mistake, reported as a bounds
            // failure.
            input[input.len()]
        };
    }
}

/// [`jacobi_5pt`] on raw pointers, as CUDA C writes it.
///
/// Thread mapping and bytes per cell as [`jacobi_5pt`].
#[kernel(launch_bounds(256))]
pub unsafe fn jacobi_5pt_raw(input: *const f32, output: *mut f32, width: u32, height: u32) {
    let (x, y) = thread::index_2d();
    if x >= width || y >= height {
        return;
    }
    let (x, y, width, height) = (x as usize, y as usize, width as usize, height as usize);
    let i = y * width + x;
    // SAFETY: the host passes two buffers of `width × height` cells; (x, y) is inside, and
    // so are the neighbours `jacobi_cell` reads for an interior cell.
    let value = jacobi_cell(|j| unsafe { *input.add(j) }, i, x, y, width, height);
    // SAFETY: as above; each cell is written by one thread.
    unsafe { *output.add(i) = value };
}
