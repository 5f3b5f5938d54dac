//! 11-14. Hopper (sm_90a) kernels: TMA tensor and bulk copies completing on an `mbarrier`, a
//! histogram over a thread-block cluster's distributed shared memory, and a GEMM on `wgmma`.
//! Built for `sm_90a` only (the `hopper` feature; `../build.rs` builds it as its own PTX
//! module).

use ptxkit_device::half::BF16;
use ptxkit_device::mbarrier::{self, Mbarrier};
use ptxkit_device::tma::{self, TensorMap};
use ptxkit_device::vector::U32x4;
use ptxkit_device::wgmma::{self, SharedDescriptor};
use ptxkit_device::{async_copy, atomic, cluster, kernel, mma, shared, thread, tma_shared, unroll, warp};

/// The TMA transpose's tile side: a block moves a 32 × 32 box.
pub const TMA_TILE: u32 = 32;
/// Threads per block of the TMA kernels.
pub const TMA_BLOCK: u32 = 256;
/// Elements one block of [`bulk_scale_f32`] moves.
pub const BULK_CHUNK: u32 = 2048;
/// Blocks per cluster of [`cluster_histogram_1024`].
pub const HISTOGRAM_CLUSTER: u32 = 4;
/// Bins of [`cluster_histogram_1024`]: 256 in each block of the cluster.
pub const CLUSTER_BINS: u32 = 1024;
/// The tile of C one block of [`wgmma_gemm_bf16`] computes: 64 × 64.
pub const WGMMA_TILE: u32 = 64;
/// Threads per block of [`wgmma_gemm_bf16`]: one warpgroup.
pub const WGMMA_BLOCK: u32 = 128;
/// The K depth of one stage of [`wgmma_gemm_bf16`].
const WGMMA_DEPTH: u32 = 64;
/// Bytes between core matrices (8 rows × 16 bytes) next to each other along K in a stage.
const WGMMA_LEADING: u32 = 128;
/// Bytes between core matrices next to each other along M (or N): the 8 of a row group's K.
const WGMMA_STRIDE: u32 = 1024;

/// `output` (`width` rows of `height`) = `input` (`height` rows of `width`) transposed, both
/// through TMA: each block's thread 0 loads a 32 × 32 box with `cp.async.bulk.tensor.2d`
/// (zeros past the edges) completing on an `mbarrier`, the block transposes it in shared
/// memory, and thread 0 stores the transposed box with one `cp.async.bulk.tensor.2d` store
/// (the parts past the output's edges left out).
///
/// Thread mapping: blocks of 256 threads, one per 32 × 32 tile (grid ⌈width/32⌉ × ⌈height/32⌉);
/// each thread moves 4 elements in shared memory. Bytes per element: 8. Maps: `input` of
/// dims (width, height), `output` of dims (height, width), boxes 32 × 32. Shows: `tma`,
/// `mbarrier`, `tma_shared!`.
#[kernel(launch_bounds(256))]
pub unsafe fn tma_transpose_f32(input: *const TensorMap<f32>, output: *const TensorMap<f32>) {
    let tile_in = tma_shared!(tma_transpose_in: [f32; (TMA_TILE * TMA_TILE) as usize]);
    let tile_out = tma_shared!(tma_transpose_out: [f32; (TMA_TILE * TMA_TILE) as usize]);
    let full = Mbarrier::at(shared!(tma_transpose_full: [u64; 1]), 0);
    let tid = thread::linear_idx();
    let (x0, y0) = (thread::block_idx_x() * TMA_TILE, thread::block_idx_y() * TMA_TILE);
    if tid == 0 {
        // SAFETY: one thread initialises the barrier before anyone uses it (fence, barrier).
        unsafe { full.init(1) };
        mbarrier::fence_init();
    }
    thread::sync_threads();
    if tid == 0 {
        // SAFETY: the maps are the launcher's (in global memory, rank 2, 32 × 32 boxes of f32);
        // the phase expects the box's 4096 bytes, which the copy delivers.
        unsafe {
            tma::acquire_tensor_map(input);
            tma::acquire_tensor_map(output);
            full.arrive_expect_tx(TMA_TILE * TMA_TILE * 4);
            tma::load_tile(tile_in, 0, input, [x0 as i32, y0 as i32], full);
        }
    }
    // SAFETY: phase 0 completes once thread 0 arrived and the box landed.
    unsafe { full.wait_parity(0) };
    let mut i = tid;
    while i < TMA_TILE * TMA_TILE {
        let (x, y) = (i % TMA_TILE, i / TMA_TILE);
        // SAFETY: both indices are below 32 · 32; the box was written by the completed copy.
        unsafe { tile_out.store(x * TMA_TILE + y, tile_in.load(y * TMA_TILE + x)) };
        i += TMA_BLOCK;
    }
    tma::fence_async_shared();
    thread::sync_threads();
    if tid == 0 {
        // SAFETY: the transposed box was written (fences, barrier) and stays until the wait.
        unsafe { tma::store_tile(output, [y0 as i32, x0 as i32], tile_out, 0) };
        tma::commit_bulk();
        tma::wait_bulk_read::<0>();
    }
}

