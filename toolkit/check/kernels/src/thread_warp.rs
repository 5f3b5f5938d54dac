//! Check kernels: thread geometry, warp, block, fence and grid intrinsics. Each writes what the
//! intrinsics returned, per thread, to `out`; the tests compare it with values computed on the
//! host and look for each intrinsic's instruction in the kernel's PTX.
//!
//! Threads are numbered across the grid as `block * threads_per_block + thread::linear_idx()`,
//! `block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z)`.

use ptxkit_device::atomic::atomic_add_u32;
use ptxkit_device::warp::{Match, Shuffle};
use ptxkit_device::{block, fence, grid, kernel, thread, warp};

/// Values `check_thread_geometry` writes per thread.
pub const GEOMETRY_VALUES: usize = 16;
/// Values the shuffle kernels write per thread: `shfl_idx`, `shfl_up`, `shfl_down`, `shfl_xor`.
pub const SHUFFLE_VALUES: usize = 4;
/// Values `check_lane_warp` writes per thread.
pub const LANE_VALUES: usize = 7;
/// Values `check_votes` writes per thread.
pub const VOTE_VALUES: usize = 3;
/// Values the match kernels write per thread.
pub const MATCH_VALUES: usize = 3;
/// Values `check_reduce_u32` writes per thread.
pub const REDUCE_U32_VALUES: usize = 6;
/// Values `check_reduce_i32` writes per thread.
pub const REDUCE_I32_VALUES: usize = 3;
/// Values `check_block_votes` writes per thread.
pub const BLOCK_VOTE_VALUES: usize = 3;

/// This thread's number across the grid (see the module doc).
fn global_thread() -> u32 {
    let block = thread::block_idx_x()
        + thread::grid_dim_x() * (thread::block_idx_y() + thread::grid_dim_y() * thread::block_idx_z());
    let threads_per_block = thread::block_dim_x() * thread::block_dim_y() * thread::block_dim_z();
    block * threads_per_block + thread::linear_idx()
}

/// Writes `values` to this thread's record of `out` (`values.len()` values per thread).
///
/// # Safety
/// `out` holds `values.len()` values for every thread of the grid.
unsafe fn write_record<T: Copy, const N: usize>(out: *mut T, values: [T; N]) {
    let base = global_thread() as usize * N;
    for (k, value) in values.into_iter().enumerate() {
        // SAFETY: the caller sized `out` for every thread's record.
        unsafe { *out.add(base + k) = value };
    }
}

/// `threadIdx`, `blockIdx`, `blockDim`, `gridDim` (x, y, z each), `thread::linear_idx` and
/// `thread::index_3d`. One thread per record; 16 u32 (64 bytes) per thread.
///
/// # Safety
/// `out` holds GEOMETRY_VALUES u32 for every thread of the launch.
#[kernel]
pub unsafe fn check_thread_geometry(out: *mut u32) {
    // SAFETY: the caller's promise, as the kernel's.
    unsafe { check_thread_geometry_body(out) }
}

/// The body of the geometry kernels.
///
/// # Safety
/// As [`check_thread_geometry`].
#[inline(always)]
unsafe fn check_thread_geometry_body(out: *mut u32) {
    let (x, y, z) = thread::index_3d();
    let values = [
        thread::thread_idx_x(),
        thread::thread_idx_y(),
        thread::thread_idx_z(),
        thread::block_idx_x(),
        thread::block_idx_y(),
        thread::block_idx_z(),
        thread::block_dim_x(),
        thread::block_dim_y(),
        thread::block_dim_z(),
        thread::grid_dim_x(),
        thread::grid_dim_y(),
        thread::grid_dim_z(),
        thread::linear_idx(),
        x,
        y,
        z,
    ];
    // SAFETY: the launcher sizes `out` for GEOMETRY_VALUES per thread.
    unsafe { write_record(out, values) };
}

/// [`check_thread_geometry`] under the block-shape contract `block(7, 5, 3)`: the same
/// record, with `blockDim` and the block's extent known to the compiler (no `%ntid` read),
/// so the records show what the folded constants computed. One thread per record.
///
/// # Safety
/// As [`check_thread_geometry`]; launched with blocks of 7×5×3 (the typed launch and the
/// driver refuse any other).
#[kernel(block(7, 5, 3))]
pub unsafe fn check_thread_geometry_fixed_block(out: *mut u32) {
    // (An inner attribute: the contract's first statement goes after it.)
    #![allow(clippy::missing_safety_doc)]
    // SAFETY: the caller's promise, as the kernel's.
    unsafe { check_thread_geometry_body(out) }
}

