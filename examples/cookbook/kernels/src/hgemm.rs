//! 10. Half-precision GEMM on the tensor cores: `cp.async` double buffering, `ldmatrix` and
//!     `mma.sync` m16n8k16 (sm_80+).

use ptxkit_device::half::{BF16, F16};
use ptxkit_device::vector::U32x4;
use ptxkit_device::{SharedArray, async_copy, kernel, mma, shared, thread, warp};

/// Threads per block: four warps, two by two over the block's tile.
pub const HGEMM_BLOCK: u32 = 128;
/// The block's tile of C: 64 × 64.
pub const HGEMM_TILE: u32 = 64;
/// The K depth of one stage of A and B in shared memory.
const DEPTH: u32 = 32;
/// A shared row of a stage: 32 halves (4 chunks of 16 bytes) and one chunk of padding, so that
/// the eight 16-byte rows an `ldmatrix` reads at once fall in different banks.
const ROW_CHUNKS: u32 = DEPTH / 8 + 1;
/// The 16-byte chunks of one stage of one operand.
const STAGE_CHUNKS: u32 = HGEMM_TILE * ROW_CHUNKS;

/// Starts copying stage `k0` of a `rows × k` row-major operand (rows `row0..row0 + 64`,
/// columns `k0..k0 + 32`) into `tile`'s stage `stage`: 256 chunks of 16 bytes, two per thread,
/// zero-filled past the operand's rows or depth.
///
/// # Safety
/// `operand` holds `rows × k` halves, `k` a multiple of 8; `tile` holds two stages.
#[inline(always)]
unsafe fn load_stage(
    tile: SharedArray<U32x4>,
    stage: u32,
    operand: *const U32x4,
    rows: u32,
    k: u32,
    row0: u32,
    k0: u32,
) {
    let mut i = 0;
    while i < 2 {
        let chunk = thread::thread_idx_x() + i * HGEMM_BLOCK;
        let (row, column) = (chunk / 4, chunk % 4);
        let (global_row, global_k) = (row0 + row, k0 + column * 8);
        let inside = global_row < rows && global_k < k;
        // Outside: nothing is read (0 valid bytes) and the chunk is zeroed; the address must
        // still be a global one, so the operand's first chunk stands in.
        let offset = if inside { (global_row as usize * k as usize + global_k as usize) / 8 } else { 0 };
        // SAFETY: `offset` is a chunk of the operand (or 0 with nothing read); the shared index
        // is inside the two stages.
        unsafe {
            async_copy::copy_zero_fill(
                tile,
                stage * STAGE_CHUNKS + row * ROW_CHUNKS + column,
                operand.add(offset),
                if inside { 16 } else { 0 },
            )
        };
        i += 1;
    }
}

