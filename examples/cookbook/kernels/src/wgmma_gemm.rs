//! 15. A bf16 GEMM on Hopper's TMA and warpgroup MMA, warp-specialised: one producer thread
//!     streams 128 × 64 tiles of A and B through a five-stage ring of swizzled shared memory with
//!     TMA, two consumer warpgroups multiply them with `wgmma` (sm_90a).

use ptxkit_device::half::BF16;
use ptxkit_device::mbarrier::{self, Mbarrier};
use ptxkit_device::tma::{self, TensorMap};
use ptxkit_device::wgmma::{self, SharedDescriptor};
use ptxkit_device::{dynamic_shared, kernel, shared, thread, unroll, warp};

/// The tile of C one block computes: 128 × 128.
pub const GEMM_TILE: u32 = 128;
/// The K depth of one stage: 64 halves, one 128-byte swizzled row.
pub const GEMM_DEPTH: u32 = 64;
/// Threads per block: a producer warpgroup and two consumer warpgroups.
pub const GEMM_BLOCK: u32 = 384;
/// Stages in the ring.
pub const GEMM_STAGES: u32 = 5;
/// Bytes of one operand's stage (128 rows of 128 bytes).
const OPERAND_BYTES: u32 = GEMM_TILE * GEMM_DEPTH * 2;
/// Bytes of one stage (A's tile, then B's).
const STAGE_BYTES: u32 = 2 * OPERAND_BYTES;
/// The dynamic shared memory a block needs: the ring, and 1 KiB to align it to the swizzle's
/// 1024-byte atoms.
pub const GEMM_SHARED_BYTES: u32 = GEMM_STAGES * STAGE_BYTES + 1024;

