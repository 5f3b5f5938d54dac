//! 18. TMA's three swizzles under `wgmma` (sm_90a, the Hopper module): one small bf16 GEMM per
//!     swizzle (32, 64 and 128 bytes), its operands' rows loaded by TMA in boxes one swizzle
//!     span wide and read by `wgmma` through the matching `SharedDescriptor`.

use ptxkit_device::debug::global_timer;
use ptxkit_device::half::BF16;
use ptxkit_device::mbarrier::{self, Mbarrier};
use ptxkit_device::tma::{self, TensorMap};
use ptxkit_device::wgmma::{self, SharedDescriptor};
use ptxkit_device::{device_assert, dynamic_shared, kernel, shared, thread, unroll, warp};

/// The tile of C one block of [`wgmma_swizzle_gemm_bf16`] computes: 64 × 64; also the rows of
/// each box of A and B.
pub const SWIZZLE_TILE: u32 = 64;
/// Threads per block of [`wgmma_swizzle_gemm_bf16`]: one warpgroup.
pub const SWIZZLE_BLOCK: u32 = 128;

/// The K depth of one chunk in the `swizzle`-byte swizzle (32, 64 or 128): one row of a box,
/// the swizzle's span, `swizzle / 2` bf16 (16, 32 or 64). The host's box is
/// `[swizzle_depth(swizzle), SWIZZLE_TILE]`.
pub const fn swizzle_depth(swizzle: u32) -> u32 {
    swizzle / 2
}

/// The bytes of one box (64 rows of one span): what one TMA load brings into shared memory.
pub const fn swizzle_box_bytes(swizzle: u32) -> u32 {
    SWIZZLE_TILE * swizzle_depth(swizzle) * 2
}

/// The bytes of one swizzle atom (8 rows of one span): the boxes' alignment in shared memory,
/// and the stride between 8-row groups in their descriptors.
pub const fn swizzle_atom_bytes(swizzle: u32) -> u32 {
    8 * swizzle
}

/// The boxes each chunk loads, and its barrier's phase expects: one of A, one of B.
const CHUNK_BOXES: u32 = 2;

/// The dynamic shared memory a block needs: A's box and B's, and one atom to align them.
pub const fn swizzle_shared_bytes(swizzle: u32) -> u32 {
    CHUNK_BOXES * swizzle_box_bytes(swizzle) + swizzle_atom_bytes(swizzle)
}

/// How long a thread waits for a chunk's boxes before it stops the kernel: 5 s (a chunk lands
/// in microseconds). A phase whose expected bytes and copies disagree may never complete; this
/// turns that hang into a failed launch (`CUDA_ERROR_ASSERT`, the line reported).
const WAIT_LIMIT_NS: u64 = 5_000_000_000;

/// Waits until `barrier`'s phase of parity `parity` completes, at most [`WAIT_LIMIT_NS`]; past
/// that, a failed `device_assert!` stops the kernel.
///
/// # Safety
/// As [`Mbarrier::try_wait_parity`].
#[inline(always)]
unsafe fn wait_parity_bounded(barrier: Mbarrier, parity: u32) {
    let deadline = global_timer() + WAIT_LIMIT_NS;
    // SAFETY: the caller's contract.
    while !unsafe { barrier.try_wait_parity(parity) } {
        let boxes_landed_within_the_wait_limit = global_timer() < deadline;
        device_assert!(boxes_landed_within_the_wait_limit);
    }
}

/// The descriptor of a K-major tile in the `SWIZZLE`-byte swizzle starting at shared-space
/// byte `address` (an atom's start), 8-row groups one atom apart (densely packed).
#[inline(always)]
const fn swizzled_descriptor<const SWIZZLE: u32>(address: u32) -> SharedDescriptor {
    let stride = swizzle_atom_bytes(SWIZZLE);
    match SWIZZLE {
        32 => SharedDescriptor::k_major_swizzle_32(address, stride),
        64 => SharedDescriptor::k_major_swizzle_64(address, stride),
        128 => SharedDescriptor::k_major_swizzle_128(address, stride),
        _ => panic!("a swizzle of 32, 64 or 128 bytes"),
    }
}

