//! 3-D heat diffusion, du/dt = α∇²u, integrated with classic RK4.
//!
//! A row-major `nx × ny × nz` grid (index `(z·ny + y)·nx + x`), spacing h, Dirichlet
//! boundary: the faces hold the boundary value, so every stage k is 0 there. With `a = α/h²`,
//! a stage is `k = a·∇²(field)` on interior cells (7-point Laplacian) and 0 on the faces.
//! Because the operator is affine (linear plus the constant boundary), RK4 can be evaluated
//! several ways; the kernels follow the reference write-up and go past it:
//! 1. [`heat_laplacian`] (k1) + [`heat_stage_naive`] ×3 + [`heat_rk4_update`]: each stage
//!    built from u (`k_s = L(u + c·k_{s-1})`), the write-up's step 0.
//! 2. [`heat_stage_reuse`]: `k_s = k1 + c·a∇²k_{s-1}` reuses k1 instead of recomputing the
//!    stencil on u, the write-up's step 2.
//! 3. fused: RK4 on a linear(+constant) operator is the polynomial
//!    `u + dt·v1 + dt²/2·v2 + dt³/6·v3 + dt⁴/24·A v3` with `v1 = L(u)`, `v_{j+1} = A v_j` (A the
//!    homogeneous Laplacian: v_j is 0 on the faces). Three [`heat_laplacian`] passes and one
//!    [`heat_poly_update`]: 44 B per cell per step instead of 68.
//! 4. [`heat_laplacian_tiled`] / [`heat_poly_update_tiled`]: the fused passes as 2.5-D
//!    kernels: a block marches along z with the planes below/at/above in registers and the
//!    current plane in a shared-memory tile.

use crate::kernel;
#[cfg(target_arch = "nvptx64")]
use crate::{cuda_std::thread, shared_array};

/// The 7-point Laplacian (without the 1/h² factor): the six neighbours minus six times the
/// centre.
#[inline(always)]
pub fn laplacian7(centre: f32, x: [f32; 2], y: [f32; 2], z: [f32; 2]) -> f32 {
    ((x[0] + x[1]) + (y[0] + y[1]) + (z[0] + z[1])) - 6.0 * centre
}

/// Whether (x, y, z) is an interior cell of an `n` grid (not on a face).
#[inline(always)]
pub fn is_interior(x: u32, y: u32, z: u32, n: [u32; 3]) -> bool {
    x > 0 && y > 0 && z > 0 && x + 1 < n[0] && y + 1 < n[1] && z + 1 < n[2]
}

/// `a·∇²f` at interior cell `i` of an `nx × ny × ...` grid, reading each value through `f`.
#[inline(always)]
pub fn stage_at(f: impl Fn(usize) -> f32, i: usize, nx: usize, plane: usize, a: f32) -> f32 {
    a * laplacian7(f(i), [f(i - 1), f(i + 1)], [f(i - nx), f(i + nx)], [f(i - plane), f(i + plane)])
}

/// The polynomial form of one RK4 step, given `A v3` (see the module documentation).
#[inline(always)]
pub fn rk4_polynomial(u: f32, v: [f32; 3], a_v3: f32, dt: f32) -> f32 {
    let (dt2, dt3, dt4) = (dt * dt / 2.0, dt * dt * dt / 6.0, dt * dt * dt * dt / 24.0);
    u + dt * v[0] + dt2 * v[1] + dt3 * v[2] + dt4 * a_v3
}

/// Step 0/fused: `out = a·∇²src` on interior cells, 0 on the faces (k1 = L(u), or
/// `v_{j+1} = A v_j`).
///
/// Thread mapping: one thread per cell of a 3-D launch. Bytes per cell: read src (4; the
/// neighbours hit in cache), write out (4): 8 B.
#[kernel]
pub unsafe fn heat_laplacian(src: *const f32, out: *mut f32, nx: u32, ny: u32, nz: u32, a: f32) {
    let (x, y, z) = thread::index_3d();
    if x >= nx || y >= ny || z >= nz {
        return;
    }
    let (w, plane) = (nx as usize, nx as usize * ny as usize);
    let i = z as usize * plane + y as usize * w + x as usize;
    unsafe {
        *out.add(i) =
            if is_interior(x, y, z, [nx, ny, nz]) { stage_at(|j| *src.add(j), i, w, plane, a) } else { 0.0 };
    }
}

