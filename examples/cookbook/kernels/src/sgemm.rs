//! 5. Tiled single-precision matrix multiply (SGEMM) with register blocking.

use ptxkit_device::unroll;
use ptxkit_device::{kernel, math, memory, shared, thread, vector::F32x4};

/// The tile of C a block computes: 64×64.
pub const SGEMM_TILE: u32 = 64;
/// The depth of one step along k: the block stages a 64×16 panel of A and a 16×64 panel of B.
pub const SGEMM_DEPTH: u32 = 16;
/// Threads per block: 16×16, each computing a 4×4 block of C.
pub const SGEMM_BLOCK: u32 = 256;
/// The register block's side.
const REG: u32 = 4;

/// `c = a · b` for row-major `a` (`m × k`), `b` (`k × n`), `c` (`m × n`), with `m` and `n`
/// multiples of 64 and `k` a multiple of 16 (the host checks).
///
/// Thread mapping: a 2-D grid of blocks of 256 threads, block (x, y) computing the 64×64 tile
/// of C at rows 64y, columns 64x; thread t computes rows `4·(t/16)..+4` and columns
/// `4·(t%16)..+4` of the tile in 16 registers. Per step of 16 along k every thread loads one
/// `F32x4` of A (stored transposed into shared memory) and one of B, then after a barrier
/// runs 16 rank-1 updates, each two `F32x4` shared loads and 16 FMAs, unrolled. Bytes per
/// FLOP: 1/16 from global memory (each element of a panel serves 64 FMAs of the block). Shows:
/// vector loads (`memory::load_vector`, `SharedArray::load4`/`store4`), `math::fmaf`,
/// `unroll!`, register blocking.
#[kernel(launch_bounds(256))]
pub unsafe fn sgemm_64x64(a: *const f32, b: *const f32, c: *mut f32, m: u32, n: u32, k: u32) {
    // a_panel[kk][row] (A transposed) and b_panel[kk][col], 16×64 each.
    let a_panel = shared!(sgemm_a_panel: [f32; (SGEMM_DEPTH * SGEMM_TILE) as usize]);
    let b_panel = shared!(sgemm_b_panel: [f32; (SGEMM_DEPTH * SGEMM_TILE) as usize]);
    let t = thread::thread_idx_x();
    let (tx, ty) = (t % 16, t / 16);
    let (row0, col0) = (thread::block_idx_y() * SGEMM_TILE, thread::block_idx_x() * SGEMM_TILE);
    let (a_row, a_col) = (t / 4, (t % 4) * 4);
    let (b_row, b_col) = (t / 16, (t % 16) * 4);
    if row0 >= m {
        // Never under the host's contract (the grid covers m exactly); keeps the twin's shape.
        return;
    }
    let mut acc = [[0.0f32; REG as usize]; REG as usize];
    let mut k0 = 0;
    while k0 < k {
        // SAFETY: m, n multiples of 64 and k of 16 (the host's contract) put every panel
        // element inside A and B, 16-byte aligned (k and n are multiples of 4).
        let (av, bv) = unsafe {
            let a_at = a.add((row0 + a_row) as usize * k as usize + (k0 + a_col) as usize);
            let b_at = b.add((k0 + b_row) as usize * n as usize + (col0 + b_col) as usize);
            (memory::load_vector(a_at as *const F32x4), memory::load_vector(b_at as *const F32x4))
        };
        let av = av.to_array();
        unroll!(for i in 0..4 {
            // SAFETY: (a_col + i) < 16 and a_row < 64: inside the panel.
            unsafe { a_panel.store((a_col + i) * SGEMM_TILE + a_row, av[i as usize]) };
        });
        // SAFETY: b_row < 16, b_col + 3 < 64, 16-byte aligned (b_col a multiple of 4).
        unsafe { b_panel.store4(b_row * SGEMM_TILE + b_col, bv) };
        thread::sync_threads();
        unroll!(for kk in 0..16 {
            // SAFETY: kk < 16, ty·4 + 3 < 64, tx·4 + 3 < 64, aligned to 4 elements; written
            // before the barrier.
            let (ar, br) = unsafe {
                (
                    a_panel.load4(kk * SGEMM_TILE + ty * REG).to_array(),
                    b_panel.load4(kk * SGEMM_TILE + tx * REG).to_array(),
                )
            };
            unroll!(for i in 0..4 {
                unroll!(for j in 0..4 {
                    acc[i][j] = math::fmaf(ar[i], br[j], acc[i][j]);
                });
            });
        });
        // The next step's stores must wait until every thread has read the panels.
        thread::sync_threads();
        k0 += SGEMM_DEPTH;
    }
    unroll!(for i in 0..4 {
        let at = (row0 + ty * REG + i) as usize * n as usize + (col0 + tx * REG) as usize;
        // SAFETY: inside C (m, n multiples of 64), 16-byte aligned; each element of C is
        // written by one thread.
        unsafe { memory::store_vector(c.add(at) as *mut F32x4, F32x4::from_array(acc[i as usize])) };
    });
}
