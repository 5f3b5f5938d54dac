//! 2. Tiled matrix transpose through shared memory.

use ptxkit_device::{kernel, shared, thread};

/// The tile's side: a block moves a 32×32 tile.
pub const TRANSPOSE_TILE: u32 = 32;
/// Rows of threads per block: 32×8 threads, each moving 4 elements of the tile.
pub const TRANSPOSE_ROWS: u32 = 8;
/// A row of the shared tile: one padding column, so that reading a column of the tile touches
/// 32 different banks.
const PITCH: u32 = TRANSPOSE_TILE + 1;

/// `output` (`width` rows of `height`) = `input` (`height` rows of `width`) transposed.
///
/// Thread mapping: blocks of 32×8 threads, one per 32×32 tile; thread (x, y) reads elements
/// (x, y + 8j) of the tile along rows (coalesced), and after the barrier writes the tile's
/// columns as rows of the output (coalesced again). The 32×33 tile keeps the column reads
/// free of bank conflicts. Bytes per element: 8. Shows: 2-D blocks, typed shared memory.
#[kernel(launch_bounds(256))]
pub unsafe fn transpose_f32(input: *const f32, output: *mut f32, width: u32, height: u32) {
    let tile = shared!(transpose_tile: [f32; (TRANSPOSE_TILE * PITCH) as usize]);
    let (tx, ty) = (thread::thread_idx_x(), thread::thread_idx_y());
    let (bx, by) = (thread::block_idx_x() * TRANSPOSE_TILE, thread::block_idx_y() * TRANSPOSE_TILE);
    let (x, y) = (bx + tx, by + ty);
    let mut j = 0;
    while j < TRANSPOSE_TILE {
        if x < width && y + j < height {
            // SAFETY: (x, y + j) is inside the input; the tile index is below 32·33.
            unsafe {
                tile.store((ty + j) * PITCH + tx, *input.add((y + j) as usize * width as usize + x as usize))
            };
        }
        j += TRANSPOSE_ROWS;
    }
    thread::sync_threads();
    let (x, y) = (by + tx, bx + ty);
    let mut j = 0;
    while j < TRANSPOSE_TILE {
        if x < height && y + j < width {
            // SAFETY: (x, y + j) is inside the output (`width` rows of `height`); the tile
            // element was written before the barrier by the thread that read it.
            unsafe {
                *output.add((y + j) as usize * height as usize + x as usize) = tile.load(tx * PITCH + ty + j)
            };
        }
        j += TRANSPOSE_ROWS;
    }
}
