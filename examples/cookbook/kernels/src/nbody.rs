//! 6. All-pairs n-body accelerations.

use ptxkit_device::unroll;
use ptxkit_device::{kernel, math, memory, shared, thread, vector::F32x4};

/// Threads per block, and bodies per shared-memory tile.
pub const NBODY_BLOCK: u32 = 256;

/// `accelerations[i] = Σ_j m_j·d_ij / (|d_ij|² + softening2)^{3/2}` (G = 1, `d_ij` = body j's
/// position minus body i's; w = 0) for `n` bodies `(x, y, z, mass)`.
///
/// Thread mapping: one thread per body, blocks of 256; the block walks all bodies in tiles
/// of 256, each thread loading one `F32x4` into shared memory, then every thread reads the
/// whole tile (a broadcast) and accumulates 256 interactions: 3 subtractions, 3 FMAs for the
/// squared distance, `rsqrtf`, 2 multiplies for its cube, 1 by the mass, 3 FMAs. Bodies past `n`
/// load as mass 0. FLOPs per interaction: 20 (the customary count). Shows: shared-memory
/// tiling of `F32x4`, `math::rsqrtf` (`rsqrt.approx.f32`, as nvcc's `rsqrtf`), `math::fmaf`.
#[kernel(launch_bounds(256))]
pub unsafe fn nbody_accelerations(bodies: *const F32x4, accelerations: *mut F32x4, n: u32, softening2: f32) {
    let tile = shared!(nbody_tile: [F32x4; NBODY_BLOCK as usize]);
    let t = thread::thread_idx_x();
    let i = thread::index_1d();
    let zero = F32x4::splat(0.0);
    // SAFETY: i < n is inside `bodies` (16-byte aligned F32x4s).
    let me = if i < n {
        unsafe { memory::load_vector(bodies.add(i as usize)) }.to_array()
    } else {
        zero.to_array()
    };
    let (mut ax, mut ay, mut az) = (0.0f32, 0.0f32, 0.0f32);
    let mut start = 0;
    while start < n {
        let j = start + t;
        // SAFETY: j < n is inside `bodies`.
        let other = if j < n { unsafe { memory::load_vector(bodies.add(j as usize)) } } else { zero };
        // SAFETY: t < 256; read after the barrier.
        unsafe { tile.store(t, other) };
        thread::sync_threads();
        // 8 bodies per iteration, as CUDA C's `#pragma unroll 8`.
        for group in 0..NBODY_BLOCK / 8 {
            unroll!(for u in 0u32..8 {
                // SAFETY: group·8 + u < 256; written before the barrier.
                let [ox, oy, oz, mass] = unsafe { tile.load(group * 8 + u) }.to_array();
                let (dx, dy, dz) = (ox - me[0], oy - me[1], oz - me[2]);
                let d2 = math::fmaf(dx, dx, math::fmaf(dy, dy, math::fmaf(dz, dz, softening2)));
                let inverse = math::rsqrtf(d2);
                let strength = mass * (inverse * inverse * inverse);
                ax = math::fmaf(dx, strength, ax);
                ay = math::fmaf(dy, strength, ay);
                az = math::fmaf(dz, strength, az);
            });
        }
        // The next tile's stores must wait until every thread has read this one.
        thread::sync_threads();
        start += NBODY_BLOCK;
    }
    if i < n {
        // SAFETY: i < n is inside `accelerations`; each is written by one thread.
        unsafe { memory::store_vector(accelerations.add(i as usize), F32x4::new(ax, ay, az, 0.0)) };
    }
}
