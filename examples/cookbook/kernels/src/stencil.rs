//! 8b. A 2-D stencil (one Jacobi sweep, 5 points), safe and as an `unsafe` raw-pointer twin.

use ptxkit_device::{
    kernel, safe::DisjointSlice2d, safe::Grid2d, safe::ThreadIndex2d, shared, shared_tile, thread,
};

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
/// the four neighbours of its cell in `input`; boundary cells are copied. `input` and `output`
/// are grids of the same width and height (the launcher passes both from one width; a cell
/// the input lacks reads as 0).
///
/// Thread mapping: one thread per cell of a 2-D launch, blocks of 32×8. Bytes per cell: 8
/// (one read, the neighbours hit in cache; one write). Shows: a safe 2-D `#[kernel]`:
/// `DisjointSlice2d` gives each thread its own cell; `input` is a [`Grid2d`] read through
/// `window::<1>`, one check (32-bit compares, one predicate) for the four neighbours, which
/// is also the interior test (a check per read cost 14% on an H200); a boundary cell reads
/// its own value with `get`.
#[kernel(launch_bounds(256))]
pub fn jacobi_5pt(input: Grid2d<f32>, mut output: DisjointSlice2d<f32>) {
    let index = ThreadIndex2d::global_2d();
    let (x, y) = (index.x(), index.y());
    if let Some(out) = output.get_mut(index) {
        *out = match input.window::<1>(x, y) {
            Some(w) => mean_of_neighbours(w.at::<-1, 0>(), w.at::<1, 0>(), w.at::<0, -1>(), w.at::<0, 1>()),
            None => input.get(x, y).unwrap_or(0.0),
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

// ---- 8c. the tiled stencil: a 2-D tile plus halo in shared memory ---------------------------

/// The tiled stencil's block: 32×8 threads, one per cell of a 32×8 tile of the grid (the
/// kernels place the tile by this constant: launch them with blocks of exactly this shape).
pub const TILED_BLOCK: (u32, u32) = (32, 8);
/// The tiled stencil's shared tile: the block's 32×8 cells and a halo of one cell on each
/// side, 34×10.
pub const TILED_TILE: (u32, u32) = (TILED_BLOCK.0 + 2, TILED_BLOCK.1 + 2);
/// Slots of the shared tile, row-major (34 a row).
const TILE_SLOTS: usize = (TILED_TILE.0 * TILED_TILE.1) as usize;
const TILE_WIDTH: usize = TILED_TILE.0 as usize;

/// [`jacobi_5pt`]'s sweep through a shared tile, safe: each block of 32×8 threads stages its
/// 32×8 cells and a one-cell halo (34×10 values) in a [`SharedTile`](ptxkit_device::safe::SharedTile)
/// (`shared_tile!`, flattened row-major: the tile is 1-D), waits at the barrier, and then
/// every thread reads its cell and four neighbours from shared memory: no global read after
/// the barrier. Same results as [`jacobi_5pt`], bit for bit.
///
/// Thread mapping: one thread per cell of a 2-D launch, blocks of exactly 32×8, the kernel's
/// block-shape contract (`#[kernel(block(32, 8))]`: the typed launch refuses any other shape,
/// and the compiler knows `blockDim` and `threadIdx < (32, 8)`). The tile's corner is
/// `blockIdx · (32, 8)` − (1, 1). The fill: slot *s* of the tile by the block's thread *s* and
/// *s* + 256 (340 slots; the stride a constant, as in the raw twin). Bytes per cell: 8 from
/// DRAM (one read, one write); 340/256 = 1.33 reads a cell from L2 (the halo), against about
/// 5 L1 reads a cell for [`jacobi_5pt`].
/// Shows: a safe tiled kernel (`shared_tile!(..).fill(..).sync()`, `TileView::at`), the
/// tile's reads proven in bounds by the compiler (the thread's place in the tile is below
/// (32, 8) by the contract, so no check is emitted for them), the input a [`Grid2d`] read
/// with `get(x, y).unwrap_or(0.0)` (x < width and y < height in 32 bits, the raw twin's own
/// test; a select, no branch), the output a [`DisjointSlice2d`] (its check, x < width and
/// y < height, is the raw twin's own edge test).
///
/// What the safe API lacks for this kernel (so the output is not a launch contract): a
/// contract output is 1-D ([`GridSlice`](ptxkit_device::safe::GridSlice): thread *i* owns
/// element *i* of a 1-D launch), so a block owns a run of consecutive cells, never a 2-D
/// tile; a 2-D contract (a row-major output whose width and height the launch covers,
/// indexed by [`ThreadIndex2d`] with no compare) and a 2-D tile (`SharedTile` of W×H with
/// `at(x, y)`) would let it drop the output's compare and the flattening.
#[kernel(block(32, 8))]
pub fn jacobi_5pt_tiled(input: Grid2d<f32>, mut output: DisjointSlice2d<f32>) {
    let (width, height) = (output.width(), output.height());
    // The tile's corner is one cell up and left of the block's first cell (wrapping to
    // u32::MAX at the grid's edge, outside the grid like any cell past it: a grid's sides
    // are below 2³²).
    let x0 = thread::block_idx_x().wrapping_mul(TILED_BLOCK.0);
    let y0 = thread::block_idx_y().wrapping_mul(TILED_BLOCK.1);
    let tile = shared_tile!(jacobi_tiled_cells: [f32; TILE_SLOTS])
        .fill(|slot| {
            // A slot outside the grid (gx or gy past the edge, or -1 wrapped) holds 0: only an
            // interior cell reads its neighbours, and they are all inside the grid.
            let gx = x0.wrapping_add(slot as u32 % TILED_TILE.0).wrapping_sub(1);
            let gy = y0.wrapping_add(slot as u32 / TILED_TILE.0).wrapping_sub(1);
            input.get(gx as usize, gy as usize).unwrap_or(0.0)
        })
        .sync();
    let index = ThreadIndex2d::global_2d();
    let (x, y) = (index.x(), index.y());
    // This thread's slot: (tx + 1, ty + 1) in the tile, tx < 32 and ty < 8 by the block-shape
    // contract, so every read below is inside the 340 slots (no check emitted).
    let tx = thread::thread_idx_x() as usize;
    let ty = thread::thread_idx_y() as usize;
    let at = (ty + 1) * TILE_WIDTH + tx + 1;
    let centre = tile.at(at);
    let value = if x == 0 || y == 0 || x + 1 >= width || y + 1 >= height {
        centre
    } else {
        mean_of_neighbours(
            tile.at(at - 1),
            tile.at(at + 1),
            tile.at(at - TILE_WIDTH),
            tile.at(at + TILE_WIDTH),
        )
    };
    if let Some(out) = output.get_mut(index) {
        *out = value;
    }
}

/// [`jacobi_5pt_tiled`] on raw pointers and a `shared!` array, as CUDA C writes it (its twin
/// `jacobi_5pt_tiled` in `cuda/jacobi.cu` is line for line the same).
///
/// Thread mapping and bytes per cell as [`jacobi_5pt_tiled`] (blocks of exactly 32×8: the
/// fill's stride is the constant 256).
#[kernel(launch_bounds(256))]
pub unsafe fn jacobi_5pt_tiled_raw(input: *const f32, output: *mut f32, width: u32, height: u32) {
    let tile = shared!(jacobi_tiled_raw_cells: [f32; TILE_SLOTS]);
    let (tx, ty) = (thread::thread_idx_x(), thread::thread_idx_y());
    let x0 = thread::block_idx_x() * TILED_BLOCK.0;
    let y0 = thread::block_idx_y() * TILED_BLOCK.1;
    let threads = TILED_BLOCK.0 * TILED_BLOCK.1;
    let mut slot = ty * TILED_BLOCK.0 + tx;
    while (slot as usize) < TILE_SLOTS {
        let gx = (x0 + slot % TILE_WIDTH as u32).wrapping_sub(1);
        let gy = (y0 + slot / TILE_WIDTH as u32).wrapping_sub(1);
        // SAFETY: (gx, gy) is inside the grid of `width × height` cells the host passes.
        let value = if gx < width && gy < height {
            unsafe { *input.add(gy as usize * width as usize + gx as usize) }
        } else {
            0.0
        };
        // SAFETY: slot < 340, the array's length.
        unsafe { tile.store(slot, value) };
        slot += threads;
    }
    thread::sync_threads();
    let (x, y) = (x0 + tx, y0 + ty);
    if x >= width || y >= height {
        return;
    }
    let at = (ty + 1) * TILE_WIDTH as u32 + tx + 1;
    // SAFETY: tx < 32 and ty < 8 (the launch's blocks), so every slot read is below 340; all
    // were written before the barrier.
    let value = unsafe {
        let centre = tile.load(at);
        if x == 0 || y == 0 || x + 1 == width || y + 1 == height {
            centre
        } else {
            let w = TILE_WIDTH as u32;
            mean_of_neighbours(tile.load(at - 1), tile.load(at + 1), tile.load(at - w), tile.load(at + w))
        }
    };
    // SAFETY: (x, y) is inside the grid; each cell is written by one thread.
    unsafe { *output.add(y as usize * width as usize + x as usize) = value };
}