/// `y = a·x` through 1-D bulk copies: each block's thread 0 loads a chunk of 2048 elements
/// with one `cp.async.bulk` (completing on an `mbarrier`), the block scales it in shared
/// memory, and thread 0 stores it with one bulk store; the last chunk's elements past a
/// multiple of 4 (16 bytes) go by plain loads and stores.
///
/// Thread mapping: blocks of 256 threads, one per 2048-element chunk. Bytes per element: 8.
/// Shows: `tma::load_bulk`, `tma::store_bulk`, `Mbarrier::arrive_expect_tx`.
#[kernel(launch_bounds(256))]
pub unsafe fn bulk_scale_f32(x: *const f32, y: *mut f32, n: u32, a: f32) {
    let chunk_buffer = tma_shared!(bulk_scale_chunk: [f32; BULK_CHUNK as usize]);
    let full = Mbarrier::at(shared!(bulk_scale_full: [u64; 1]), 0);
    let tid = thread::thread_idx_x();
    let base = thread::block_idx_x() * BULK_CHUNK;
    let chunk = (n - base).min(BULK_CHUNK);
    let bulk = chunk & !3;
    if tid == 0 {
        // SAFETY: as in `tma_transpose_f32`.
        unsafe { full.init(1) };
        mbarrier::fence_init();
    }
    thread::sync_threads();
    if tid == 0 {
        // SAFETY: x[base..base + bulk] is inside x (`base < n`), 16-byte aligned (base is a
        // multiple of 2048 elements) and a multiple of 16 bytes; the phase expects them.
        unsafe {
            if bulk > 0 {
                full.arrive_expect_tx(bulk * 4);
                tma::load_bulk(chunk_buffer, 0, x.add(base as usize), bulk, full);
            } else {
                full.arrive();
            }
        }
    }
    // SAFETY: phase 0 completes once thread 0 arrived and the bytes landed.
    unsafe { full.wait_parity(0) };
    let mut i = tid;
    while i < bulk {
        // SAFETY: i < bulk ≤ 2048, written by the completed copy.
        unsafe { chunk_buffer.store(i, a * chunk_buffer.load(i)) };
        i += TMA_BLOCK;
    }
    let mut i = bulk + tid;
    while i < chunk {
        // SAFETY: base + i < n.
        unsafe { *y.add((base + i) as usize) = a * *x.add((base + i) as usize) };
        i += TMA_BLOCK;
    }
    tma::fence_async_shared();
    thread::sync_threads();
    if tid == 0 && bulk > 0 {
        // SAFETY: as for the load, on y; the scaled chunk stays until the wait.
        unsafe { tma::store_bulk(y.add(base as usize), chunk_buffer, 0, bulk) };
        tma::commit_bulk();
        tma::wait_bulk_read::<0>();
    }
}

/// `bins[v % 1024] += 1` for every `v` of `values`, the 1024 bins of each cluster of 4 blocks
/// spread over the blocks' shared memory (256 each): every thread adds to the owning block's
/// bin with `atom.shared::cluster.add` (distributed shared memory), then each block adds its
/// 256 bins to the global ones.
///
/// Thread mapping: blocks of 256 threads in clusters of [`HISTOGRAM_CLUSTER`], a grid-stride
/// loop over `values`. Bytes per element: 4. Shows: `cluster::map_shared_rank`,
/// `cluster::sync`, `cluster::block_rank`; launched with `Gpu::launch_cluster`.
#[kernel(launch_bounds(256))]
pub unsafe fn cluster_histogram_1024(values: *const u32, n: u32, bins: *mut u32) {
    let local = shared!(cluster_histogram_bins: [u32; 256]);
    let tid = thread::thread_idx_x();
    // SAFETY: tid < 256.
    unsafe { local.store(tid, 0) };
    // Every block's bins are zeroed before any block adds to them.
    cluster::sync();
    let stride = thread::grid_size_1d();
    let mut i = thread::index_1d();
    while i < n {
        // SAFETY: i < n.
        let bin = unsafe { *values.add(i as usize) } % CLUSTER_BINS;
        let owner = cluster::map_shared_rank(local, bin / 256);
        // SAFETY: the owner is a block of this cluster (bin / 256 < 4 = the cluster's size),
        // which waits at the closing cluster barrier before it exits; the index is below 256.
        unsafe { owner.fetch_add(bin % 256, 1) };
        i += stride;
    }
    // Every add into this block's bins is done.
    cluster::sync();
    // SAFETY: tid < 256; the bin was zeroed and added to before the barrier.
    let count = unsafe { local.load(tid) };
    if count > 0 {
        // SAFETY: rank · 256 + tid < 1024 = the bins' length.
        unsafe { atomic::add(bins.add((cluster::block_rank() * 256 + tid) as usize), count) };
    }
}