/// Step 0 (naive): `k_out = L(u + c·k_prev)`, the stage built from u, the temporary
/// `u + c·k_prev` formed on the fly at each of the 7 points (as the CPU reference forms it).
///
/// Thread mapping: one thread per cell of a 3-D launch (8×8×8 blocks, as the write-up).
/// Bytes per cell: read u and k_prev (8), write k_out (4): 12 B.
#[kernel]
#[allow(clippy::too_many_arguments)]
pub unsafe fn heat_stage_naive(
    u: *const f32,
    k_prev: *const f32,
    k_out: *mut f32,
    nx: u32,
    ny: u32,
    nz: u32,
    a: f32,
    c: f32,
) {
    let (x, y, z) = thread::index_3d();
    if x >= nx || y >= ny || z >= nz {
        return;
    }
    let (w, plane) = (nx as usize, nx as usize * ny as usize);
    let i = z as usize * plane + y as usize * w + x as usize;
    unsafe {
        *k_out.add(i) = if is_interior(x, y, z, [nx, ny, nz]) {
            stage_at(|j| *u.add(j) + c * *k_prev.add(j), i, w, plane, a)
        } else {
            0.0
        };
    }
}

/// Step 2 (reuse): `k_out = k1 + c·a∇²k_prev`, since `L(u + c·k) = L(u) + c·A k`: no stencil on
/// u after k1.
///
/// Thread mapping: one thread per cell of a 3-D launch. Bytes per cell: read k1 and k_prev
/// (8), write k_out (4): 12 B (half the stencil arithmetic of naive).
#[kernel]
#[allow(clippy::too_many_arguments)]
pub unsafe fn heat_stage_reuse(
    k1: *const f32,
    k_prev: *const f32,
    k_out: *mut f32,
    nx: u32,
    ny: u32,
    nz: u32,
    a: f32,
    c: f32,
) {
    let (x, y, z) = thread::index_3d();
    if x >= nx || y >= ny || z >= nz {
        return;
    }
    let (w, plane) = (nx as usize, nx as usize * ny as usize);
    let i = z as usize * plane + y as usize * w + x as usize;
    unsafe {
        *k_out.add(i) = if is_interior(x, y, z, [nx, ny, nz]) {
            *k1.add(i) + c * stage_at(|j| *k_prev.add(j), i, w, plane, a)
        } else {
            0.0
        };
    }
}

/// The RK4 combination `u += dt/6·(k1 + 2k2 + 2k3 + k4)` (the stages are 0 on the faces).
///
/// Thread mapping: one thread per cell, 1-D. Bytes per cell: read u, k1..k4 (20), write u
/// (4): 24 B.
#[kernel]
#[allow(clippy::too_many_arguments)]
pub unsafe fn heat_rk4_update(
    u: *mut f32,
    k1: *const f32,
    k2: *const f32,
    k3: *const f32,
    k4: *const f32,
    cells: u32,
    dt: f32,
) {
    let i = thread::index_1d();
    if i >= cells {
        return;
    }
    let i = i as usize;
    unsafe {
        *u.add(i) += dt / 6.0 * (*k1.add(i) + 2.0 * *k2.add(i) + 2.0 * *k3.add(i) + *k4.add(i));
    }
}