/// Whether this thread's `threadIdx` lies below the declared block (7, 5, 3), written by every
/// thread to `out[0]` (the same value): 1. Under `block(...)` the compiler is told so, and the
/// comparison folds to the constant (no `%tid` read is left).
///
/// # Safety
/// `out` holds one u32; launched with blocks of 7×5×3.
#[kernel(block(7, 5, 3))]
pub unsafe fn check_thread_idx_hinted(out: *mut u32) {
    #![allow(clippy::missing_safety_doc)]
    // SAFETY: the caller's promise, as the kernel's.
    unsafe { *out = thread_idx_below_7_5_3() };
}

/// [`check_thread_idx_hinted`] under `thread_idx_hints = false`: the compiler is told the
/// block's size only, so the comparison stays (each `%tid` is read).
///
/// # Safety
/// As [`check_thread_idx_hinted`].
#[kernel(block(7, 5, 3), thread_idx_hints = false)]
pub unsafe fn check_thread_idx_unhinted(out: *mut u32) {
    #![allow(clippy::missing_safety_doc)]
    // SAFETY: the caller's promise, as the kernel's.
    unsafe { *out = thread_idx_below_7_5_3() };
}

/// 1 if `threadIdx` < (7, 5, 3) on every axis, else 0.
#[inline(always)]
fn thread_idx_below_7_5_3() -> u32 {
    u32::from(thread::thread_idx_x() < 7 && thread::thread_idx_y() < 5 && thread::thread_idx_z() < 3)
}

/// `warp::lane`, `warp::warp_id`, `warp::active_mask`, `warp::lanes_below`,
/// `lanes_at_or_below`, `lanes_above`, `lanes_at_or_above`. One thread per record; 7 u32 (28
/// bytes) per thread.
///
/// # Safety
/// `out` holds LANE_VALUES u32 for every thread of the launch.
#[kernel]
pub unsafe fn check_lane_warp(out: *mut u32) {
    let values = [
        warp::lane(),
        warp::warp_id(),
        warp::active_mask(),
        warp::lanes_below(),
        warp::lanes_at_or_below(),
        warp::lanes_above(),
        warp::lanes_at_or_above(),
    ];
    // SAFETY: the launcher sizes `out` for LANE_VALUES per thread.
    unsafe { write_record(out, values) };
}

/// Each thread's own value for the shuffle kernels: distinct per thread, with distinct 32-bit
/// halves for the 64-bit types.
pub trait ShuffleSample: Shuffle {
    /// The value of thread `n` (numbered across the grid).
    fn sample(n: u32) -> Self;
}

impl ShuffleSample for u32 {
    fn sample(n: u32) -> Self {
        n.wrapping_mul(0x9e37_79b9) ^ 0x5555_0000
    }
}

impl ShuffleSample for i32 {
    fn sample(n: u32) -> Self {
        -(n as i32) * 3 - 1
    }
}

impl ShuffleSample for f32 {
    fn sample(n: u32) -> Self {
        n as f32 * 0.5 - 3.25
    }
}

impl ShuffleSample for u64 {
    fn sample(n: u32) -> Self {
        (u64::from(n) << 32) | u64::from(0xdead_0000 | n)
    }
}

impl ShuffleSample for i64 {
    fn sample(n: u32) -> Self {
        -(i64::from(n) * 0x1_0000_0003) - 5
    }
}

impl ShuffleSample for f64 {
    fn sample(n: u32) -> Self {
        f64::from(n) * 1.5e10 - 7.25
    }
}

/// The four shuffles of this thread's sample among the active lanes, `b` the source lane,
/// delta and lane mask alike, in segments of `width` lanes.
///
/// # Safety
/// `out` holds SHUFFLE_VALUES values for every thread of the grid.
unsafe fn shuffle_record<T: ShuffleSample>(out: *mut T, b: u32, width: u32) {
    let mask = warp::active_mask();
    let value = T::sample(global_thread());
    let values = [
        warp::shfl_idx(mask, value, b, width),
        warp::shfl_up(mask, value, b, width),
        warp::shfl_down(mask, value, b, width),
        warp::shfl_xor(mask, value, b, width),
    ];
    // SAFETY: the caller's contract.
    unsafe { write_record(out, values) };
}

