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
//! 5. [`heat_rk4_single`]: the whole polynomial in one 2.5-D pass, 8 B per cell of DRAM
//!    traffic (0.96 ms per step at 600³ on an H100, 1.66× the copy floor).

use ptxkit_device::kernel;
use ptxkit_device::{atomic, fence, memory, shared_array, thread};

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

/// Block shape of [`heat_rk4_single`]: `SINGLE_TX × SINGLE_TY` threads, each owning one
/// column (x) and `SINGLE_ROWS` consecutive rows (y) of a `SINGLE_TX × SINGLE_TILE_H` xy tile.
pub const SINGLE_TX: u32 = 64;
pub const SINGLE_TY: u32 = 16;
pub const SINGLE_ROWS: usize = 2;
pub const SINGLE_TILE_H: u32 = SINGLE_TY * SINGLE_ROWS as u32;
/// The halo: four stencil levels deep, so a tile yields `SINGLE_OUT_W × SINGLE_OUT_H` outputs.
pub const SINGLE_HALO: u32 = 4;
pub const SINGLE_OUT_W: u32 = SINGLE_TX - 2 * SINGLE_HALO;
pub const SINGLE_OUT_H: u32 = SINGLE_TILE_H - 2 * SINGLE_HALO;
/// A level's plane in shared memory: the tile with a one-cell pad all round (read, never
/// written, by the tile's edge cells, whose values are not used).
pub const SINGLE_PITCH: u32 = SINGLE_TX + 2;
pub const SINGLE_SPAN: u32 = SINGLE_PITCH * (SINGLE_TILE_H + 2);
/// Dynamic shared memory of [`heat_rk4_single`]: two buffers of the four levels' planes.
pub const SINGLE_SHARED_BYTES: u32 = 2 * 4 * SINGLE_SPAN * 4;
/// Extra planes a chunk computes below and above its outputs (the pipeline's depth).
pub const SINGLE_LAG: u32 = 4;

/// The 7-point Laplacian with a fused multiply-add for the centre term: one instruction fewer
/// than [`laplacian7`], rounding once less (the single pass is instruction-bound).
#[inline(always)]
pub fn laplacian7_fma(centre: f32, x: [f32; 2], y: [f32; 2], z: [f32; 2]) -> f32 {
    core::f32::math::mul_add(centre, -6.0, (x[0] + x[1]) + (y[0] + y[1]) + (z[0] + z[1]))
}

/// `a·b + c`, rounded once: the single pass accumulates RK4's polynomial so (an instruction a
/// term fewer than the multiply and add of [`rk4_polynomial`], within rounding of it).
#[inline(always)]
fn fma(a: f32, b: f32, c: f32) -> f32 {
    core::f32::math::mul_add(a, b, c)
}

/// The coefficients of RK4's polynomial, `dt^j / j!` for j = 1..4, passed to
/// [`heat_rk4_single`] by value (kernel parameters are operands in constant memory, where
/// values computed in the kernel would take registers).
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Rk4Terms {
    pub dt: f32,
    pub dt2: f32,
    pub dt3: f32,
    pub dt4: f32,
}

impl Rk4Terms {
    /// The terms for step `dt`, rounded as [`rk4_polynomial`] rounds them.
    pub fn new(dt: f32) -> Self {
        Self { dt, dt2: dt * dt / 2.0, dt3: dt * dt * dt / 6.0, dt4: dt * dt * dt * dt / 24.0 }
    }
}

/// How a launch of [`heat_rk4_single`] takes part in a split run's halo exchange by rounds
/// (all zero: it does not). `flags` is the device address of this slab's `u32`s: `[0]` and
/// `[1]` count the rows whose halo planes have arrived from the slab below and above (the
/// copy engines write them), `[2 + r]` the blocks that have finished round `r` (the rounds of
/// whole tile columns, then one more for the runs after them), cumulative over launches.
/// Before a round, a block waits until the halo rows its tiles read have arrived from each
/// side in `sides` (bit 0 below, bit 1 above): `flags[side] ≥ base + rows`, in wrapping
/// arithmetic; after it, the block counts itself in the round's flag.
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct RoundSignals {
    pub flags: u64,
    pub base: u32,
    pub sides: u32,
}