/// Fused, last pass: `u ← u + dt·v1 + dt²/2·v2 + dt³/6·v3 + dt⁴/24·a∇²v3` on interior
/// cells, in place (u is read only at the cell it writes).
///
/// Thread mapping: one thread per cell of a 3-D launch. Bytes per cell: read u, v1, v2, v3
/// (16), write u (4): 20 B. With the three [`heat_laplacian`] passes: 44 B per step.
#[kernel]
#[allow(clippy::too_many_arguments)]
pub unsafe fn heat_poly_update(
    u: *mut f32,
    v1: *const f32,
    v2: *const f32,
    v3: *const f32,
    nx: u32,
    ny: u32,
    nz: u32,
    a: f32,
    dt: f32,
) {
    let (x, y, z) = thread::index_3d();
    if x >= nx || y >= ny || z >= nz || !is_interior(x, y, z, [nx, ny, nz]) {
        return;
    }
    let (w, plane) = (nx as usize, nx as usize * ny as usize);
    let i = z as usize * plane + y as usize * w + x as usize;
    unsafe {
        let a_v3 = stage_at(|j| *v3.add(j), i, w, plane, a);
        *u.add(i) = rk4_polynomial(*u.add(i), [*v1.add(i), *v2.add(i), *v3.add(i)], a_v3, dt);
    }
}

/// Block shape of the 2.5-D kernels (fixed: it sizes the shared tile), and the planes each
/// block marches through (blockIdx.z picks the chunk: one block marching all of z leaves too
/// few loads in flight).
pub const MARCH_W: u32 = 32;
pub const MARCH_H: u32 = 8;
pub const MARCH_DEPTH: u32 = 32;
pub const MARCH_SPAN: usize = ((MARCH_W + 2) * (MARCH_H + 2)) as usize;

/// Marches a `MARCH_W × MARCH_H` column of cells along z through `MARCH_DEPTH` interior
/// planes (chunk `blockIdx.z`), calling
/// `emit(index, a∇²src, preload(index))` for each interior cell; the plane is staged in the
/// shared `tile` (with a one-cell halo), the planes above and below come from registers, and
/// `preload` runs before the barrier so its loads overlap the tile's.
///
/// # Safety
/// `src` must hold the whole grid; `tile` must be a shared array of `MARCH_SPAN` floats; all
/// threads of the block must call it.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
unsafe fn march_z<T: Copy>(
    src: *const f32,
    tile: *mut f32,
    n: [u32; 3],
    a: f32,
    preload: impl Fn(usize) -> T,
    mut emit: impl FnMut(usize, f32, T),
) {
    let [nx, ny, nz] = n;
    let (tx, ty) = (thread::thread_idx_x(), thread::thread_idx_y());
    let (x0, y0) = (thread::block_idx_x() * MARCH_W, thread::block_idx_y() * MARCH_H);
    let (w, plane) = (nx as usize, nx as usize * ny as usize);
    // Each thread stages its own cell and, on the tile's edges, a halo cell; coordinates are
    // clamped into the grid (the clamped values feed only face cells, which are not emitted).
    let clamp = |v: i64, n: u32| v.clamp(0, n as i64 - 1) as usize;
    let (x, y) = (clamp((x0 + tx) as i64, nx), clamp((y0 + ty) as i64, ny));
    let halo: Option<(usize, usize)> = if tx == 0 {
        Some((clamp(x0 as i64 - 1, nx) + y * w, (ty as usize + 1) * (MARCH_W as usize + 2)))
    } else if tx == MARCH_W - 1 {
        Some((
            clamp((x0 + MARCH_W) as i64, nx) + y * w,
            (ty as usize + 1) * (MARCH_W as usize + 2) + MARCH_W as usize + 1,
        ))
    } else {
        None
    };
    let halo_y: Option<(usize, usize)> = if ty == 0 {
        Some((x + clamp(y0 as i64 - 1, ny) * w, tx as usize + 1))
    } else if ty == MARCH_H - 1 {
        Some((
            x + clamp((y0 + MARCH_H) as i64, ny) * w,
            (MARCH_H as usize + 1) * (MARCH_W as usize + 2) + tx as usize + 1,
        ))
    } else {
        None
    };
    let own = x + y * w;
    let centre = (ty as usize + 1) * (MARCH_W as usize + 2) + tx as usize + 1;
    let row = MARCH_W as usize + 2;
    let interior_xy = x0 + tx > 0 && x0 + tx + 1 < nx && y0 + ty > 0 && y0 + ty + 1 < ny;
    unsafe {
        let first = 1 + (thread::block_idx_z() * MARCH_DEPTH) as usize;
        let last = (first + MARCH_DEPTH as usize).min(nz as usize - 1);
        if first >= last {
            return;
        }
        let (mut below, mut here) = (*src.add((first - 1) * plane + own), *src.add(first * plane + own));
        for z in first..last {
            let above = *src.add((z + 1) * plane + own);
            let extra = if interior_xy { Some(preload(z * plane + own)) } else { None };
            *tile.add(centre) = here;
            if let Some((g, t)) = halo {
                *tile.add(t) = *src.add(z * plane + g);
            }
            if let Some((g, t)) = halo_y {
                *tile.add(t) = *src.add(z * plane + g);
            }
            thread::sync_threads();
            if let Some(extra) = extra {
                let t = |k: usize| *tile.add(k);
                let lap = laplacian7(
                    here,
                    [t(centre - 1), t(centre + 1)],
                    [t(centre - row), t(centre + row)],
                    [below, above],
                );
                emit(z * plane + own, a * lap, extra);
            }
            thread::sync_threads();
            (below, here) = (here, above);
        }
    }
}