/// `warp::shfl_idx/up/down/xor` on `u32` (`b`: source lane, delta, lane mask; `width`: segment).
/// One thread per record; 4 u32 (16 bytes) per thread.
///
/// # Safety
/// `out` holds SHUFFLE_VALUES values for every thread of the launch; `width` is a power of
/// two, 1..=32.
#[kernel]
pub unsafe fn check_shfl_u32(out: *mut u32, b: u32, width: u32) {
    // SAFETY: the launcher sizes `out` for SHUFFLE_VALUES per thread.
    unsafe { shuffle_record(out, b, width) };
}

/// As `check_shfl_u32`, on `i32`. 16 bytes per thread.
///
/// # Safety
/// As for `check_shfl_u32`.
#[kernel]
pub unsafe fn check_shfl_i32(out: *mut i32, b: u32, width: u32) {
    // SAFETY: as in `check_shfl_u32`.
    unsafe { shuffle_record(out, b, width) };
}

/// As `check_shfl_u32`, on `f32`. 16 bytes per thread.
///
/// # Safety
/// As for `check_shfl_u32`.
#[kernel]
pub unsafe fn check_shfl_f32(out: *mut f32, b: u32, width: u32) {
    // SAFETY: as in `check_shfl_u32`.
    unsafe { shuffle_record(out, b, width) };
}

/// As `check_shfl_u32`, on `u64` (two 32-bit shuffles each). 32 bytes per thread.
///
/// # Safety
/// As for `check_shfl_u32`.
#[kernel]
pub unsafe fn check_shfl_u64(out: *mut u64, b: u32, width: u32) {
    // SAFETY: as in `check_shfl_u32`.
    unsafe { shuffle_record(out, b, width) };
}

/// As `check_shfl_u32`, on `i64`. 32 bytes per thread.
///
/// # Safety
/// As for `check_shfl_u32`.
#[kernel]
pub unsafe fn check_shfl_i64(out: *mut i64, b: u32, width: u32) {
    // SAFETY: as in `check_shfl_u32`.
    unsafe { shuffle_record(out, b, width) };
}

/// As `check_shfl_u32`, on `f64`. 32 bytes per thread.
///
/// # Safety
/// As for `check_shfl_u32`.
#[kernel]
pub unsafe fn check_shfl_f64(out: *mut f64, b: u32, width: u32) {
    // SAFETY: as in `check_shfl_u32`.
    unsafe { shuffle_record(out, b, width) };
}

/// The full-warp shuffles the simulations use: `warp::shfl_idx_u32(FULL_MASK, v, b)`,
/// `shfl_up_u32(v, b)`, `shfl_up_f32`, `shfl_down_f32` (the f32 results as bits), on the `u32`
/// and `f32` samples. Whole warps only. One thread per record; 4 u32 (16 bytes) per thread.
///
/// # Safety
/// `out` holds SHUFFLE_VALUES u32 for every thread of the launch; every warp of the launch
/// is whole (32 threads).
#[kernel]
pub unsafe fn check_shfl_full_warp(out: *mut u32, b: u32) {
    let n = global_thread();
    let (word, float) = (u32::sample(n), f32::sample(n));
    let values = [
        warp::shfl_idx_u32(warp::FULL_MASK, word, b),
        warp::shfl_up_u32(word, b),
        warp::shfl_up_f32(float, b).to_bits(),
        warp::shfl_down_f32(float, b).to_bits(),
    ];
    // SAFETY: the launcher sizes `out` for SHUFFLE_VALUES per thread.
    unsafe { write_record(out, values) };
}

/// `warp::sync_warp`, then `warp::ballot`, `warp::any`, `warp::all` among the active lanes on
/// the predicate `n % modulus == residue` (`n` the thread's number across the grid). One
/// thread per record; 3 u32 (12 bytes) per thread.
///
/// # Safety
/// `out` holds VOTE_VALUES u32 for every thread of the launch; `modulus` is not 0.
#[kernel]
pub unsafe fn check_votes(out: *mut u32, modulus: u32, residue: u32) {
    let mask = warp::active_mask();
    warp::sync_warp(mask);
    let predicate = global_thread() % modulus == residue;
    let values = [
        warp::ballot(mask, predicate),
        u32::from(warp::any(mask, predicate)),
        u32::from(warp::all(mask, predicate)),
    ];
    // SAFETY: the launcher sizes `out` for VOTE_VALUES per thread.
    unsafe { write_record(out, values) };
}