/// Starts copying stage `k0` of a `rows × k` row-major bf16 operand (rows `row0..row0 + 64`,
/// columns `k0..k0 + 64`) into `tile` in `wgmma`'s K-major core-matrix layout (element
/// (r, k) at byte `(r / 8)·1024 + (k / 8)·128 + (r % 8)·16 + (k % 8)·2`): 512 chunks of 16 bytes,
/// four per thread, zero-filled past the operand's rows or depth.
///
/// # Safety
/// `operand` holds `rows × k` halves, `k` a multiple of 8; `tile` holds 512 chunks.
#[inline(always)]
unsafe fn load_wgmma_stage(
    tile: ptxkit_device::SharedArray<U32x4>,
    operand: *const U32x4,
    rows: u32,
    k: u32,
    row0: u32,
    k0: u32,
) {
    let mut i = 0;
    while i < 4 {
        let chunk = thread::thread_idx_x() + i * WGMMA_BLOCK;
        let (row, column) = (chunk / 8, chunk % 8);
        let (global_row, global_k) = (row0 + row, k0 + column * 8);
        let inside = global_row < rows && global_k < k;
        let offset = if inside { (global_row as usize * k as usize + global_k as usize) / 8 } else { 0 };
        let slot = (row / 8) * (WGMMA_STRIDE / 16) + column * (WGMMA_LEADING / 16) + row % 8;
        // SAFETY: `offset` is a chunk of the operand (or 0 with nothing read); `slot` < 512.
        unsafe { async_copy::copy_zero_fill(tile, slot, operand.add(offset), if inside { 16 } else { 0 }) };
        i += 1;
    }
}

