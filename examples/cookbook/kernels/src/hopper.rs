//! 11-13. Hopper (sm_90) kernels: TMA tensor and bulk copies completing on an `mbarrier`, and
//! a histogram over a thread-block cluster's distributed shared memory. Built for `sm_90` only
//! (the `hopper` feature; `../build.rs` builds it as its own PTX module).

use ptxkit_device::mbarrier::{self, Mbarrier};
use ptxkit_device::tma::{self, TensorMap};
use ptxkit_device::{atomic, cluster, kernel, shared, thread, tma_shared};

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