/// C (`m × n`, f32, row-major) = A (`m × k`, row-major) · Bᵀ (B `n × k`, row-major: the
/// "NT" layout, each of A's rows and B's rows K-contiguous), `k` a multiple of 8.
///
/// Thread mapping: a block of four warps per 64 × 64 tile of C, each warp a 32 × 32 quarter
/// (2 × 4 tiles of m16n8); A's and B's 64 × 32 stages are copied with `cp.async` (16 bytes a
/// thread a copy, zero-filled past the edges) one stage ahead of the tensor cores, read by
/// `ldmatrix` and multiplied by `mma.sync` m16n8k16 into f32 accumulators.
/// Bytes per element of C: (m·k + n·k)·2 / (m·n) · (tiles re-read), f32 store 4. Shows:
/// `async_copy`, `mma::load_matrix_x4`, `mma::mma_m16n8k16_*`; `BF16` selects the bf16 form.
#[inline(always)]
unsafe fn hgemm<const BF16_INPUT: bool>(
    a: *const U32x4,
    b: *const U32x4,
    c: *mut f32,
    m: u32,
    n: u32,
    k: u32,
) {
    let a_tile = shared!(hgemm_a: [U32x4; (2 * STAGE_CHUNKS) as usize]);
    let b_tile = shared!(hgemm_b: [U32x4; (2 * STAGE_CHUNKS) as usize]);
    let (row0, col0) = (thread::block_idx_y() * HGEMM_TILE, thread::block_idx_x() * HGEMM_TILE);
    let (lane, warp) = (warp::lane(), warp::warp_id());
    let (warp_row, warp_col) = ((warp / 2) * 32, (warp % 2) * 32);
    let mut acc = [[[0.0f32; 4]; 4]; 2];
    let stages = k.div_ceil(DEPTH);
    // SAFETY: the operands hold m × k and n × k halves (the launcher's contract).
    unsafe {
        load_stage(a_tile, 0, a, m, k, row0, 0);
        load_stage(b_tile, 0, b, n, k, col0, 0);
    }
    async_copy::commit();
    let mut s = 0;
    while s < stages {
        if s + 1 < stages {
            let next = (s + 1) % 2;
            // SAFETY: as above; the stage overwritten was last read before the previous
            // iteration's closing barrier.
            unsafe {
                load_stage(a_tile, next, a, m, k, row0, (s + 1) * DEPTH);
                load_stage(b_tile, next, b, n, k, col0, (s + 1) * DEPTH);
            }
        }
        // One group per iteration (empty on the last), so that "all but the newest" is this
        // stage's.
        async_copy::commit();
        async_copy::wait::<1>();
        thread::sync_threads();
        let base = (s % 2) * STAGE_CHUNKS;
        let mut kk = 0;
        while kk < DEPTH / 8 {
            // A: lanes 0-7 give rows 0-7 at chunk kk, 8-15 rows 8-15, 16-23 rows 0-7 at kk + 1,
            // 24-31 rows 8-15 at kk + 1 (the four 8×8 matrices of a 16×16 fragment).
            let a_row = lane % 8 + ((lane / 8) % 2) * 8;
            let a_chunk = kk + lane / 16;
            // B (n rows, k contiguous): lanes 0-7 rows 0-7 at kk, 8-15 the same rows at kk + 1,
            // 16-31 rows 8-15 likewise: two n8 fragments.
            let b_row = lane % 8 + (lane / 16) * 8;
            let b_chunk = kk + (lane / 8) % 2;
            let mut fa = [[0u32; 4]; 2];
            let mut fb = [[0u32; 2]; 4];
            let mut i = 0;
            while i < 2 {
                let row = warp_row + i * 16 + a_row;
                // SAFETY: the whole warp runs it; the row and chunk are inside the stage.
                fa[i as usize] = unsafe { mma::load_matrix_x4(a_tile, base + row * ROW_CHUNKS + a_chunk) };
                let row = warp_col + i * 16 + b_row;
                // SAFETY: as above.
                let pair = unsafe { mma::load_matrix_x4(b_tile, base + row * ROW_CHUNKS + b_chunk) };
                fb[2 * i as usize] = [pair[0], pair[1]];
                fb[2 * i as usize + 1] = [pair[2], pair[3]];
                i += 1;
            }
            let mut i = 0;
            while i < 2 {
                let mut j = 0;
                while j < 4 {
                    let (acc_ij, fa_i, fb_j) = (acc[i][j], fa[i], fb[j]);
                    // SAFETY: the whole warp runs it, converged.
                    acc[i][j] = unsafe {
                        if BF16_INPUT {
                            mma::mma_m16n8k16_bf16(fa_i, fb_j, acc_ij)
                        } else {
                            mma::mma_m16n8k16_f16(fa_i, fb_j, acc_ij)
                        }
                    };
                    j += 1;
                }
                i += 1;
            }
            kk += 2;
        }
        thread::sync_threads();
        s += 1;
    }
    let (g, t) = (lane / 4, lane % 4);
    let mut i = 0;
    while i < 2 {
        let mut j = 0;
        while j < 4 {
            let mut h = 0;
            while h < 4 {
                let row = row0 + warp_row + i as u32 * 16 + g + (h / 2) * 8;
                let col = col0 + warp_col + j as u32 * 8 + 2 * t + h % 2;
                if row < m && col < n {
                    // SAFETY: (row, col) is inside C.
                    unsafe { *c.add(row as usize * n as usize + col as usize) = acc[i][j][h as usize] };
                }
                h += 1;
            }
            j += 1;
        }
        i += 1;
    }
}

/// [`hgemm`] with f16 inputs: C = A·Bᵀ, f32 accumulation. Launch: grid (⌈n/64⌉, ⌈m/64⌉),
/// blocks of [`HGEMM_BLOCK`].
#[kernel(launch_bounds(128))]
pub unsafe fn hgemm_f16(a: *const F16, b: *const F16, c: *mut f32, m: u32, n: u32, k: u32) {
    // SAFETY: the launcher's contract (`k` a multiple of 8, the buffers of their sizes).
    unsafe { hgemm::<false>(a.cast(), b.cast(), c, m, n, k) }
}

/// [`hgemm`] with bf16 inputs: C = A·Bᵀ, f32 accumulation. Launch as [`hgemm_f16`].
#[kernel(launch_bounds(128))]
pub unsafe fn hgemm_bf16(a: *const BF16, b: *const BF16, c: *mut f32, m: u32, n: u32, k: u32) {
    // SAFETY: as in `hgemm_f16`.
    unsafe { hgemm::<true>(a.cast(), b.cast(), c, m, n, k) }
}