/// Rows of every output plane that [`heat_rk4_single`]'s rounds `0..=round` have written in
/// full (whole rows of tiles, in row-major tile order; `blocks` tiles a round, at most `ny`).
pub fn rows_written_after_round(round: u32, blocks: u32, tiles_x: u32, ny: u32) -> u32 {
    let tiles = (round + 1).saturating_mul(blocks);
    (tiles / tiles_x.max(1)).saturating_mul(SINGLE_OUT_H).min(ny)
}

/// Rows of the halo planes that round `round`'s tiles read: up to the last tile row of the
/// round, its outputs and the tile's halo beyond them (at most `ny`).
pub fn rows_read_in_round(round: u32, blocks: u32, tiles_x: u32, ny: u32) -> u32 {
    let last_tile = (round + 1).saturating_mul(blocks).saturating_sub(1);
    let tile_row = last_tile / tiles_x.max(1);
    (tile_row + 1).saturating_mul(SINGLE_OUT_H).saturating_add(SINGLE_HALO).min(ny)
}

/// Whether [`heat_rk4_single`]'s steps `t`, `t+1`, `t+2` of a march that writes output planes
/// from `z0` on (and ends at its last output plane + [`SINGLE_LAG`]) need none of the tests
/// of the march's ends: the levels they compute (planes `t−4 ..= t+1`) lie off the z faces,
/// the planes they load (`t+2 ..= t+4`) inside the grid, and the planes they write
/// (`t−4 ..= t−2`) at or past `z0`. (Before the march's end, which the loop never passes.)
#[inline(always)]
pub fn single_steady_steps(t: i32, z0: i32, nz: i32) -> bool {
    t - SINGLE_LAG as i32 >= z0.max(1) && t + 4 < nz
}

/// One column of [`heat_rk4_single`]'s pipeline: per level, the plane below and the current
/// plane of this thread's `SINGLE_ROWS` cells, and the polynomial's partial sums.
#[derive(Clone, Copy)]
struct Pipeline {
    /// u of the plane being entered and of the next, loaded two steps ahead.
    ahead: [[f32; SINGLE_ROWS]; 2],
    /// Per level (u, v1, v2, v3): `[below, here]`.
    level: [[[f32; SINGLE_ROWS]; 2]; 4],
    /// u + dt·v1 (two planes back), + dt²/2·v2 (three back), + dt³/6·v3 (four back).
    acc: [[f32; SINGLE_ROWS]; 3],
    /// Plane t+1 of u, the next to load, and plane t−4 of u_next, the next to write
    /// (wrapping: they may lie outside the grid while unused).
    load: *const f32,
    store: *mut f32,
    /// This thread's cell in the shared buffer of the next plane (the two buffers alternate).
    buffer: u32,
}

/// `coefficient·∇²` of one level at the `SINGLE_ROWS` cells of one column: the centres are
/// this thread's registers (also stored in the shared plane at `index`, row 0), x neighbours
/// and the y neighbours past the ends come from the shared plane, z neighbours from registers.
///
/// # Safety
/// The shared plane must hold this level's current plane, written before a barrier.
#[inline(always)]
unsafe fn column_stencil(
    plane: ptxkit_device::SharedF32,
    index: u32,
    [below, centre]: &[[f32; SINGLE_ROWS]; 2],
    above: &[f32; SINGLE_ROWS],
    coefficient: &[f32; SINGLE_ROWS],
) -> [f32; SINGLE_ROWS] {
    let mut out = [0.0; SINGLE_ROWS];
    unsafe {
        let north = plane.load(index - SINGLE_PITCH);
        let south = plane.load(index + SINGLE_ROWS as u32 * SINGLE_PITCH);
        for r in 0..SINGLE_ROWS {
            let i = index + r as u32 * SINGLE_PITCH;
            let y_minus = if r == 0 { north } else { centre[r - 1] };
            let y_plus = if r == SINGLE_ROWS - 1 { south } else { centre[r + 1] };
            out[r] = coefficient[r]
                * laplacian7_fma(
                    centre[r],
                    [plane.load(i - 1), plane.load(i + 1)],
                    [y_minus, y_plus],
                    [below[r], above[r]],
                );
        }
    }
    out
}