/// The body of [`wgmma_gemm_bf16`] and [`wgmma_gemm_rs_bf16`]: A's fragments read by `wgmma`
/// from shared memory through a descriptor, or (`REGISTER_A`) loaded into registers by
/// `ldmatrix` first.
///
/// # Safety
/// As [`wgmma_gemm_bf16`].
#[inline(always)]
unsafe fn wgmma_gemm<const REGISTER_A: bool>(
    a: *const BF16,
    b: *const BF16,
    c: *mut f32,
    m: u32,
    n: u32,
    k: u32,
) {
    let a_tile = tma_shared!(wgmma_a: [U32x4; 512]);
    let b_tile = tma_shared!(wgmma_b: [U32x4; 512]);
    let (row0, col0) = (thread::block_idx_y() * WGMMA_TILE, thread::block_idx_x() * WGMMA_TILE);
    let (a, b) = (a.cast::<U32x4>(), b.cast::<U32x4>());
    let mut acc = [0.0f32; 32];
    let mut k0 = 0;
    while k0 < k {
        // SAFETY: the operands hold m × k and n × k halves (the launcher's contract); the tiles
        // were last read by the products waited for before the previous barrier.
        unsafe {
            load_wgmma_stage(a_tile, a, m, k, row0, k0);
            load_wgmma_stage(b_tile, b, n, k, col0, k0);
        }
        async_copy::commit();
        async_copy::wait::<0>();
        // The copies wrote through the generic proxy; the products read through the async one.
        tma::fence_async_shared();
        thread::sync_threads();
        if REGISTER_A {
            // Each warp's 16 rows of A, the four k16 steps' fragments, by `ldmatrix` from the
            // core-matrix layout (lane l: row l % 8 of matrix l / 8: rows +8 for matrices 1
            // and 3, the next core matrix along K for 2 and 3).
            let (lane, warp) = (warp::lane(), warp::warp_id());
            let row = warp * 16 + lane % 8 + ((lane / 8) % 2) * 8;
            let mut fragments = [[0u32; 4]; 4];
            unroll!(for kk in 0..4 {
                let chunk = (row / 8) * (WGMMA_STRIDE / 16)
                    + (kk as u32 * 2 + lane / 16) * (WGMMA_LEADING / 16)
                    + row % 8;
                // SAFETY: the whole warp runs it; the chunk is inside the written tile.
                fragments[kk] = unsafe { mma::load_matrix_x4(a_tile, chunk) };
            });
            wgmma::fence();
            unroll!(for kk in 0..4 {
                let step = kk as u32 * 2 * WGMMA_LEADING;
                let db =
                    SharedDescriptor::k_major(b_tile.shared_address() + step, WGMMA_LEADING, WGMMA_STRIDE);
                // SAFETY: the whole warpgroup runs it; B's tile was written, fenced and
                // barriered, A's fragments loaded before the fence; `acc` and the fragments
                // are untouched until the wait below.
                unsafe { wgmma::mma_m64n64k16_bf16_rs(&mut acc, fragments[kk], db, k0 > 0 || kk > 0) };
            });
        } else {
            wgmma::fence();
            let mut kk = 0;
            while kk < WGMMA_DEPTH / 16 {
                // Each k16 step starts two core matrices (256 bytes) further along K.
                let step = kk * 2 * WGMMA_LEADING;
                let da =
                    SharedDescriptor::k_major(a_tile.shared_address() + step, WGMMA_LEADING, WGMMA_STRIDE);
                let db =
                    SharedDescriptor::k_major(b_tile.shared_address() + step, WGMMA_LEADING, WGMMA_STRIDE);
                // SAFETY: the whole warpgroup (the block) runs it; the tiles were written, fenced
                // and barriered above; `acc` is untouched until the wait below.
                unsafe { wgmma::mma_m64n64k16_bf16(&mut acc, da, db, k0 > 0 || kk > 0) };
                kk += 1;
            }
        }
        wgmma::commit();
        wgmma::wait::<0>();
        thread::sync_threads();
        k0 += WGMMA_DEPTH;
    }
    let (lane, warp) = (warp::lane(), warp::warp_id());
    let (g, t) = (lane / 4, lane % 4);
    // Unrolled: the accumulators stay in registers (an indexed array would go to local memory,
    // and the products' registers with it).
    unroll!(for e in 0..32 {
        let (j, h) = (e as u32 / 4, e as u32 % 4);
        let row = row0 + warp * 16 + g + (h / 2) * 8;
        let col = col0 + j * 8 + 2 * t + h % 2;
        if row < m && col < n {
            // SAFETY: (row, col) is inside C.
            unsafe { *c.add(row as usize * n as usize + col as usize) = acc[e] };
        }
    });
}

/// C (`m × n`, f32, row-major) = A (`m × k`, bf16, row-major) · Bᵀ (B `n × k`, bf16,
/// row-major), `k` a multiple of 8, on Hopper's warpgroup MMA.
///
/// Thread mapping: one warpgroup (128 threads) per 64 × 64 tile of C; per stage of 64 along
/// K, the threads copy A's and B's 64 × 64 tiles into shared memory in `wgmma`'s core-matrix
/// layout (`cp.async`, zero-filled past the edges), then four `wgmma.mma_async` m64n64k16 read
/// them through descriptors into 32 f32 accumulators a thread. Single-buffered: the example of
/// the instruction, not a tuned GEMM. Bytes per element of C: as [`hgemm_f16`](crate::hgemm_f16).
/// Shows: `wgmma`, `SharedDescriptor::k_major`, `tma::fence_async_shared` before the async proxy
/// reads what `cp.async` wrote.
#[kernel(launch_bounds(128))]
pub unsafe fn wgmma_gemm_bf16(a: *const BF16, b: *const BF16, c: *mut f32, m: u32, n: u32, k: u32) {
    // SAFETY: the launcher's contract.
    unsafe { wgmma_gemm::<false>(a, b, c, m, n, k) }
}

/// [`wgmma_gemm_bf16`] with A's fragments in registers: each warp loads its 16 rows of A's
/// stage with `ldmatrix` and `wgmma` reads them from there (the register-A form,
/// `mma_m64n64k16_bf16_rs`); B from shared memory as before. Launch as [`wgmma_gemm_bf16`].
#[kernel(launch_bounds(128))]
pub unsafe fn wgmma_gemm_rs_bf16(a: *const BF16, b: *const BF16, c: *mut f32, m: u32, n: u32, k: u32) {
    // SAFETY: the launcher's contract.
    unsafe { wgmma_gemm::<true>(a, b, c, m, n, k) }
}