/// C (`m × n`, f32, row-major) = A (`m × k`, bf16, row-major) · Bᵀ (B `n × k`, bf16,
/// row-major), through TMA maps of A and B with boxes of [`swizzle_depth`]`(SWIZZLE)` × 64 (one
/// swizzle span along K, 64 rows) in the `SWIZZLE`-byte swizzle (`TmaSwizzle::B32`, `B64`,
/// `B128`); `k` a multiple of 8 (TMA's 16-byte rows).
///
/// Thread mapping: one warpgroup (128 threads) per 64 × 64 tile of C. Per chunk of
/// `SWIZZLE / 2` along K, thread 0 starts one TMA load of A's box and one of B's, both
/// completing on one `mbarrier` whose phase expects both boxes' bytes; every thread waits for
/// the phase (bounded: a wait past 5 s stops the kernel instead of hanging it), then the
/// warpgroup issues `SWIZZLE / 32` `wgmma` m64n64k16 (1, 2 or 4), each K step of 16 a
/// descriptor 32 bytes further into the swizzled rows, and waits for them before the boxes
/// are reused. Single-buffered: the swizzles' proof on the GPU, not a tuned GEMM (that is
/// [`gemm_tma_wgmma_bf16`](crate::gemm_tma_wgmma_bf16)). Bytes per element of C: 2·2k/64 from
/// global memory. Shows: `TmaSwizzle::B32`/`B64`/`B128` with
/// `SharedDescriptor::k_major_swizzle_32`/`_64`/`_128`, a generic kernel over a const, dynamic
/// shared memory aligned by hand to the swizzle's atom.
///
/// # Safety
/// `a` and `b` are device tensor maps of `m × k` and `n × k` bf16 (dims `[k, m]` and `[k, n]`)
/// with boxes of `[swizzle_depth(SWIZZLE), 64]` in the `SWIZZLE`-byte swizzle
/// (`ptxkit_host`'s `TensorMapSpec::packed(..).with_swizzle(..)`), `k` a multiple of 8; `c`
/// holds `m × n` floats; blocks of 128 threads, a grid of ⌈n/64⌉ × ⌈m/64⌉, at least
/// [`swizzle_shared_bytes`]`(SWIZZLE)` of dynamic shared memory (the handle's).
#[kernel(
    launch_bounds(128),
    dynamic_shared = swizzle_shared_bytes(SWIZZLE),
    instantiate(
        wgmma_swizzle_gemm_bf16_32 = 32,
        wgmma_swizzle_gemm_bf16_64 = 64,
        wgmma_swizzle_gemm_bf16_128 = 128
    )
)]
pub unsafe fn wgmma_swizzle_gemm_bf16<const SWIZZLE: u32>(
    a: *const TensorMap<BF16>,
    b: *const TensorMap<BF16>,
    c: *mut f32,
    m: u32,
    n: u32,
    k: u32,
) {
    // Every count below derives from SWIZZLE through the functions above: the box the host
    // encodes (depth × 64 bf16), the bytes it lands (`swizzle_box_bytes`), the phase's
    // expectation (CHUNK_BOXES of them, CHUNK_BOXES loads), the products a chunk holds.
    const {
        assert!(SWIZZLE == 32 || SWIZZLE == 64 || SWIZZLE == 128, "a swizzle of 32, 64 or 128 bytes");
        assert!(swizzle_depth(SWIZZLE) * 2 == SWIZZLE, "a box's row is one swizzle span");
        assert!(swizzle_depth(SWIZZLE).is_multiple_of(16), "whole k16 products per chunk");
        assert!(swizzle_box_bytes(SWIZZLE) == SWIZZLE_TILE * SWIZZLE, "64 rows of one span a box");
        assert!(swizzle_box_bytes(SWIZZLE).is_multiple_of(swizzle_atom_bytes(SWIZZLE)));
        assert!(CHUNK_BOXES == 2, "A's box and B's: the two loads of a chunk below");
    };
    let depth = swizzle_depth(SWIZZLE);
    let (box_bytes, atom) = (swizzle_box_bytes(SWIZZLE), swizzle_atom_bytes(SWIZZLE));
    let tiles = dynamic_shared!(wgmma_swizzle_tiles: BF16);
    let full = Mbarrier::at(shared!(wgmma_swizzle_full: [u64; 1]), 0);
    // A's box at the first atom boundary of the dynamic shared memory (the swizzle XORs address
    // bits 4-6 with bits 7-9, as many as the span has chunks: the descriptors' base offset 0
    // needs the atoms aligned), B's after it.
    let base = tiles.shared_address();
    let a_tile = (base + atom - 1) & !(atom - 1);
    let b_tile = a_tile + box_bytes;
    let tid = thread::thread_idx_x();
    let (row0, col0) = (thread::block_idx_y() * SWIZZLE_TILE, thread::block_idx_x() * SWIZZLE_TILE);
    if tid == 0 {
        // SAFETY: one thread initialises the barrier before anyone uses it (fence, barrier).
        unsafe { full.init(1) };
        mbarrier::fence_init();
        // SAFETY: the maps are the launcher's (rank 2, boxes of depth × 64 bf16 in this
        // swizzle), in global memory.
        unsafe {
            tma::acquire_tensor_map(a);
            tma::acquire_tensor_map(b);
        }
    }
    thread::sync_threads();
    let mut acc = [0.0f32; 32];
    let chunks = k.div_ceil(depth);
    let mut chunk = 0;
    while chunk < chunks {
        if tid == 0 {
            let k0 = (chunk * depth) as i32;
            // SAFETY: the phase expects CHUNK_BOXES boxes of `box_bytes` (TMA counts the zeros
            // it fills past the edges), and exactly CHUNK_BOXES loads of one box each follow;
            // both boxes lie inside the dynamic shared memory (`swizzle_shared_bytes`), at
            // atom-aligned (so 128-byte aligned) starts; the previous chunk's products were
            // waited for before the barrier that ended it.
            unsafe {
                full.arrive_expect_tx(CHUNK_BOXES * box_bytes);
                tma::load_tile(tiles, (a_tile - base) / 2, a, [k0, row0 as i32], full);
                tma::load_tile(tiles, (b_tile - base) / 2, b, [k0, col0 as i32], full);
            }
        }
        // SAFETY: phase `chunk` completes once thread 0 arrived and both boxes landed; every
        // thread saw the previous phase complete before the barrier below, so parity names
        // the current phase.
        unsafe { wait_parity_bounded(full, chunk % 2) };
        wgmma::fence();
        let mut step = 0;
        while step < depth / 16 {
            // Each k16 step is 16 bf16, 32 bytes, further along the swizzled rows.
            let da = swizzled_descriptor::<SWIZZLE>(a_tile).offset(step * 32);
            let db = swizzled_descriptor::<SWIZZLE>(b_tile).offset(step * 32);
            // SAFETY: the whole warpgroup (the block) runs it; the boxes landed (the phase
            // completed); `acc` is untouched until the wait below.
            unsafe { wgmma::mma_m64n64k16_bf16(&mut acc, da, db, chunk > 0 || step > 0) };
            step += 1;
        }
        wgmma::commit();
        wgmma::wait::<0>();
        // Every warp's products have read the boxes before thread 0 starts the next loads.
        thread::sync_threads();
        chunk += 1;
    }
    let (lane, warp) = (warp::lane(), warp::warp_id());
    let (g, t) = (lane / 4, lane % 4);
    // Unrolled: the accumulators stay in registers.
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