/// `warp::match_any` and `warp::match_all` among the active lanes on `value`.
///
/// # Safety
/// `out` holds MATCH_VALUES values for every thread of the grid.
unsafe fn match_record<T: Match>(out: *mut u32, value: T) {
    let mask = warp::active_mask();
    let all = warp::match_all(mask, value);
    let values = [warp::match_any(mask, value), all.unwrap_or(0), u32::from(all.is_some())];
    // SAFETY: the caller's contract.
    unsafe { write_record(out, values) };
}

/// `warp::match_any`, `warp::match_all` (mask or 0, is-some) on the `u32` `lane % modulus`.
/// One thread per record; 3 u32 (12 bytes) per thread.
///
/// # Safety
/// `out` holds MATCH_VALUES u32 for every thread of the launch; `modulus` is not 0.
#[kernel]
pub unsafe fn check_match_u32(out: *mut u32, modulus: u32) {
    // SAFETY: the launcher sizes `out` for MATCH_VALUES per thread.
    unsafe { match_record(out, warp::lane() % modulus) };
}

/// As `check_match_u32` on the `u64` `(lane % modulus) << 32 | 7` (lanes differ only in the high
/// half). 12 bytes per thread.
///
/// # Safety
/// As for `check_match_u32`.
#[kernel]
pub unsafe fn check_match_u64(out: *mut u32, modulus: u32) {
    // SAFETY: as in `check_match_u32`.
    unsafe { match_record(out, (u64::from(warp::lane() % modulus) << 32) | 7) };
}

/// The `u32` each thread feeds `check_reduce_u32`: `n * 0x9e3779b9 ^ seed`.
pub fn reduce_u32_sample(n: u32, seed: u32) -> u32 {
    n.wrapping_mul(0x9e37_79b9) ^ seed
}

/// The `i32` each thread feeds `check_reduce_i32`: `(n * 37) % 101 - 50 + seed`.
pub fn reduce_i32_sample(n: u32, seed: i32) -> i32 {
    (n * 37 % 101) as i32 - 50 + seed
}

/// `warp::reduce_add/min/max/and/or/xor` on `u32` among the active lanes
/// ([`reduce_u32_sample`]). One thread per record; 6 u32 (24 bytes) per thread.
///
/// # Safety
/// `out` holds REDUCE_U32_VALUES u32 for every thread of the launch.
#[kernel]
pub unsafe fn check_reduce_u32(out: *mut u32, seed: u32) {
    let mask = warp::active_mask();
    let value = reduce_u32_sample(global_thread(), seed);
    let values = [
        warp::reduce_add(mask, value),
        warp::reduce_min(mask, value),
        warp::reduce_max(mask, value),
        warp::reduce_and(mask, value),
        warp::reduce_or(mask, value),
        warp::reduce_xor(mask, value),
    ];
    // SAFETY: the launcher sizes `out` for REDUCE_U32_VALUES per thread.
    unsafe { write_record(out, values) };
}

/// `warp::reduce_add/min/max` on `i32` among the active lanes ([`reduce_i32_sample`]). One
/// thread per record; 3 i32 (12 bytes) per thread.
///
/// # Safety
/// `out` holds REDUCE_I32_VALUES i32 for every thread of the launch.
#[kernel]
pub unsafe fn check_reduce_i32(out: *mut i32, seed: i32) {
    let mask = warp::active_mask();
    let value = reduce_i32_sample(global_thread(), seed);
    let values =
        [warp::reduce_add(mask, value), warp::reduce_min(mask, value), warp::reduce_max(mask, value)];
    // SAFETY: the launcher sizes `out` for REDUCE_I32_VALUES per thread.
    unsafe { write_record(out, values) };
}