/// Step 5, single pass: a whole RK4 step in one launch, `u_next = u + dt·v1 + dt²/2·v2 +
/// dt³/6·v3 + dt⁴/24·A v3`, the four stencil levels pipelined along z.
///
/// Each thread owns one x column and `SINGLE_ROWS` consecutive rows of an xy tile (halo 4)
/// and marches along z. At plane t it starts loading u(t+2) and, all from planes finished at
/// t−1, computes v1(t−1), v2(t−2), v3(t−3) and A v3(t−4): the planes below and above come
/// from registers (two per level), the current plane of each level from shared memory (x and
/// y neighbours). Even and odd planes use separate shared buffers, so a plane costs one
/// barrier. The polynomial is accumulated in registers as the levels pass (three partial sums
/// per cell, each term one fused multiply-add: within rounding of [`rk4_polynomial`], not
/// bit-identical to it). Level L is valid `L` cells inside the tile, so the tile's outer 4
/// rings compute values that are discarded, and rows of threads nearer the edge than a level
/// skip it. The loop is unrolled three times, the lifetime of a plane in registers, so the
/// pipeline advances by renaming registers instead of moving them; between the march's ends
/// ([`single_steady_steps`]) its steps test nothing per plane (no z face, no plane to load
/// outside the grid, no output plane outside the segment), and the rows of threads that skip
/// no level (all but the two at each y edge) march a copy without the skips' tests.
///
/// Writes output planes `z_first .. z_first + z_count` only (the whole grid: 0 and nz; a
/// slab of a split run: its own planes, not its halos, or one half of them at a time so that
/// the other half's halo exchange overlaps it); the other planes of `u_next` are left as they
/// were.
/// Thread mapping: a persistent 1-D grid of blocks of `SINGLE_TX × SINGLE_TY` threads (one
/// wave). First `columns_per_block` rounds of whole tile columns: in round r block b marches
/// tile `r·gridDim.x + b` through all `z_count` planes, so the blocks running at one time hold
/// neighbouring tiles at about the same plane and share their halos (and the partial sectors
/// of their output rows) in L2 instead of reading them from DRAM again. The tile columns left
/// over (fewer than the blocks), × `z_count` planes (column-major), are cut into equal runs of
/// `planes_per_block`; a block marches its run, which may span the end of one column and the
/// start of the next. Each segment pays `2·SINGLE_LAG` planes of pipeline fill. Equal work per
/// block leaves no tail wave and no idle SM. With `signals` (a split run's exchange by rounds,
/// [`RoundSignals`]), a block waits before each round for the halo rows its tiles read and
/// counts itself done after it; all zero, neither.
/// Bytes per cell: read u once (plus the halo's share: tile/outputs = 64·32 / 56·24 = 1.52,
/// mostly L2 hits), write u_next once: 8 B from DRAM, the floor. Shared-memory traffic per
/// cell and level: one store, 3 loads. u_next must not alias u.
/// Measured at 600³ on an H100: 0.955-0.959 ms per step (1.66× the copy floor); DRAM reads
/// 0.89 GB a step (1.62 GB when each block marched its own run of columns, 1.245 ms).
// 1024 threads a block: at most 64 registers, all used (two steady copies). The shape declared
// (`.reqntid`): no BSSY/BSYNC. No `threadIdx` hints: with them LLVM's code spills 140 B.
#[kernel(block(64, 16), thread_idx_hints = false, dynamic_shared = SINGLE_SHARED_BYTES)]
// Explicit bounds and index loops over the pipeline's registers, as written for the unroller.
#[allow(clippy::too_many_arguments, clippy::manual_range_contains, clippy::needless_range_loop)]
pub unsafe fn heat_rk4_single(
    u: *const f32,
    u_next: *mut f32,
    nx: u32,
    ny: u32,
    nz: u32,
    a: f32,
    terms: Rk4Terms,
    columns_per_block: u32,
    planes_per_block: u32,
    z_first: u32,
    z_count: u32,
    signals: RoundSignals,
) {
    const R: usize = SINGLE_ROWS;
    if nx < 3 || ny < 3 || nz < 3 || z_count == 0 || z_first >= nz || z_count > nz - z_first {
        return;
    }
    let planes = ptxkit_device::dynamic_shared_f32!(heat_single_planes);
    let (tx, ty) = (thread::thread_idx_x(), thread::thread_idx_y());
    // Zero the planes once, pads included, so no value is ever read uninitialised.
    let mut k = ty * SINGLE_TX + tx;
    while k < 2 * 4 * SINGLE_SPAN {
        unsafe { planes.store(k, 0.0) };
        k += SINGLE_TX * SINGLE_TY;
    }

    let (nx_i, ny_i, nz_i) = (nx as i32, ny as i32, nz as i32);
    let plane = nx as usize * ny as usize;
    // (`max(1)`: nonzero for the compiler too, so the division has no panic path.)
    let tiles_x = nx.div_ceil(SINGLE_OUT_W).max(1);
    let tiles = tiles_x * ny.div_ceil(SINGLE_OUT_H);
    // Level L is valid only L rows inside the tile, so a row of threads whose rows all lie
    // nearer the tile's y edges skips the levels it cannot use (a warp-uniform branch).
    // `inset`: the largest distance of one of this thread's rows from those edges.
    let middle = (ty * R as u32).max((SINGLE_TILE_H - 1) / 2).min(ty * R as u32 + R as u32 - 1);
    let inset = middle.min(SINGLE_TILE_H - 1 - middle);
    let index = (ty * R as u32 + 1) * SINGLE_PITCH + tx + 1;
    // The two buffers' indices of this thread's cell add up to `buffers`.
    let buffers = 2 * index + 4 * SINGLE_SPAN;
    let Rk4Terms { dt, dt2, dt3, dt4 } = terms;
    let lag = SINGLE_LAG as i32;

    // Marches tile `tile` (row-major over the xy tiles) from output plane z0 to z1.
    let march = #[inline(always)]
    |tile: u32, z0: i32, z1: i32| {
        let (x0, y0) = ((tile % tiles_x) * SINGLE_OUT_W, (tile / tiles_x) * SINGLE_OUT_H);
        let gx = (x0 + tx) as i32 - SINGLE_HALO as i32;
        let gy0 = (y0 + ty * R as u32) as i32 - SINGLE_HALO as i32;
        let owns_output_x = tx >= SINGLE_HALO && tx < SINGLE_TX - SINGLE_HALO && gx < nx_i;
        // Per row: the cell's offset in its plane, clamped into the grid (cells outside it
        // feed only discarded values), the stencil's coefficient (a inside, 0 on the faces
        // and outside: the stages are 0 on the faces; a product, not a select, so the
        // compiler keeps the stencils branch-free), and whether the cell is an output.
        let mut offset = [0u32; R];
        let mut coefficient = [0.0f32; R];
        let mut writes = [false; R];
        let clamped_x = gx.max(0).min(nx_i - 1) as u32;
        for r in 0..R {
            let gy = gy0 + r as i32;
            let row = ty * R as u32 + r as u32;
            offset[r] = gy.max(0).min(ny_i - 1) as u32 * nx + clamped_x;
            let interior_xy = gx > 0 && gx < nx_i - 1 && gy > 0 && gy < ny_i - 1;
            coefficient[r] = if interior_xy { a } else { 0.0 };
            writes[r] = owns_output_x && row >= SINGLE_HALO && row < SINGLE_TILE_H - SINGLE_HALO && gy < ny_i;
        }
        // A level at plane p is zeroed on the z faces; `masked` is false where the caller
        // knows p is inside.
        let on_face = #[inline(always)]
        |v: [f32; R], p: i32, masked: bool| -> [f32; R] {
            let inside = if masked & ((p <= 0) | (p >= nz_i - 1)) { 0.0 } else { 1.0 };
            v.map(|x| x * inside)
        };
        // One plane: start loading u(t+2), store each level's current plane, then compute
        // v1(t−1), v2(t−2), v3(t−3), A v3(t−4) and write the output plane t−4. `masked`:
        // whether a z face, a plane to load outside the grid or an output plane outside
        // `z0..z1` may occur (the unmasked copy serves the steady march between them, with
        // none of those tests). `full`: this row of threads skips no level (`inset` ≥ 4), so
        // the copy for it tests none (no branch per level and plane).
        let step = #[inline(always)]
        |t: i32, s: Pipeline, masked: bool, full: bool| -> Pipeline {
            let mut ahead = [0.0f32; R];
            if !masked || ((t + 2 >= 0) & (t + 2 < nz_i)) {
                for r in 0..R {
                    ahead[r] = unsafe { *s.load.add(offset[r] as usize) };
                }
            }
            let [u_new, u_next_plane] = s.ahead;
            // A thread writing plane t+2's buffer has passed plane t+1's barrier, which every
            // thread reaches only after its reads of plane t: one barrier per plane suffices.
            let buffer = s.buffer;
            for l in 0..4 {
                for r in 0..R {
                    let i = buffer + l as u32 * SINGLE_SPAN + r as u32 * SINGLE_PITCH;
                    unsafe { planes.store(i, s.level[l][1][r]) };
                }
            }
            thread::sync_threads();
            let stencil = #[inline(always)]
            |l: u32, levels: &[[f32; R]; 2], above: &[f32; R]| unsafe {
                column_stencil(planes, buffer + l * SINGLE_SPAN, levels, above, &coefficient)
            };
            let v1 = on_face(stencil(0, &s.level[0], &u_new), t - 1, masked);
            let v2 = if full || inset >= 2 {
                on_face(stencil(1, &s.level[1], &v1), t - 2, masked)
            } else {
                [0.0; R]
            };
            let v3 = if full || inset >= 3 {
                on_face(stencil(2, &s.level[2], &v2), t - 3, masked)
            } else {
                [0.0; R]
            };
            let p = t - lag;
            if (full || inset >= SINGLE_HALO) && (!masked || (p >= z0 && p < z1)) {
                let a_v3 = on_face(stencil(3, &s.level[3], &v3), p, masked);
                for r in 0..R {
                    let (address, value) =
                        (s.store.wrapping_add(offset[r] as usize), fma(dt4, a_v3[r], s.acc[2][r]));
                    unsafe { memory::store_if(address, value, writes[r]) };
                }
            }
            let mut acc = [[0.0; R]; 3];
            for r in 0..R {
                acc[2][r] = fma(dt3, v3[r], s.acc[1][r]);
                acc[1][r] = fma(dt2, v2[r], s.acc[0][r]);
                acc[0][r] = fma(dt, v1[r], s.level[0][1][r]);
            }
            let [u_here, v1_here, v2_here, v3_here] = s.level.map(|[_, here]| here);
            Pipeline {
                ahead: [u_next_plane, ahead],
                level: [[u_here, u_new], [v1_here, v1], [v2_here, v2], [v3_here, v3]],
                acc,
                load: s.load.wrapping_add(plane),
                store: s.store.wrapping_add(plane),
                buffer: buffers - buffer,
            }
        };
        let step3 = #[inline(always)]
        |t: i32, s: Pipeline| -> Pipeline {
            if single_steady_steps(t, z0, nz_i) {
                if inset >= SINGLE_HALO {
                    step(t + 2, step(t + 1, step(t, s, false, true), false, true), false, true)
                } else {
                    step(t + 2, step(t + 1, step(t, s, false, false), false, false), false, false)
                }
            } else {
                step(t + 2, step(t + 1, step(t, s, true, false), true, false), true, false)
            }
        };

        let (mut t, end) = (z0 - lag, z1 + lag);
        let at = |z: i32| (z as isize).wrapping_mul(plane as isize);
        let mut state = Pipeline {
            ahead: [[0.0; R]; 2],
            level: [[[0.0; R]; 2]; 4],
            acc: [[0.0; R]; 3],
            load: u.wrapping_offset(at(t + 2)),
            store: u_next.wrapping_offset(at(t - lag)),
            buffer: (t & 1) as u32 * 4 * SINGLE_SPAN + index,
        };
        // Prime the pipeline with u(t) and u(t+1).
        for (k, ahead) in state.ahead.iter_mut().enumerate() {
            let z = t + k as i32;
            if z >= 0 && z < nz_i {
                for r in 0..R {
                    ahead[r] = unsafe { *u.wrapping_offset(at(z)).add(offset[r] as usize) };
                }
            }
        }
        while t + 3 <= end {
            state = step3(t, state);
            t += 3;
        }
        while t < end {
            state = step(t, state, true, false);
            t += 1;
        }
    };

    // The tiles of the whole-column rounds (at most all of them, so that no argument sends a
    // block past the grid), then the runs over the columns left.
    let (blocks, block) = (thread::grid_dim_x(), thread::block_idx_x());
    let round_tiles = (columns_per_block * blocks).min(tiles);
    let mut round_tile = block;
    let mut start = block * planes_per_block;
    let stop = (start + planes_per_block).min((tiles - round_tiles) * z_count);
    let flags = signals.flags as *mut u32;
    let signalling = signals.flags != 0;
    let leader = tx == 0 && ty == 0;
    // The round of the next segment: the whole-column rounds, then `columns_per_block` for
    // the runs (whose halo rows are waited for once).
    let mut round = 0;
    // One call site of `march` (it is inlined once).
    loop {
        let (tile, k0, k1) = if round_tile < round_tiles {
            round_tile += blocks;
            (round_tile - blocks, 0, z_count)
        } else if start < stop {
            let (column, k0) = (start / z_count, start % z_count);
            let k1 = (k0 + (stop - start)).min(z_count);
            start += k1 - k0;
            (round_tiles + column, k0, k1)
        } else {
            break;
        };
        if signalling && round <= columns_per_block {
            let rows =
                if round < columns_per_block { rows_read_in_round(round, blocks, tiles_x, ny) } else { ny };
            unsafe { wait_for_halo_rows(flags, signals, rows, leader) };
        }
        // The previous segment's last reads and this one's first writes share a buffer.
        thread::sync_threads();
        march(tile, (z_first + k0) as i32, (z_first + k1) as i32);
        if signalling && round < columns_per_block {
            unsafe { count_block_done(flags.add(2 + round as usize), leader) };
        }
        round += 1;
    }
    // Every block ends the runs' round, with a run or without.
    if signalling {
        unsafe { count_block_done(flags.add(2 + columns_per_block as usize), leader) };
    }
}