/// C (`m × n`, f32, row-major) = A (`m × k`, bf16, row-major) · Bᵀ (B `n × k`, bf16,
/// row-major), through TMA maps of A and B with 64 × 128 boxes (64 along K, 128 rows) in the
/// 128-byte swizzle; `k` a multiple of 8.
///
/// Thread mapping: one block of 384 threads per 128 × 128 tile of C. Warpgroup 0's first thread
/// is the producer: for each stage of 64 along K it waits until the ring's slot is free
/// (`empty` barrier), then starts two TMA loads that complete on the slot's `full` barrier.
/// Warpgroups 1 and 2 are the consumers, rows 0-63 and 64-127 of the tile: each waits for a
/// slot's `full` barrier, issues four `wgmma` m64n128k16 on it (64 f32 accumulators a thread),
/// keeps one group in flight and frees the previous slot once its group has completed. Bytes
/// per element of C: (128·64·2)·2 per 128·128·64 products, reused from shared memory. Shows:
/// a warp-specialised producer/consumer pipeline on `mbarrier`s, TMA's swizzle with
/// `SharedDescriptor::k_major_swizzle_128`, `wgmma` with a group in flight.
#[kernel(launch_bounds(384), dynamic_shared = GEMM_SHARED_BYTES)]
pub unsafe fn gemm_tma_wgmma_bf16(
    a: *const TensorMap<BF16>,
    b: *const TensorMap<BF16>,
    c: *mut f32,
    m: u32,
    n: u32,
    k: u32,
) {
    let ring = dynamic_shared!(gemm_tma_wgmma_ring: BF16);
    let full = shared!(gemm_tma_wgmma_full: [u64; GEMM_STAGES as usize]);
    let empty = shared!(gemm_tma_wgmma_empty: [u64; GEMM_STAGES as usize]);
    // The ring starts at the first 1024-byte boundary of the dynamic shared memory.
    let base = ring.shared_address();
    let start = (base + 1023) & !1023;
    let tid = thread::thread_idx_x();
    let group = tid / 128;
    let (m0, n0) = (thread::block_idx_y() * GEMM_TILE, thread::block_idx_x() * GEMM_TILE);
    let stages = k.div_ceil(GEMM_DEPTH);
    if tid == 0 {
        let mut s = 0;
        while s < GEMM_STAGES {
            // SAFETY: one thread initialises the barriers before anyone uses them (the fence,
            // then the block's barrier).
            unsafe {
                Mbarrier::at(full, s).init(1);
                Mbarrier::at(empty, s).init(2);
            }
            s += 1;
        }
        mbarrier::fence_init();
    }
    thread::sync_threads();
    if group == 0 {
        if tid != 0 {
            return;
        }
        // SAFETY: the maps are the launcher's (rank 2, 64 × 128 boxes of bf16, 128-byte
        // swizzle), in global memory.
        unsafe {
            tma::acquire_tensor_map(a);
            tma::acquire_tensor_map(b);
        }
        let mut kt = 0;
        while kt < stages {
            let (slot, phase) = (kt % GEMM_STAGES, (kt / GEMM_STAGES) % 2);
            let (filled, freed) = (Mbarrier::at(full, slot), Mbarrier::at(empty, slot));
            let at = (start - base + slot * STAGE_BYTES) / 2;
            // SAFETY: the slot is free once both consumers released its previous use (a fresh
            // barrier passes parity 1 at once); the phase expects both boxes' bytes (TMA counts
            // the zeros it fills past the edges); the slot's 32 KiB lie inside the ring.
            unsafe {
                freed.wait_parity(phase ^ 1);
                filled.arrive_expect_tx(STAGE_BYTES);
                tma::load_tile(ring, at, a, [(kt * GEMM_DEPTH) as i32, m0 as i32], filled);
                tma::load_tile(
                    ring,
                    at + OPERAND_BYTES / 2,
                    b,
                    [(kt * GEMM_DEPTH) as i32, n0 as i32],
                    filled,
                );
            }
            kt += 1;
        }
        return;
    }
    let consumer = group - 1;
    let mut acc = [0.0f32; 64];
    let mut kt = 0;
    while kt < stages {
        let (slot, phase) = (kt % GEMM_STAGES, (kt / GEMM_STAGES) % 2);
        // SAFETY: the producer's copies complete this phase.
        unsafe { Mbarrier::at(full, slot).wait_parity(phase) };
        let a_tile = start + slot * STAGE_BYTES + consumer * 64 * 128;
        let b_tile = start + slot * STAGE_BYTES + OPERAND_BYTES;
        wgmma::fence();
        unroll!(for kk in 0..4 {
            let da = SharedDescriptor::k_major_swizzle_128(a_tile, 1024).offset(kk * 32);
            let db = SharedDescriptor::k_major_swizzle_128(b_tile, 1024).offset(kk * 32);
            // SAFETY: the warpgroup runs it together; the slot's tiles landed (full barrier);
            // `acc` is touched by nothing but the products until the final wait.
            unsafe { wgmma::mma_m64n128k16_bf16(&mut acc, da, db, kt > 0 || kk > 0) };
        });
        wgmma::commit();
        // One group in flight: the previous stage's products are done, its slot is free.
        wgmma::wait::<1>();
        if kt > 0 && tid % 128 == 0 {
            // SAFETY: one arrival per consumer per use of the slot, as the barrier counts.
            let _ = unsafe { Mbarrier::at(empty, (kt - 1) % GEMM_STAGES).arrive() };
        }
        kt += 1;
    }
    wgmma::wait::<0>();
    let (lane, warp) = (warp::lane(), warp::warp_id() % 4);
    let (g, t) = (lane / 4, lane % 4);
    unroll!(for e in 0..64 {
        let (j, h) = (e as u32 / 4, e as u32 % 4);
        let row = m0 + consumer * 64 + warp * 16 + g + (h / 2) * 8;
        let col = n0 + j * 8 + 2 * t + h % 2;
        if row < m && col < n {
            // SAFETY: (row, col) is inside C.
            unsafe { *c.add(row as usize * n as usize + col as usize) = acc[e] };
        }
    });
}