/// `block::sync_threads_count/and/or` on the predicate `linear_idx % modulus == residue`. One
/// thread per record; 3 u32 (12 bytes) per thread.
///
/// # Safety
/// `out` holds BLOCK_VOTE_VALUES u32 for every thread of the launch; `modulus` is not 0.
#[kernel]
pub unsafe fn check_block_votes(out: *mut u32, modulus: u32, residue: u32) {
    let predicate = thread::linear_idx() % modulus == residue;
    let values = [
        block::sync_threads_count(predicate),
        u32::from(block::sync_threads_and(predicate)),
        u32::from(block::sync_threads_or(predicate)),
    ];
    // SAFETY: the launcher sizes `out` for BLOCK_VOTE_VALUES per thread.
    unsafe { write_record(out, values) };
}

/// The fences, each where it is needed. In each 1-D block (at least 64 threads), thread 0
/// writes `handoff[block] = 3 * block + 1`, `fence::block()`, raises `flags[block]`; thread 32
/// (another warp) waits for the flag, `fence::block()`, reads the handoff and, in the last-block
/// pattern of the CUDA programming guide, writes it to `partials[block]`, `fence::device()`,
/// takes a ticket from `tickets`; the block drawing the last ticket (`fence::device()`) sums
/// every partial into `total[0]` and `fence::system()`. Two threads per block work; 4 bytes per
/// block in each of `handoff`, `flags`, `partials`.
///
/// # Safety
/// A 1-D launch of blocks of at least 64 threads; `handoff`, `flags` and `partials` hold one
/// zeroed u32 per block, `tickets` and `total` one zeroed u32.
#[kernel]
pub unsafe fn check_fences(
    handoff: *mut u32,
    flags: *mut u32,
    partials: *mut u32,
    tickets: *mut u32,
    total: *mut u32,
) {
    let (block, blocks) = (thread::block_idx_x() as usize, thread::grid_dim_x());
    // SAFETY: the launcher gives `handoff`, `flags` and `partials` one zeroed u32 per block,
    // `tickets` and `total` one zeroed u32; the volatile accesses keep the values in memory, not
    // in registers; only threads 0 and 32 of a block touch its words.
    unsafe {
        match thread::thread_idx_x() {
            0 => {
                core::ptr::write_volatile(handoff.add(block), 3 * block as u32 + 1);
                fence::block();
                core::ptr::write_volatile(flags.add(block), 1);
            }
            32 => {
                while core::ptr::read_volatile(flags.add(block)) == 0 {}
                fence::block();
                core::ptr::write_volatile(partials.add(block), core::ptr::read_volatile(handoff.add(block)));
                fence::device();
                let ticket = atomic_add_u32(tickets, 1);
                if ticket == blocks - 1 {
                    fence::device();
                    let sum =
                        (0..blocks as usize).map(|b| core::ptr::read_volatile(partials.add(b))).sum::<u32>();
                    core::ptr::write_volatile(total, sum);
                    fence::system();
                }
            }
            _ => {}
        }
    }
}

/// `grid::sync` (cooperative launch only): for each of `rounds` rounds, thread `n` (1-D grid,
/// `n` in 0..threads) writes `values[n] = round * threads + n`, syncs the grid, reads the value
/// of thread `(n + blockDim.x) % threads` (another block's) and counts a mismatch into
/// `errors[0]`, and syncs again. `barrier` is a zeroed u32. 4 bytes per thread.
///
/// # Safety
/// A cooperative 1-D launch (`Gpu::launch_cooperative`); `values` holds one u32 per thread,
/// `errors` one; `barrier` is a zeroed u32 used by this launch only.
#[kernel]
pub unsafe fn check_grid_sync(values: *mut u32, errors: *mut u32, barrier: *mut u32, rounds: u32) {
    let n = thread::index_1d();
    let threads = thread::grid_size_1d();
    let neighbour = (n + thread::block_dim_x()) % threads;
    for round in 0..rounds {
        // SAFETY: the launcher gives `values` one u32 per thread and one to `errors`, launches
        // cooperatively with `barrier` zeroed, and every thread runs every round.
        unsafe {
            core::ptr::write_volatile(values.add(n as usize), round * threads + n);
            grid::sync(barrier);
            if core::ptr::read_volatile(values.add(neighbour as usize)) != round * threads + neighbour {
                atomic_add_u32(errors, 1);
            }
            grid::sync(barrier);
        }
    }
}
