//! 17. A 3-D 7-point stencil (sm_90a, the Hopper module), its tiles staged through TMA.
//!
//! Each block's tile, halo included, arrives by one 3-D TMA copy: the zeros TMA fills in outside
//! the array are the boundary.

use ptxkit_device::mbarrier::{self, Mbarrier};
use ptxkit_device::tma::{self, TensorMap};
use ptxkit_device::{kernel, shared, thread, tma_shared};

/// The output tile of one block of [`tma_stencil_7pt`] along x (a warp's row of threads).
pub const STENCIL3D_TILE_X: u32 = 32;
/// The output tile along y (the block's rows of threads).
pub const STENCIL3D_TILE_Y: u32 = 8;
/// The output tile along z (the planes each thread walks).
pub const STENCIL3D_TILE_Z: u32 = 8;
/// The TMA box along x: the tile and a halo of four cells each side, 40. TMA needs the box's
/// innermost start coordinate at a multiple of 16 bytes (four floats; a start at x0 − 1 is
/// an illegal instruction on an H100) and its rows a multiple of 16 bytes; only the cells
/// next to the tile (columns 3 and 36) of the halos are used.
pub const STENCIL3D_BOX_X: u32 = 40;
/// The halo along x: the box starts this many cells before the tile.
const HALO_X: u32 = 4;
/// The TMA box along y: the tile and its halo.
pub const STENCIL3D_BOX_Y: u32 = STENCIL3D_TILE_Y + 2;
/// The TMA box along z: the tile and its halo.
pub const STENCIL3D_BOX_Z: u32 = STENCIL3D_TILE_Z + 2;
/// Elements of the box (the shared tile).
const BOX: u32 = STENCIL3D_BOX_X * STENCIL3D_BOX_Y * STENCIL3D_BOX_Z;
/// The Jacobi weight: the mean of six neighbours (`1/6` rounded to `f32`).
const SIXTH: f32 = 1.0 / 6.0;

/// One Jacobi step of Laplace's equation on an `nx × ny × nz` grid (x innermost), zero
/// outside the grid: `output = (1/6)·(((west + east) + (south + north)) + (below + above))`
/// for every cell, the neighbours past the grid's faces 0 (the order `cpu::jacobi_7pt` uses,
/// so equal bit for bit).
///
/// Thread mapping: blocks of 32 × 8 threads, one per 32 × 8 × 8 tile of the output (grid
/// ⌈nx/32⌉ × ⌈ny/8⌉ × ⌈nz/8⌉). Thread 0 loads the tile and its one-cell halo, a box of
/// 40 × 10 × 10 starting at (x0 − 4, y0 − 1, z0 − 1), with one `cp.async.bulk.tensor.3d`
/// completing on an `mbarrier` (TMA writes zeros for the cells outside the grid: the boundary
/// rule); then each thread computes its (x, y) column's 8 cells from shared memory and stores
/// them with plain (coalesced) stores. `input`'s map: dims (nx, ny, nz), box 40 × 10 × 10.
/// Bytes per cell: 8 (the halos come from L2). Shows: a 3-D `tma::load_tile`,
/// `Mbarrier::arrive_expect_tx`/`wait_parity`, `tma_shared!`.
#[kernel(launch_bounds(256))]
pub unsafe fn tma_stencil_7pt(input: *const TensorMap<f32>, output: *mut f32, nx: u32, ny: u32, nz: u32) {
    let tile = tma_shared!(tma_stencil_tile: [f32; BOX as usize]);
    let full = Mbarrier::at(shared!(tma_stencil_full: [u64; 1]), 0);
    let (tx, ty) = (thread::thread_idx_x(), thread::thread_idx_y());
    let x0 = thread::block_idx_x() * STENCIL3D_TILE_X;
    let y0 = thread::block_idx_y() * STENCIL3D_TILE_Y;
    let z0 = thread::block_idx_z() * STENCIL3D_TILE_Z;
    let leader = tx == 0 && ty == 0;
    if leader {
        // SAFETY: one thread initialises the barrier before anyone uses it (fence, barrier).
        unsafe { full.init(1) };
        mbarrier::fence_init();
    }
    thread::sync_threads();
    if leader {
        // SAFETY: the map is the launcher's (in global memory, rank 3, boxes of 40 × 10 × 10
        // f32, which fill the tile); the phase expects the box's bytes, zeros included.
        unsafe {
            tma::acquire_tensor_map(input);
            full.arrive_expect_tx(BOX * 4);
            let corner = [x0 as i32 - HALO_X as i32, y0 as i32 - 1, z0 as i32 - 1];
            tma::load_tile(tile, 0, input, corner, full);
        }
    }
    // SAFETY: phase 0 completes once the leader arrived and the box landed.
    unsafe { full.wait_parity(0) };
    let (x, y) = (x0 + tx, y0 + ty);
    if x >= nx || y >= ny {
        return;
    }
    // The box index of this thread's cell in plane `lz` of the box: (lz, ty + 1, tx + 1).
    let row = STENCIL3D_BOX_X;
    let plane = STENCIL3D_BOX_X * STENCIL3D_BOX_Y;
    let mut at = plane + (ty + 1) * row + tx + HALO_X;
    let mut out = (z0 as usize * ny as usize + y as usize) * nx as usize + x as usize;
    let plane_out = ny as usize * nx as usize;
    let mut z = z0;
    while z < nz && z < z0 + STENCIL3D_TILE_Z {
        // SAFETY: every index is inside the box (`at` is an inner cell, `tx + 1 ≤ 32`,
        // `ty + 1 ≤ 8`, planes 1 to 8), written by the completed copy; `out` is cell
        // (x, y, z) of the nx × ny × nz output.
        unsafe {
            let (west, east) = (tile.load(at - 1), tile.load(at + 1));
            let (south, north) = (tile.load(at - row), tile.load(at + row));
            let (below, above) = (tile.load(at - plane), tile.load(at + plane));
            *output.add(out) = SIXTH * (((west + east) + (south + north)) + (below + above));
        }
        at += plane;
        out += plane_out;
        z += 1;
    }
}