/// Waits (the block's `leader` spinning, the others at a barrier) until the halo planes'
/// rows `0..rows` have arrived from each side in `signals.sides`.
///
/// # Safety
/// `flags` must be [`RoundSignals::flags`] of a live allocation, written only atomically
/// meanwhile (the copy engines' stream memory operations).
#[inline(always)]
unsafe fn wait_for_halo_rows(flags: *mut u32, signals: RoundSignals, rows: u32, leader: bool) {
    if leader {
        let target = signals.base.wrapping_add(rows);
        for side in 0..2 {
            if signals.sides & (1 << side) != 0 {
                // SAFETY: the caller's contract; an atomic read (add 0) sees the peers' writes.
                while (unsafe { atomic::fetch_add_system(flags.add(side), 0) }.wrapping_sub(target) as i32)
                    < 0
                {}
            }
        }
        // The halo's values are read after the flags that announced them.
        fence::system();
    }
    thread::sync_threads();
}

/// Counts this block in `counter` once every thread's writes of the round are visible to the
/// GPU's copy engines: a barrier (the block's writes happen before it), then the `leader`'s
/// fence and add, as a cooperative grid barrier does (the fence is cumulative: it orders what
/// the barrier made visible to the leader).
///
/// # Safety
/// `counter` must be one of [`RoundSignals::flags`]' round counters.
#[inline(always)]
unsafe fn count_block_done(counter: *mut u32, leader: bool) {
    thread::sync_threads();
    if leader {
        fence::system();
        // SAFETY: the caller's contract.
        unsafe { atomic::add_system(counter, 1) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cells of a 4×4×4 grid hold distinct small integers, so every sum below is exact in f32
    /// and a wrong neighbour, sign or operator changes the result.
    fn cells() -> [f32; 64] {
        core::array::from_fn(|i| ((i * 37 + 11) % 61) as f32)
    }

    /// `stage_at` against the definition written out here: a times the six neighbours of
    /// interior cell (1, 2, 1) minus six times the cell (a = 0.5: exact).
    #[test]
    fn stage_at_is_a_times_the_seven_point_laplacian() {
        let f = cells();
        let (nx, plane, i) = (4, 16, 16 + 2 * 4 + 1);
        let want = 0.5
            * ((f[i - 1] + f[i + 1]) + (f[i - nx] + f[i + nx]) + (f[i - plane] + f[i + plane]) - 6.0 * f[i]);
        assert_eq!(stage_at(|k| f[k], i, nx, plane, 0.5), want);
        assert_ne!(want, 0.0);
    }

    /// The fused centre term rounds once less than [`laplacian7`]; on integers both are exact
    /// and equal.
    #[test]
    fn laplacian7_fma_is_the_seven_point_laplacian() {
        let (c, x, y, z) = (2.0, [1.0, 4.0], [9.0, 16.0], [25.0, 36.0]);
        assert_eq!(laplacian7_fma(c, x, y, z), 91.0 - 12.0);
        assert_eq!(laplacian7_fma(c, x, y, z), laplacian7(c, x, y, z));
    }

    /// The single pass's steady steps, against their definition by plane: for every march
    /// of small grids (every first output plane z0 and last z1), each triple of steps the
    /// function calls steady computes levels only at interior planes, loads only planes of
    /// the grid and writes only planes of `z0..z1`; and each triple it does not call steady
    /// breaks one of these (it is the largest such set, not merely a safe one).
    #[test]
    fn single_steady_steps_are_those_that_meet_no_end_of_the_march() {
        let lag = SINGLE_LAG as i32;
        let mut steady_seen = 0;
        for nz in 3..24 {
            for z0 in 0..nz {
                for z1 in z0 + 1..=nz {
                    let mut t = z0 - lag;
                    while t + 3 <= z1 + lag {
                        let computes_inside = (t - 4..=t + 1).all(|p| p > 0 && p < nz - 1);
                        let loads_inside = (t + 2..=t + 4).all(|p| p >= 0 && p < nz);
                        let writes_inside = (t - 4..=t - 2).all(|p| p >= z0 && p < z1);
                        let steady = single_steady_steps(t, z0, nz);
                        assert_eq!(
                            steady,
                            computes_inside && loads_inside && writes_inside,
                            "nz {nz}, z {z0}..{z1}, t {t}"
                        );
                        steady_seen += usize::from(steady);
                        t += 3;
                    }
                }
            }
        }
        assert!(steady_seen > 1000, "{steady_seen}");
    }

    /// RK4's polynomial against its definition evaluated in f64: u + dt·v1 + dt²/2·v2 +
    /// dt³/6·v3 + dt⁴/24·A v3. Tolerance: five f32 roundings of terms below 2 (dt = 0.5), at
    /// most 5 × 2⁻²³ ≈ 6e-7; any wrong coefficient or sign moves the result by 0.01 or more.
    #[test]
    fn rk4_polynomial_is_the_taylor_sum_to_fourth_order() {
        let (u, v, a_v3, dt) = (1.0f32, [3.0f32, 5.0, 7.0], 11.0f32, 0.5f32);
        let d = f64::from(dt);
        let want = 1.0 + d * 3.0 + d * d / 2.0 * 5.0 + d * d * d / 6.0 * 7.0 + d * d * d * d / 24.0 * 11.0;
        let got = f64::from(rk4_polynomial(u, v, a_v3, dt));
        assert!((got - want).abs() < 1e-6, "{got} against {want}");
    }

    /// The shared-memory layouts, from the tile geometry: the 2.5-D kernels' 32×8 block with a
    /// one-cell ring (34×10 floats); the single pass's 64×32 tile with a one-cell pad (66×34
    /// floats), two buffers of four levels: 71,808 bytes. (The kernels index by these; a
    /// smaller pitch or span would overlap planes.)
    /// The rows a round of the single pass completes and the halo rows it reads, counted
    /// tile by tile: a tile `t` (row-major, `tiles_x` a row) writes output rows
    /// `[t / tiles_x · OUT_H, + OUT_H)` and reads `HALO` rows beyond them.
    #[test]
    fn a_round_writes_whole_tile_rows_and_reads_its_halo() {
        // 1200² on 132 blocks: 22 tiles a row, 6 tile rows a round.
        assert_eq!(rows_written_after_round(0, 132, 22, 1200), 144);
        assert_eq!(rows_read_in_round(0, 132, 22, 1200), 148);
        assert_eq!(rows_written_after_round(7, 132, 22, 1200), 1152);
        for (blocks, tiles_x, ny) in
            [(132u32, 22u32, 1200u32), (132, 31, 700), (7, 3, 100), (100, 250, 2000), (1, 1, 30)]
        {
            let tile_rows = ny.div_ceil(SINGLE_OUT_H);
            let rounds = tiles_x * tile_rows / blocks;
            for round in 0..rounds {
                let done = (round + 1) * blocks;
                let full_rows = (0..tile_rows).filter(|&row| (row + 1) * tiles_x <= done).count() as u32;
                assert_eq!(
                    rows_written_after_round(round, blocks, tiles_x, ny),
                    (full_rows * SINGLE_OUT_H).min(ny),
                    "{blocks} {tiles_x} {ny} round {round}"
                );
                let read = (round * blocks..done)
                    .map(|t| (t / tiles_x + 1) * SINGLE_OUT_H + SINGLE_HALO)
                    .max()
                    .unwrap();
                assert_eq!(
                    rows_read_in_round(round, blocks, tiles_x, ny),
                    read.min(ny),
                    "{blocks} {tiles_x} {ny}"
                );
            }
        }
    }

    #[test]
    fn shared_layouts_are_the_padded_tiles() {
        assert_eq!(MARCH_SPAN, 34 * 10);
        assert_eq!((SINGLE_PITCH, SINGLE_SPAN), (66, 66 * 34));
        assert_eq!(SINGLE_SHARED_BYTES, 2 * 4 * 66 * 34 * 4);
        assert_eq!((SINGLE_OUT_W, SINGLE_OUT_H), (56, 24));
    }
}