/// 2.5-D [`heat_laplacian`]: `out = a·∇²src` on interior cells (the faces of `out` must
/// already be 0; they are never written).
///
/// Thread mapping: blocks of exactly `MARCH_W × MARCH_H` threads over the xy plane, each
/// marching along z. Bytes per cell: 8, each plane read once per block (plus its halo).
#[kernel]
pub unsafe fn heat_laplacian_tiled(src: *const f32, out: *mut f32, nx: u32, ny: u32, nz: u32, a: f32) {
    if nx < 3 || ny < 3 || nz < 3 {
        return;
    }
    let tile: *mut f32 = shared_array!(heat_lap_tile: [f32; MARCH_SPAN]);
    unsafe { march_z(src, tile, [nx, ny, nz], a, |_| (), |i, value, ()| *out.add(i) = value) };
}

/// 2.5-D [`heat_poly_update`]: the fused last pass marching along z over v3.
///
/// Thread mapping: as [`heat_laplacian_tiled`]. Bytes per cell: 20.
#[kernel]
#[allow(clippy::too_many_arguments)]
pub unsafe fn heat_poly_update_tiled(
    u: *mut f32,
    v1: *const f32,
    v2: *const f32,
    v3: *const f32,
    nx: u32,
    ny: u32,
    nz: u32,
    a: f32,
    dt: f32,
) {
    if nx < 3 || ny < 3 || nz < 3 {
        return;
    }
    let tile: *mut f32 = shared_array!(heat_poly_tile: [f32; MARCH_SPAN]);
    unsafe {
        march_z(
            v3,
            tile,
            [nx, ny, nz],
            a,
            |i| (*u.add(i), *v1.add(i), *v2.add(i), *v3.add(i)),
            |i, a_v3, (u0, v1i, v2i, v3i)| *u.add(i) = rk4_polynomial(u0, [v1i, v2i, v3i], a_v3, dt),
        )
    };
}

/// Output tile of [`heat_rk4_single`]: one block computes a `SINGLE_W × SINGLE_H` column of
/// cells through `SINGLE_DEPTH` planes.
pub const SINGLE_W: u32 = 32;
pub const SINGLE_H: u32 = 8;
pub const SINGLE_DEPTH: u32 = 64;
/// The halo: four stencil levels deep.
pub const SINGLE_HALO: usize = 4;
pub const SINGLE_TW: usize = SINGLE_W as usize + 2 * SINGLE_HALO;
pub const SINGLE_TH: usize = SINGLE_H as usize + 2 * SINGLE_HALO;
pub const SINGLE_PLANE: usize = SINGLE_TW * SINGLE_TH;
/// Ring lengths (planes kept) per level: u 6, v1 4, v2 3, v3 3.
pub const RING: [usize; 4] = [6, 4, 3, 3];
pub const RING_OFFSET: [usize; 4] = [0, 6, 10, 13];
pub const SINGLE_PLANES: usize = 16;

/// Step 5, single pass: a whole RK4 step in one launch, `u_next = u + dt·v1 + dt²/2·v2 +
/// dt³/6·v3 + dt⁴/24·A v3`, marching along z with the four levels (u, v1, v2, v3) pipelined:
/// at plane t the block loads u(t), computes v1(t−1), v2(t−2), v3(t−3) and the output at
/// t−4, each level on an xy tile one cell smaller than the one before (halo 4 for u). The
/// levels' recent planes live in shared-memory rings (u 6, v1 4, v2 3, v3 3 planes).
///
/// Thread mapping: blocks of `SINGLE_W × SINGLE_H` threads, each block one xy tile through
/// `SINGLE_DEPTH` output planes (blockIdx.z), threads striding over each level's tile. Bytes
/// per cell: read u (with the xy halo mostly from L2), write u_next: about 8 B, the floor;
/// the cost moves to stencil arithmetic on shared memory (6 stencils per output cell).
/// u_next must not alias u (neighbouring blocks read u's halo).
///
/// Measured on an H200 at 600³: 7.47 ms per step, slower than the four-pass `tiled` (4.24 ms).
/// ncu: 4% DRAM throughput, 81% SM throughput, 6.3·10⁹ warp instructions per step (about
/// 150 per stencil evaluation): instruction-bound. Walking the tile without a division per
/// cell took it from 8.4 to 7.47 ms; a 2-D thread stride was slower (11.1 ms: a 40-wide tile
/// leaves 24 of 32 lanes idle on every second pass). Next: `ld.shared` with 32-bit addresses
/// instead of 64-bit generic pointers, register queues along z, fewer barriers.
#[kernel]
#[allow(clippy::too_many_arguments)]
pub unsafe fn heat_rk4_single(u: *const f32, u_next: *mut f32, nx: u32, ny: u32, nz: u32, a: f32, dt: f32) {
    if nx < 3 || ny < 3 || nz < 3 {
        return;
    }
    let ring: *mut f32 = shared_array!(heat_single_ring: [f32; SINGLE_PLANES * SINGLE_PLANE]);
    let (w, plane) = (nx as usize, nx as usize * ny as usize);
    let gx0 = (thread::block_idx_x() * SINGLE_W) as i64 - SINGLE_HALO as i64;
    let gy0 = (thread::block_idx_y() * SINGLE_H) as i64 - SINGLE_HALO as i64;
    let z0 = (thread::block_idx_z() * SINGLE_DEPTH) as i64;
    let z1 = (z0 + SINGLE_DEPTH as i64).min(nz as i64);
    let t_id = (thread::thread_idx_y() * SINGLE_W + thread::thread_idx_x()) as usize;
    let threads = (SINGLE_W * SINGLE_H) as usize;
    // Slot of level `level`'s plane `p` (p ≥ −8) in the rings.
    let slot = |level: usize, p: i64| -> usize {
        (RING_OFFSET[level] + ((p + 16) as usize) % RING[level]) * SINGLE_PLANE
    };
    let (gx0_32, gy0_32, nx32, ny32) = (gx0 as i32, gy0 as i32, nx as i32, ny as i32);
    let interior = |ix: usize, iy: usize, p: i64| -> bool {
        let (gx, gy) = (gx0_32 + ix as i32, gy0_32 + iy as i32);
        gx > 0 && gy > 0 && p > 0 && gx < nx32 - 1 && gy < ny32 - 1 && p < nz as i64 - 1
    };
    // One level: the stencil of `level − 1` at plane p (planes p−1, p, p+1) on the tile
    // shrunk by `margin`, written to level `level`'s ring (0 on faces and outside). The
    // threads cover the shrunk tile densely (a 2-D stride would leave lanes idle: the tile
    // is 40 wide).
    let compute_level = |level: usize, p: i64, margin: usize| {
        let span_x = (SINGLE_TW - 2 * margin) as u32;
        let span_y = (SINGLE_TH - 2 * margin) as u32;
        let (below, here, above) = (slot(level - 1, p - 1), slot(level - 1, p), slot(level - 1, p + 1));
        let out = slot(level, p);
        // Walk the shrunk tile densely without a division per cell: start at this thread's
        // cell, then advance by the block size (`step_y` rows and `step_x` columns, with carry).
        let (step_x, step_y) = (threads as u32 % span_x, threads as u32 / span_x);
        let (mut kx, mut ky) = (t_id as u32 % span_x, t_id as u32 / span_x);
        while ky < span_y {
            let (ix, iy) = (margin + kx as usize, margin + ky as usize);
            let c = iy * SINGLE_TW + ix;
            unsafe {
                let r = |s: usize| *ring.add(s);
                *ring.add(out + c) = if interior(ix, iy, p) {
                    a * laplacian7(
                        r(here + c),
                        [r(here + c - 1), r(here + c + 1)],
                        [r(here + c - SINGLE_TW), r(here + c + SINGLE_TW)],
                        [r(below + c), r(above + c)],
                    )
                } else {
                    0.0
                };
            }
            kx += step_x;
            ky += step_y;
            if kx >= span_x {
                kx -= span_x;
                ky += 1;
            }
        }
    };

    for t in z0 - 4..z1 + 4 {
        // 1. Load u(t) over the whole tile (coordinates clamped into the grid).
        if t >= 0 && t < nz as i64 {
            let base = slot(0, t);
            let mut k = t_id;
            while k < SINGLE_PLANE {
                let (ix, iy) = (k % SINGLE_TW, k / SINGLE_TW);
                let gx = (gx0 + ix as i64).clamp(0, nx as i64 - 1) as usize;
                let gy = (gy0 + iy as i64).clamp(0, ny as i64 - 1) as usize;
                unsafe { *ring.add(base + k) = *u.add(t as usize * plane + gy * w + gx) };
                k += threads;
            }
        }
        thread::sync_threads();
        // 2.–4. v1(t−1), v2(t−2), v3(t−3), each where a later level needs it.
        let in_domain = |p: i64| p >= 0 && p < nz as i64;
        let p1 = t - 1;
        if in_domain(p1) && p1 >= z0 - 3 && p1 < z1 + 3 && p1 - 1 >= z0 - 4 {
            compute_level(1, p1, 1);
        }
        thread::sync_threads();
        let p2 = t - 2;
        if in_domain(p2) && p2 >= z0 - 2 && p2 < z1 + 2 {
            compute_level(2, p2, 2);
        }
        thread::sync_threads();
        let p3 = t - 3;
        if in_domain(p3) && p3 >= z0 - 1 && p3 < z1 + 1 {
            compute_level(3, p3, 3);
        }
        thread::sync_threads();
        // 5. The output plane t−4.
        let p = t - 4;
        if p >= z0 && p < z1 {
            let (ix, iy) = (SINGLE_HALO + t_id % SINGLE_W as usize, SINGLE_HALO + t_id / SINGLE_W as usize);
            let (gx, gy) = (gx0 + ix as i64, gy0 + iy as i64);
            if gx < nx as i64 && gy < ny as i64 {
                let c = iy * SINGLE_TW + ix;
                let g = p as usize * plane + gy as usize * w + gx as usize;
                unsafe {
                    let r = |s: usize| *ring.add(s);
                    let u0 = r(slot(0, p) + c);
                    *u_next.add(g) = if interior(ix, iy, p) {
                        let v3 = slot(3, p);
                        let a_v3 = a * laplacian7(
                            r(v3 + c),
                            [r(v3 + c - 1), r(v3 + c + 1)],
                            [r(v3 + c - SINGLE_TW), r(v3 + c + SINGLE_TW)],
                            [r(slot(3, p - 1) + c), r(slot(3, p + 1) + c)],
                        );
                        rk4_polynomial(u0, [r(slot(1, p) + c), r(slot(2, p) + c), r(v3 + c)], a_v3, dt)
                    } else {
                        u0
                    };
                }
            }
        }
    }
}
