//! Gray-Scott reaction-diffusion.
//!
//! dU/dt = Du·∇²U − U·V² + F·(1−U),  dV/dt = Dv·∇²V + U·V² − (F+k)·V
//!
//! Explicit Euler with step `dt`, the 5-point Laplacian (−4 centre + 4 neighbours) on a
//! periodic grid, U and V clamped to [0, 1] after each step, float32. Fields are row-major
//! `width × height` arrays, index `y * width + x`.
//!
//! The kernels follow the reference write-up's progression, and go past it:
//! 1. [`gray_scott_laplacian`] + [`gray_scott_update`]: two launches per step, the
//!    Laplacians go through device memory (the write-up's "v0" runs only the Laplacian on the
//!    GPU, "v1" both).
//! 2. [`gray_scott_fused`]: one launch per step, Laplacian and update in registers, ping-pong
//!    buffers (the write-up's final step; the default); [`gray_scott_fused_x4`] is the same
//!    with four columns per thread through `float4` loads and stores.
//! 3. [`gray_scott_tiled`]: fused, with the block's cells and halo staged in shared memory.
//! 4. [`gray_scott_temporal`]: several steps per launch on a tile held in registers, so a
//!    step costs a fraction of the 16 bytes per cell that any single-step kernel must move.
//! 5. [`gray_scott_streaming_s8`] (and `_s1` .. `_s7`): temporal blocking by 2.5-D streaming,
//!    blocks marching down strips with a wavefront of time levels, so redundant halo work is
//!    only at the strip's sides.
//!
//! Beside the progression, [`gray_scott_map`] steps many small tiles with their own (F, k)
//! in one launch, for the parameter map.
//!
//! The kernels are three PTX modules (the `#[cfg(feature = ...)]` on each): `grayscott`, and
//! the streaming kernels' instances, most of the PTX, in `grayscott_streaming` and
//! `grayscott_streaming_c1`. An edit here recompiles the three at once, and reassembles only
//! those whose PTX changed.

use ptxkit_device::kernel;
use ptxkit_device::{shared_array, thread, warp};

/// The model's rates, passed to the kernels by value.
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Rates {
    /// Diffusion rate of U.
    pub du: f32,
    /// Diffusion rate of V.
    pub dv: f32,
    /// Feed rate F.
    pub feed: f32,
    /// Kill rate k.
    pub kill: f32,
    /// Time step.
    pub dt: f32,
}

impl Rates {
    /// One explicit Euler step of the reaction-diffusion equations for one cell, given its
    /// values and their Laplacians; returns the new (U, V), clamped to [0, 1].
    #[inline(always)]
    pub fn step(&self, u: f32, v: f32, lu: f32, lv: f32) -> (f32, f32) {
        let uvv = u * v * v;
        let du_dt = self.du * lu - uvv + self.feed * (1.0 - u);
        let dv_dt = self.dv * lv + uvv - (self.feed + self.kill) * v;
        (add_clamp01(u, du_dt * self.dt), add_clamp01(v, dv_dt * self.dt))
    }
}

// In a file of their own (shared with the colormap's and Physarum's kernels, which are built
// as other PTX modules), and here under their old paths.
pub use crate::math::{clamp01, wrap_into};

/// `clamp01(a + b)`: the sum rounded to nearest, then clamped to [0, 1], NaN to +0 (and
/// −0 to +0). On the GPU this is the add and a `cvt.sat.f32.f32`, which ptxas folds into one
/// instruction (`FADD.SAT`), where the separate add, max and min took three; both give the
/// same bits for every input (a GPU test checks the special values). (Written as
/// `add.rn.sat.f32` in one asm statement, the same SASS results for most kernels, but LLVM
/// cannot see the add, and `gray_scott_temporal` spilled 24 bytes.)
#[inline(always)]
pub fn add_clamp01(a: f32, b: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let clamped: f32;
        // SAFETY: register arithmetic only.
        unsafe {
            core::arch::asm!(
                "cvt.sat.f32.f32 {out}, {x};",
                out = out(reg32) clamped,
                x = in(reg32) a + b,
                options(pure, nomem, nostack, preserves_flags),
            );
        }
        clamped
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let sum = a + b;
        // `>` is false for NaN and for −0: both give +0, as the GPU's saturation does.
        if sum > 0.0 { sum.min(1.0) } else { 0.0 }
    }
}

/// The 5-point Laplacian: the sum of the four neighbours minus four times the centre.
///
/// On the GPU the last two operations are one fused multiply-add, `fma.rn(-4, centre, sum)`:
/// `4 · centre` is exact in binary floating point (a power of two) unless it overflows, so
/// rounding `sum − 4 · centre` once gives the same bits as the CPU's multiply then subtract
/// for every `|centre| < 2¹²⁵` (the product overflows from about 2¹²⁶ on, where the CPU's
/// is infinite and the fused one is not). The fields are in [0, 1]: every step clamps them, and a checkpoint outside that is
/// refused. (This is the only multiply-add the Gray-Scott kernels use: any other would round
/// differently from the CPU.)
#[inline(always)]
pub fn laplacian5(centre: f32, left: f32, right: f32, up: f32, down: f32) -> f32 {
    let neighbours = (left + right) + (up + down);
    #[cfg(target_arch = "nvptx64")]
    {
        core::f32::math::mul_add(-4.0, centre, neighbours)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        neighbours - 4.0 * centre
    }
}

/// The index before `i` on a periodic axis of length `n`.
#[inline(always)]
pub fn wrap_prev(i: u32, n: u32) -> u32 {
    if i == 0 { n - 1 } else { i - 1 }
}

/// The index after `i` on a periodic axis of length `n`.
#[inline(always)]
pub fn wrap_next(i: u32, n: u32) -> u32 {
    if i + 1 == n { 0 } else { i + 1 }
}

/// The flat indices of a cell and its four periodic neighbours.
#[derive(Clone, Copy, Debug)]
pub struct Stencil5 {
    pub centre: usize,
    pub left: usize,
    pub right: usize,
    pub up: usize,
    pub down: usize,
}

impl Stencil5 {
    /// The stencil around (x, y) on a periodic `width × height` grid.
    #[inline(always)]
    pub fn periodic(x: u32, y: u32, width: u32, height: u32) -> Self {
        let row = |y: u32| y as usize * width as usize;
        let (up, here, down) = (row(wrap_prev(y, height)), row(y), row(wrap_next(y, height)));
        Self {
            centre: here + x as usize,
            left: here + wrap_prev(x, width) as usize,
            right: here + wrap_next(x, width) as usize,
            up: up + x as usize,
            down: down + x as usize,
        }
    }

    /// The Laplacian of `field` at this stencil.
    ///
    /// # Safety
    /// `field` must point to a whole grid of the size the stencil was built for.
    #[inline(always)]
    pub unsafe fn laplacian(&self, field: *const f32) -> f32 {
        // SAFETY: every index lies inside the grid, by construction.
        unsafe {
            laplacian5(
                *field.add(self.centre),
                *field.add(self.left),
                *field.add(self.right),
                *field.add(self.up),
                *field.add(self.down),
            )
        }
    }
}

/// Step 1a, the write-up's "v1" Laplacian: `lu = ∇²u`, `lv = ∇²v`.
///
/// Thread mapping: one thread per cell of a 2-D launch (x along rows). Bytes per cell: reads
/// u and v (8 B; the four neighbour reads hit in cache), writes lu and lv (8 B): 16 B.
#[cfg(feature = "grayscott")]
#[kernel]
pub unsafe fn gray_scott_laplacian(
    u: *const f32,
    v: *const f32,
    lu: *mut f32,
    lv: *mut f32,
    width: u32,
    height: u32,
) {
    let (x, y) = thread::index_2d();
    if x >= width || y >= height {
        return;
    }
    let at = Stencil5::periodic(x, y, width, height);
    unsafe {
        *lu.add(at.centre) = at.laplacian(u);
        *lv.add(at.centre) = at.laplacian(v);
    }
}

/// Step 1b, the write-up's "v1" update: one Euler step from the precomputed Laplacians,
/// in place.
///
/// Thread mapping: one thread per cell of a 2-D launch. Bytes per cell: reads u, v, lu, lv
/// (16 B), writes u and v (8 B): 24 B. With the Laplacian kernel, 40 B per cell per step.
#[cfg(feature = "grayscott")]
#[kernel]
pub unsafe fn gray_scott_update(
    u: *mut f32,
    v: *mut f32,
    lu: *const f32,
    lv: *const f32,
    width: u32,
    height: u32,
    rates: Rates,
) {
    let (x, y) = thread::index_2d();
    if x >= width || y >= height {
        return;
    }
    let i = (y * width + x) as usize;
    unsafe {
        let (u_new, v_new) = rates.step(*u.add(i), *v.add(i), *lu.add(i), *lv.add(i));
        *u.add(i) = u_new;
        *v.add(i) = v_new;
    }
}

/// Step 2, the write-up's fused kernel: Laplacian and update in one pass, reading `u`, `v`
/// and writing the next step to `u_next`, `v_next` (ping-pong buffers).
///
/// Thread mapping: a 2-D launch, x along rows; each thread marches down `rows_per_thread`
/// consecutive rows of its column, keeping the rows above and at the current cell in
/// registers (with 1 row per thread this is the one-thread-per-cell kernel of the write-up).
/// Bytes per cell: reads u and v (8 B; the left/right neighbours hit in L1), writes the next u
/// and v (8 B): 16 B, the single-step minimum.
#[cfg(feature = "grayscott")]
#[kernel]
#[allow(clippy::too_many_arguments)]
pub unsafe fn gray_scott_fused(
    u: *const f32,
    v: *const f32,
    u_next: *mut f32,
    v_next: *mut f32,
    width: u32,
    height: u32,
    rates: Rates,
    rows_per_thread: u32,
) {
    let (x, band) = thread::index_2d();
    let first = band * rows_per_thread;
    if x >= width || first >= height {
        return;
    }
    let last = (first + rows_per_thread).min(height);
    let (w, x) = (width as usize, x as usize);
    // Offsets of the left and right neighbours from the cell (periodic at the edges).
    let left = wrap_prev(x as u32, width) as isize - x as isize;
    let right = wrap_next(x as u32, width) as isize - x as isize;
    unsafe {
        let above = wrap_prev(first, height) as usize * w + x;
        let (mut u_up, mut v_up) = (*u.add(above), *v.add(above));
        let mut here = first as usize * w + x;
        let (mut u_here, mut v_here) = (*u.add(here), *v.add(here));
        for y in first..last {
            let below = if y + 1 == height { x } else { here + w };
            let (u_down, v_down) = (*u.add(below), *v.add(below));
            let (uc, vc) = (u.add(here), v.add(here));
            let lu = laplacian5(u_here, *uc.offset(left), *uc.offset(right), u_up, u_down);
            let lv = laplacian5(v_here, *vc.offset(left), *vc.offset(right), v_up, v_down);
            let (u_new, v_new) = rates.step(u_here, v_here, lu, lv);
            *u_next.add(here) = u_new;
            *v_next.add(here) = v_new;
            (u_up, u_here, v_up, v_here) = (u_here, u_down, v_here, v_down);
            here = below;
        }
    }
}

/// Four adjacent cells of a row, for 16-byte vector loads and stores.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Quad([f32; 4]);

/// Step 2 again, with vector accesses: [`gray_scott_fused`] with four adjacent columns per
/// thread, read and written as `float4` (`ld.global.v4.f32`, `st.global.v4.f32`), so that a
/// row of a field is one load per four cells; the left and right neighbours of the four are
/// four scalar loads (left and right, of U and V; L1 hits). Needs `width % 4 == 0` (so every row starts 16-byte
/// aligned; the host checks). Same float operations per cell as [`gray_scott_fused`]:
/// bit-identical results.
///
/// Thread mapping: a 2-D launch, x along rows in units of four columns (thread `t` holds
/// columns `4t .. 4t + 4`); each thread marches down `rows_per_thread` consecutive rows,
/// keeping the rows above and at the current one in registers. Bytes per cell: 16, as fused.
#[cfg(feature = "grayscott")]
#[kernel]
#[allow(clippy::too_many_arguments)]
pub unsafe fn gray_scott_fused_x4(
    u: *const f32,
    v: *const f32,
    u_next: *mut f32,
    v_next: *mut f32,
    width: u32,
    height: u32,
    rates: Rates,
    rows_per_thread: u32,
) {
    let (quad, band) = thread::index_2d();
    let x0 = quad * 4;
    let first = band * rows_per_thread;
    if width % 4 != 0 || x0 >= width || first >= height {
        return;
    }
    let last = (first + rows_per_thread).min(height);
    let w = width as usize;
    // Columns left of the first and right of the last (periodic at the edges).
    let (left, right) = (wrap_prev(x0, width) as usize, wrap_next(x0 + 3, width) as usize);
    let x0 = x0 as usize;
    // SAFETY (all accesses): rows are `width` floats, a multiple of 4, from 16-byte aligned
    // allocations, so `row * w + x0` is a 16-byte aligned index inside the field.
    let load =
        |field: *const f32, row: u32| unsafe { (*(field.add(row as usize * w + x0) as *const Quad)).0 };
    let (mut u_up, mut v_up) = (load(u, wrap_prev(first, height)), load(v, wrap_prev(first, height)));
    let (mut u_here, mut v_here) = (load(u, first), load(v, first));
    for y in first..last {
        let below = wrap_next(y, height);
        let (u_down, v_down) = (load(u, below), load(v, below));
        let row = y as usize * w;
        let (ul, ur, vl, vr) =
            unsafe { (*u.add(row + left), *u.add(row + right), *v.add(row + left), *v.add(row + right)) };
        let (mut u_new, mut v_new) = ([0.0f32; 4], [0.0f32; 4]);
        for j in 0..4 {
            let (u_left, v_left) = if j == 0 { (ul, vl) } else { (u_here[j - 1], v_here[j - 1]) };
            let (u_right, v_right) = if j == 3 { (ur, vr) } else { (u_here[j + 1], v_here[j + 1]) };
            let lu = laplacian5(u_here[j], u_left, u_right, u_up[j], u_down[j]);
            let lv = laplacian5(v_here[j], v_left, v_right, v_up[j], v_down[j]);
            (u_new[j], v_new[j]) = rates.step(u_here[j], v_here[j], lu, lv);
        }
        unsafe {
            *(u_next.add(row + x0) as *mut Quad) = Quad(u_new);
            *(v_next.add(row + x0) as *mut Quad) = Quad(v_new);
        }
        (u_up, u_here, v_up, v_here) = (u_here, u_down, v_here, v_down);
    }
}

/// Block shape of [`gray_scott_tiled`] (fixed: it sizes the shared tile).
pub const TILE_W: u32 = 32;
pub const TILE_H: u32 = 8;
pub const TILE_SPAN: usize = ((TILE_W + 2) * (TILE_H + 2)) as usize;

/// Step 3, tiled: the fused step with the block's `TILE_W × TILE_H` cells and their one-cell
/// halo loaded once into shared memory, then every neighbour read from there.
///
/// Thread mapping: one thread per cell, blocks of exactly `TILE_W × TILE_H` threads; the
/// block loads its `(TILE_W + 2) × (TILE_H + 2)` window (periodic) cooperatively. Bytes per
/// cell: 16 from DRAM, as fused; it trades the L1 hits of the neighbour reads for shared loads
/// and a barrier.
#[cfg(feature = "grayscott")]
#[kernel]
pub unsafe fn gray_scott_tiled(
    u: *const f32,
    v: *const f32,
    u_next: *mut f32,
    v_next: *mut f32,
    width: u32,
    height: u32,
    rates: Rates,
) {
    if width == 0 || height == 0 {
        return;
    }
    let tile_u: *mut f32 = shared_array!(tiled_u: [f32; TILE_SPAN]);
    let tile_v: *mut f32 = shared_array!(tiled_v: [f32; TILE_SPAN]);
    let (x0, y0) = (thread::block_idx_x() * TILE_W, thread::block_idx_y() * TILE_H);
    let t = thread::thread_idx_y() * TILE_W + thread::thread_idx_x();
    let mut i = t as usize;
    while i < TILE_SPAN {
        let (tx, ty) = (i as u32 % (TILE_W + 2), i as u32 / (TILE_W + 2));
        // Window cell (tx, ty) is grid cell (x0 + tx - 1, y0 + ty - 1), periodically.
        let gx = wrap_into(x0 + tx + width - 1, width);
        let gy = wrap_into(y0 + ty + height - 1, height);
        let g = gy as usize * width as usize + gx as usize;
        unsafe {
            *tile_u.add(i) = *u.add(g);
            *tile_v.add(i) = *v.add(g);
        }
        i += (TILE_W * TILE_H) as usize;
    }
    thread::sync_threads();

    let (tx, ty) = (thread::thread_idx_x(), thread::thread_idx_y());
    let (x, y) = (x0 + tx, y0 + ty);
    if x >= width || y >= height {
        return;
    }
    let c = ((ty + 1) * (TILE_W + 2) + tx + 1) as usize;
    let row = (TILE_W + 2) as usize;
    unsafe {
        let at = |f: *mut f32, k: usize| *f.add(k);
        let lu = laplacian5(
            at(tile_u, c),
            at(tile_u, c - 1),
            at(tile_u, c + 1),
            at(tile_u, c - row),
            at(tile_u, c + row),
        );
        let lv = laplacian5(
            at(tile_v, c),
            at(tile_v, c - 1),
            at(tile_v, c + 1),
            at(tile_v, c - row),
            at(tile_v, c + row),
        );
        let (u_new, v_new) = rates.step(at(tile_u, c), at(tile_v, c), lu, lv);
        let g = y as usize * width as usize + x as usize;
        *u_next.add(g) = u_new;
        *v_next.add(g) = v_new;
    }
}

/// Temporal blocking geometry: each lane holds `TEMPORAL_COLS` adjacent columns of
/// `TEMPORAL_ROWS` rows; a warp spans `32 × TEMPORAL_COLS` columns; the block's
/// `TEMPORAL_WARPS` warps are stacked vertically.
pub const TEMPORAL_COLS: usize = 4;
pub const TEMPORAL_ROWS: usize = 6;
pub const TEMPORAL_WARPS: usize = 8;
/// The most steps one launch of [`gray_scott_temporal`] may take.
pub const TEMPORAL_MAX_STEPS: u32 = 8;
/// The window a block loads: columns and rows.
pub const TEMPORAL_SPAN_X: u32 = 32 * TEMPORAL_COLS as u32;
pub const TEMPORAL_SPAN_Y: u32 = (TEMPORAL_WARPS * TEMPORAL_ROWS) as u32;
pub const TEMPORAL_EDGE: usize = TEMPORAL_WARPS * 32 * TEMPORAL_COLS;

/// The output tile of one [`gray_scott_temporal`] block taking `steps` steps: the window less
/// a `steps`-wide halo on each side.
pub const fn temporal_tile(steps: u32) -> (u32, u32) {
    (TEMPORAL_SPAN_X - 2 * steps, TEMPORAL_SPAN_Y - 2 * steps)
}

/// Step 4, temporal blocking: `steps` (≤ [`TEMPORAL_MAX_STEPS`]) time steps in one launch.
///
/// Each block loads a `TEMPORAL_SPAN_X × TEMPORAL_SPAN_Y` window (periodic) into registers
/// and steps it `steps` times; the cells `steps` or more away from the window's edge are then
/// exact, and the block writes that inner tile ([`temporal_tile`]). Neighbours come from
/// registers (same lane), warp shuffles (the lanes left and right) and, for the rows above and
/// below a warp's band, a small shared-memory exchange with one barrier per step.
///
/// Thread mapping: blocks of `32 × TEMPORAL_WARPS` (256) threads; lane l of warp w holds
/// columns `4l..4l+4` of rows `6w..6w+6` of the 128 × 48 window. Bytes per cell per step:
/// about (8 × window/tile + 8) / steps from DRAM: 2.7 B at 8 steps (the window is 1.71× its
/// 112 × 32 tile), against 16 B for any single-step kernel; the cost moves to arithmetic on
/// the halo cells. Launch bounds (256 threads, 2 blocks per SM) cap it at 128 registers, so
/// one block's loads overlap the other's arithmetic: 42 µs per step at 4096² on an H200
/// (steps per launch tuned), against 48 µs for the earlier 8-row layout at 168 registers and
/// one block per SM, which ncu showed latency-bound at 52% SM throughput. Same float
/// operations as the other kernels: results are bit-identical.
#[cfg(feature = "grayscott")]
#[kernel(launch_bounds(256, 2))]
#[allow(clippy::too_many_arguments)]
pub unsafe fn gray_scott_temporal(
    u: *const f32,
    v: *const f32,
    u_next: *mut f32,
    v_next: *mut f32,
    width: u32,
    height: u32,
    rates: Rates,
    steps: u32,
) {
    const C: usize = TEMPORAL_COLS;
    const R: usize = TEMPORAL_ROWS;
    // Rows shared between neighbouring warps, double-buffered by step parity:
    // [parity][field][top | bottom][warp][column].
    let edges: *mut f32 = shared_array!(temporal_edges: [f32; 2 * 2 * 2 * TEMPORAL_EDGE]);
    let edge = |parity: u32, field: usize, bottom: usize, warp: usize, col: usize| -> usize {
        (((parity as usize * 2 + field) * 2 + bottom) * TEMPORAL_WARPS + warp) * 32 * C + col
    };

    if width == 0 || height == 0 || steps > TEMPORAL_MAX_STEPS {
        return;
    }
    let (tile_w, tile_h) = temporal_tile(steps);
    let lane = (thread::thread_idx_x() % 32) as usize;
    let warp_id = (thread::thread_idx_x() / 32) as usize;
    // Window origin in grid coordinates (may be negative: wrapped when loading).
    let origin_x = (thread::block_idx_x() * tile_w) as i64 - steps as i64;
    let origin_y = (thread::block_idx_y() * tile_h) as i64 - steps as i64;
    let (w, h) = (width as i64, height as i64);

    let mut cu = [[0.0f32; C]; R];
    let mut cv = [[0.0f32; C]; R];
    let mut columns = [0usize; C];
    for (j, gx) in columns.iter_mut().enumerate() {
        *gx = (origin_x + (lane * C + j) as i64).rem_euclid(w) as usize;
    }
    for i in 0..R {
        let gy = (origin_y + (warp_id * R + i) as i64).rem_euclid(h) as usize;
        for j in 0..C {
            let g = gy * width as usize + columns[j];
            unsafe {
                cu[i][j] = *u.add(g);
                cv[i][j] = *v.add(g);
            }
        }
    }

    for s in 0..steps {
        let parity = s % 2;
        // Publish this band's first and last rows, then read the neighbours' (the window's
        // first and last bands read their own: those cells are in the halo anyway).
        for j in 0..C {
            let col = lane * C + j;
            unsafe {
                *edges.add(edge(parity, 0, 0, warp_id, col)) = cu[0][j];
                *edges.add(edge(parity, 1, 0, warp_id, col)) = cv[0][j];
                *edges.add(edge(parity, 0, 1, warp_id, col)) = cu[R - 1][j];
                *edges.add(edge(parity, 1, 1, warp_id, col)) = cv[R - 1][j];
            }
        }
        thread::sync_threads();
        let above = if warp_id == 0 { 0 } else { warp_id - 1 };
        let below = if warp_id + 1 == TEMPORAL_WARPS { warp_id } else { warp_id + 1 };
        // The neighbouring bands' edge rows, read from shared memory only where used (short
        // live ranges keep the register count down).
        let edge_row = |field: usize, bottom: usize, warp: usize| -> [f32; C] {
            core::array::from_fn(|j| unsafe { *edges.add(edge(parity, field, bottom, warp, lane * C + j)) })
        };

        // Step the band in place, row by row, keeping the old row above.
        let (mut u_up, mut v_up) = (edge_row(0, 1, above), edge_row(1, 1, above));
        for i in 0..R {
            let (u_down, v_down) = if i + 1 < R {
                (cu[i + 1], cv[i + 1])
            } else {
                (edge_row(0, 0, below), edge_row(1, 0, below))
            };
            let (u_row, v_row) = (cu[i], cv[i]);
            // The columns either side of this lane's, from the neighbouring lanes.
            let u_left = warp::shfl_up_f32(u_row[C - 1], 1);
            let v_left = warp::shfl_up_f32(v_row[C - 1], 1);
            let u_right = warp::shfl_down_f32(u_row[0], 1);
            let v_right = warp::shfl_down_f32(v_row[0], 1);
            for j in 0..C {
                let (ul, vl) = if j == 0 { (u_left, v_left) } else { (u_row[j - 1], v_row[j - 1]) };
                let (ur, vr) = if j + 1 == C { (u_right, v_right) } else { (u_row[j + 1], v_row[j + 1]) };
                let lu = laplacian5(u_row[j], ul, ur, u_up[j], u_down[j]);
                let lv = laplacian5(v_row[j], vl, vr, v_up[j], v_down[j]);
                (cu[i][j], cv[i][j]) = rates.step(u_row[j], v_row[j], lu, lv);
            }
            (u_up, v_up) = (u_row, v_row);
        }
    }

    // Write the inner tile: window cells at least `steps` from every edge, inside the grid.
    let first = steps as usize;
    for i in 0..R {
        let wy = warp_id * R + i;
        let gy = origin_y + wy as i64;
        if wy < first || wy >= TEMPORAL_SPAN_Y as usize - first || gy >= h {
            continue;
        }
        for j in 0..C {
            let wx = lane * C + j;
            let gx = origin_x + wx as i64;
            if wx < first || wx >= TEMPORAL_SPAN_X as usize - first || gx >= w {
                continue;
            }
            let g = gy as usize * width as usize + gx as usize;
            unsafe {
                *u_next.add(g) = cu[i][j];
                *v_next.add(g) = cv[i][j];
            }
        }
    }
}

/// Cells per thread of the `streaming` kernels `gray_scott_streaming_s*`: two adjacent columns
/// of one row; the `gray_scott_streaming_c1_s*` kernels hold one. (Four halve the
/// shared-memory traffic per cell but need many more registers: 147 at 4 steps, against 78,
/// and spills at 6. On an H200 the tuner never chose them at 512² to 4096²; measured again on
/// 2026-11-23 at 3, 4 and 6 steps, the best four-column shape was slower than the best
/// two-column shape of the same step counts: 8.4 against 7.8 µs per step at 2048², 26.9
/// against 24.9 at 4096², 2.39 against 1.90 at 512². So they are not built.)
pub const STREAM_COLS: u32 = 2;
/// The most warps (side by side along x) in a `streaming` block.
pub const STREAM_MAX_WARPS: u32 = 4;
/// The most steps one `streaming` launch may take (kernels `gray_scott_streaming_c*_s1` to `_s8`).
pub const STREAM_MAX_STEPS: u32 = 8;

/// The output columns of one `streaming` block of `warps` warps taking `steps` steps with
/// `cols` cells per thread: its window (`32 · cols · warps` columns) less a halo of `steps`
/// columns each side.
pub const fn stream_strip(steps: u32, warps: u32, cols: u32) -> u32 {
    32 * cols * warps - 2 * steps
}

/// Dynamic shared memory of a `streaming` block of `warps` warps taking `steps` steps: for
/// each time level below `steps` and each iteration parity, a plane of one `float4` per
/// thread (its outer cells' U and V) plus one at each end.
pub const fn stream_shared_bytes(steps: u32, warps: u32) -> u32 {
    2 * steps * 16 * (32 * warps + 2)
}

/// The per-thread state of a `streaming` block; see [`gray_scott_streaming_s8`]. `C` is
/// the cells per thread and `T` the steps per launch, constants so that every ring index is
/// static (registers, not local memory).
struct Streaming<const C: usize, const T: usize> {
    u: *const f32,
    v: *const f32,
    u_next: *mut f32,
    v_next: *mut f32,
    width: u32,
    height: u32,
    rates: Rates,
    /// Output rows of this block (a chunk) and its first grid row.
    chunk: u32,
    y0: u32,
    /// The block's edge planes ([time level][parity], `plane` floats each), and this
    /// thread's `float4` in a plane (element `4 · (thread + 1)`).
    planes: ptxkit_device::SharedF32,
    plane: u32,
    slot: u32,
    /// This thread's grid columns, and which of them it writes (inside the strip and grid).
    columns: [usize; C],
    writes: [bool; C],
    /// The next window row (U, V), loaded one iteration ahead so that the loads' latency
    /// hides behind a whole iteration of arithmetic, and the grid row after it.
    prefetch: [[f32; C]; 2],
    load_row: u32,
    /// Rows of time levels 0..T: row `r` of level `l` in slot `r % 3`, [field][column].
    ring: [[[[f32; C]; 2]; 3]; T],
}

impl<const C: usize, const T: usize> Streaming<C, T> {
    /// Loads grid row `load_row` into `prefetch` and moves on to the next row (periodically).
    #[inline(always)]
    unsafe fn load_next_row(&mut self) {
        let row = self.load_row as usize * self.width as usize;
        for j in 0..C {
            unsafe {
                self.prefetch[0][j] = *self.u.add(row + self.columns[j]);
                self.prefetch[1][j] = *self.v.add(row + self.columns[j]);
            }
        }
        self.load_row = wrap_next(self.load_row, self.height);
    }

    /// Publishes this thread's outer cells (U and V of its first and last column) of a new
    /// row of `level`, for its neighbours to read in the next iteration.
    #[inline(always)]
    unsafe fn publish(&self, parity: u32, level: usize, row: &[[f32; C]; 2]) {
        let at = (2 * level as u32 + parity) * self.plane + self.slot;
        unsafe { self.planes.store4(at, [row[0][0], row[1][0], row[0][C - 1], row[1][C - 1]]) };
    }

    /// Iteration `i`, which is `P` mod 3: loads window row `i` (time level 0), then each level
    /// `s` computes its row `i - s` from level `s - 1`'s rows `i - s - 1 ..= i - s + 1` (the
    /// last one computed just before, in this iteration); level `T`'s row is the output.
    /// (Iterations past the window, the padding of the loop unrolled by 3, compute rows
    /// nobody writes: cheaper than keeping every ring row alive across an early exit.)
    ///
    /// In the first iterations (`WARM_UP`, while `i < 2T`) each level starts only once its
    /// inputs are exact; after that every level computes, with no branches between them.
    #[inline(always)]
    unsafe fn iteration<const P: usize, const WARM_UP: bool>(&mut self, i: u32) {
        let (parity, before) = (i & 1, (i & 1) ^ 1);
        let slot = P % 3;
        self.ring[0][slot] = self.prefetch;
        unsafe { self.load_next_row() };
        unsafe { self.publish(parity, 0, &self.ring[0][slot]) };
        macro_rules! levels {
            ($($s:literal)*) => {$(
                if $s <= T {
                    if !WARM_UP || i >= 2 * $s {
                        unsafe { self.level::<P, $s>(i, parity, before) };
                    } else if $s < T {
                        // Not started: any value will do, but a fresh one, so that the
                        // overwritten row does not have to stay alive in a register.
                        let slot = (P + 3 * 9 - $s) % 3;
                        self.ring[$s.min(T - 1)][slot] = self.ring[$s - 1][slot];
                    }
                }
            )*};
        }
        levels!(1 2 3 4 5 6 7 8);
        thread::sync_threads();
    }

    /// Time level `S` of iteration `i` (see [`Streaming::iteration`]); it runs from iteration
    /// `2S`, the first whose inputs are all exact.
    #[inline(always)]
    unsafe fn level<const P: usize, const S: usize>(&mut self, i: u32, parity: u32, before: u32) {
        // Slots of level S-1's rows i-S-1 (up), i-S (centre), i-S+1 (down); level S's new
        // row i-S goes to the centre slot of its own ring.
        let (up, centre, down) = ((P + 3 * 9 - S - 1) % 3, (P + 3 * 9 - S) % 3, (P + 3 * 9 - S + 1) % 3);
        let below = &self.ring[S - 1];
        // The centre row's cells beside this thread's, published by the neighbouring threads
        // in iteration i-1: the left one's last column, the right one's first ([U, V]).
        let at = (2 * (S as u32 - 1) + before) * self.plane + self.slot;
        let (left, right) = unsafe { (self.planes.load2(at - 2), self.planes.load2(at + 4)) };
        let mut next = [[0.0f32; C]; 2];
        for field in 0..2 {
            let c = below[centre][field];
            for j in 0..C {
                let l = if j == 0 { left[field] } else { c[j - 1] };
                let r = if j + 1 == C { right[field] } else { c[j + 1] };
                next[field][j] = laplacian5(c[j], l, r, below[up][field][j], below[down][field][j]);
            }
        }
        for j in 0..C {
            let (u, v) = (below[centre][0][j], below[centre][1][j]);
            (next[0][j], next[1][j]) = self.rates.step(u, v, next[0][j], next[1][j]);
        }
        if S < T {
            self.ring[S][centre] = next;
            unsafe { self.publish(parity, S, &next) };
        } else {
            // Window row i-T is output row i-2T of the chunk.
            let out = i - 2 * T as u32;
            let gy = self.y0 + out;
            if out < self.chunk && gy < self.height {
                let row = gy as usize * self.width as usize;
                for j in 0..C {
                    if self.writes[j] {
                        unsafe {
                            *self.u_next.add(row + self.columns[j]) = next[0][j];
                            *self.v_next.add(row + self.columns[j]) = next[1][j];
                        }
                    }
                }
            }
        }
    }
}

/// The body of the `gray_scott_streaming_*` kernels: `C` cells per thread, `T` steps.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn streaming<const C: usize, const T: usize>(
    u: *const f32,
    v: *const f32,
    u_next: *mut f32,
    v_next: *mut f32,
    width: u32,
    height: u32,
    rates: Rates,
    chunk: u32,
) {
    let planes = ptxkit_device::dynamic_shared_f32!(streaming_planes);
    let threads = thread::block_dim_x();
    let warps = threads / 32;
    if width == 0 || height == 0 || chunk == 0 || warps == 0 || warps > STREAM_MAX_WARPS {
        return;
    }
    let t = thread::thread_idx_x();
    let steps = T as u32;
    let plane = 4 * (threads + 2);
    // The float4 slots at both ends of every plane stand for the neighbours outside the
    // window: they feed only halo cells, but hold defined values.
    if t < 2 * steps {
        unsafe {
            planes.store4(t * plane, [0.0; 4]);
            planes.store4(t * plane + plane - 4, [0.0; 4]);
        }
    }
    let window = 32 * C as u32 * warps;
    // Window column 0 is grid column block·strip − T (wrapped: the grid is periodic).
    let origin_x = i64::from(thread::block_idx_x() * stream_strip(steps, warps, C as u32)) - i64::from(steps);
    let mut columns = [0usize; C];
    let mut writes = [false; C];
    for j in 0..C {
        let wx = t * C as u32 + j as u32;
        let gx = origin_x + i64::from(wx);
        columns[j] = gx.rem_euclid(i64::from(width)) as usize;
        writes[j] = wx >= steps && wx < window - steps && gx < i64::from(width);
    }
    let y0 = thread::block_idx_y() * chunk;
    let load_row = (i64::from(y0) - i64::from(steps)).rem_euclid(i64::from(height)) as u32;
    let mut block = Streaming::<C, T> {
        u,
        v,
        u_next,
        v_next,
        width,
        height,
        rates,
        chunk,
        y0,
        planes,
        plane,
        slot: 4 * (t + 1),
        columns,
        writes,
        prefetch: [[0.0; C]; 2],
        load_row,
        ring: [[[[0.0; C]; 2]; 3]; T],
    };
    unsafe { block.load_next_row() };
    thread::sync_threads();
    let window_rows = chunk + 2 * steps;
    let mut i = 0;
    // The wavefront's start (levels begin one by one), then the steady march; both unrolled
    // by 3 so that ring slots are static.
    while i < 2 * steps {
        unsafe {
            block.iteration::<0, true>(i);
            block.iteration::<1, true>(i + 1);
            block.iteration::<2, true>(i + 2);
        }
        i += 3;
    }
    while i < window_rows {
        unsafe {
            block.iteration::<0, false>(i);
            block.iteration::<1, false>(i + 1);
            block.iteration::<2, false>(i + 2);
        }
        i += 3;
    }
}

macro_rules! streaming_kernels {
    ($cols:expr; $($(#[$doc:meta])* $name:ident $steps:literal),*) => {$(
        $(#[$doc])*
        #[kernel(launch_bounds(128, 3), dynamic_shared = stream_shared_bytes($steps, 1))]
        #[allow(clippy::too_many_arguments)]
        pub unsafe fn $name(
            u: *const f32,
            v: *const f32,
            u_next: *mut f32,
            v_next: *mut f32,
            width: u32,
            height: u32,
            rates: Rates,
            chunk: u32,
        ) {
            const C: usize = $cols;
            unsafe { streaming::<C, $steps>(u, v, u_next, v_next, width, height, rates, chunk) }
        }
    )*};
}

#[cfg(feature = "grayscott_streaming")]
streaming_kernels!(STREAM_COLS as usize;
    /// Step 5, the `streaming` variant with 1 step per launch; see [`gray_scott_streaming_s8`].
    gray_scott_streaming_s1 1,
    /// Step 5, the `streaming` variant with 2 steps per launch; see [`gray_scott_streaming_s8`].
    gray_scott_streaming_s2 2,
    /// Step 5, the `streaming` variant with 3 steps per launch; see [`gray_scott_streaming_s8`].
    gray_scott_streaming_s3 3,
    /// Step 5, the `streaming` variant with 4 steps per launch; see [`gray_scott_streaming_s8`].
    gray_scott_streaming_s4 4,
    /// Step 5, the `streaming` variant with 5 steps per launch; see [`gray_scott_streaming_s8`].
    gray_scott_streaming_s5 5,
    /// Step 5, the `streaming` variant with 6 steps per launch; see [`gray_scott_streaming_s8`].
    gray_scott_streaming_s6 6,
    /// Step 5, the `streaming` variant with 7 steps per launch; see [`gray_scott_streaming_s8`].
    gray_scott_streaming_s7 7,
    /// Step 5, 2.5-D streaming temporal blocking (the `streaming` variant; AN5D's scheme), with
    /// `C` = [`STREAM_COLS`] cells per thread and `T` = 8 steps per launch;
    /// `gray_scott_streaming_s1` .. `_s7` are the same kernel for 1 to 7 steps (one kernel per
    /// step count, so that every register-ring index is static).
    ///
    /// A block owns a strip of columns and marches down a chunk of `chunk` rows. Its window is
    /// `32 · C · warps` columns (the strip plus `T` halo columns each side, wrapped
    /// periodically) by `chunk + 2T` rows. Iteration `i` loads window row `i` (time level 0),
    /// and time level `s` (1..=T) computes its row `i − s`, a wavefront skewed one row per level:
    /// vertical neighbours come from a ring of three rows per level in registers (the input rows
    /// are loaded one iteration ahead, hiding their latency); the horizontal
    /// neighbours of a thread's outer cells, on the row level `s − 1` finished one iteration
    /// earlier, from shared memory, where every thread publishes its outer cells of each new row
    /// (one `float4`, read back as two `float2` by its neighbours), double-buffered by iteration
    /// parity: one barrier per row. Level `T`'s row is written out. Redundant work is the halo
    /// columns (`2T` of each window) and, per chunk, the wavefront's start; level `s` starts at
    /// iteration `2s`, the first where its inputs are exact.
    ///
    /// Thread mapping: blocks of `32 × warps` threads (1 ≤ warps ≤ 4) along x; thread t holds
    /// columns `C·t .. C·t + C` of the window; grid `(⌈width / strip⌉, ⌈height / chunk⌉)` with
    /// strip = [`stream_strip`]; dynamic shared memory [`stream_shared_bytes`]. Bytes per cell per
    /// launch: 8 read × window / strip × (chunk + 2T) / chunk, 8 written: about 17 B, over T
    /// steps (2.2 B per step at T = 8, against 16 for any single-step kernel). Same float
    /// operations per cell as the other kernels ([`laplacian5`], [`Rates::step`]): results are
    /// bit-identical. On an H200 at 4096², tuned (7 steps, 4 warps, 133-row chunks: one wave
    /// of blocks): 23.8 µs per step, against 40.1 for [`gray_scott_temporal`]; ncu: 119
    /// registers (148 at 8 steps), 4 blocks per SM, issue slots 74% busy.
    gray_scott_streaming_s8 8
);

#[cfg(feature = "grayscott_streaming_c1")]
streaming_kernels!(1;
    /// The `streaming` variant with one cell per thread and 1 step per launch; see
    /// [`gray_scott_streaming_c1_s8`].
    gray_scott_streaming_c1_s1 1,
    /// One cell per thread, 2 steps per launch; see [`gray_scott_streaming_c1_s8`].
    gray_scott_streaming_c1_s2 2,
    /// One cell per thread, 3 steps per launch; see [`gray_scott_streaming_c1_s8`].
    gray_scott_streaming_c1_s3 3,
    /// One cell per thread, 4 steps per launch; see [`gray_scott_streaming_c1_s8`].
    gray_scott_streaming_c1_s4 4,
    /// One cell per thread, 5 steps per launch; see [`gray_scott_streaming_c1_s8`].
    gray_scott_streaming_c1_s5 5,
    /// One cell per thread, 6 steps per launch; see [`gray_scott_streaming_c1_s8`].
    gray_scott_streaming_c1_s6 6,
    /// One cell per thread, 7 steps per launch; see [`gray_scott_streaming_c1_s8`].
    gray_scott_streaming_c1_s7 7,
    /// [`gray_scott_streaming_s8`] with `C` = 1: one cell per thread, so a block's window is
    /// `32 · warps` columns and each row of a time level costs a thread half the arithmetic
    /// (and the same shared-memory traffic, now per cell). For small grids, where a launch is
    /// latency-bound (few blocks, each marching a short chunk), this halves the serial chain of
    /// every block and doubles the warps in flight; the tuner weighs it against the two-column
    /// kernels at each size.
    ///
    /// Thread mapping: blocks of `32 × warps` threads along x, thread t holds window column t;
    /// grid `(⌈width / strip⌉, ⌈height / chunk⌉)` with strip = [`stream_strip`]`(T, warps, 1)`.
    /// Bytes per cell per launch as [`gray_scott_streaming_s8`], with a wider halo share (2T
    /// columns of `32 · warps`).
    gray_scott_streaming_c1_s8 8
);

/// The parameter map (`host grayscott --map`): one fused step of `tiles` independent
/// `side × side` simulations at once, each periodic on its own and with its own feed and kill
/// rates (`feed[t]`, `kill[t]`; diffusion rates and dt from `base`). Tile `t` occupies cells
/// `t·side²..(t+1)·side²` of every field, row-major inside the tile. Per tile this is
/// [`gray_scott_fused`] on a `side × side` grid: the same stencil, [`laplacian5`] and
/// [`Rates::step`], so a tile is bit-identical to a single simulation with its rates.
///
/// Thread mapping: a 3-D launch: x is the column inside the tile, y a band of
/// `rows_per_thread` rows inside the tile (each thread marches down its band, keeping the
/// rows above and at the current cell in registers, as the fused kernel does), z the tile.
/// Bytes per cell per step: reads u and v (8 B; neighbours hit in L1), writes the next u and
/// v (8 B): 16 B, as the fused kernel, plus 8 B of rates per thread (cached).
#[cfg(feature = "grayscott")]
#[kernel]
#[allow(clippy::too_many_arguments)]
pub unsafe fn gray_scott_map(
    u: *const f32,
    v: *const f32,
    u_next: *mut f32,
    v_next: *mut f32,
    feed: *const f32,
    kill: *const f32,
    side: u32,
    tiles: u32,
    base: Rates,
    rows_per_thread: u32,
) {
    let (x, band, tile) = thread::index_3d();
    let first = band * rows_per_thread;
    if x >= side || first >= side || tile >= tiles {
        return;
    }
    let last = (first + rows_per_thread).min(side);
    let (w, x) = (side as usize, x as usize);
    let origin = tile as usize * w * w;
    // Offsets of the left and right neighbours from the cell (periodic at the tile's edges).
    let left = wrap_prev(x as u32, side) as isize - x as isize;
    let right = wrap_next(x as u32, side) as isize - x as isize;
    unsafe {
        let rates = Rates { feed: *feed.add(tile as usize), kill: *kill.add(tile as usize), ..base };
        let (u, v) = (u.add(origin), v.add(origin));
        let (u_next, v_next) = (u_next.add(origin), v_next.add(origin));
        let above = wrap_prev(first, side) as usize * w + x;
        let (mut u_up, mut v_up) = (*u.add(above), *v.add(above));
        let mut here = first as usize * w + x;
        let (mut u_here, mut v_here) = (*u.add(here), *v.add(here));
        for y in first..last {
            let below = if y + 1 == side { x } else { here + w };
            let (u_down, v_down) = (*u.add(below), *v.add(below));
            let (uc, vc) = (u.add(here), v.add(here));
            let lu = laplacian5(u_here, *uc.offset(left), *uc.offset(right), u_up, u_down);
            let lv = laplacian5(v_here, *vc.offset(left), *vc.offset(right), v_up, v_down);
            let (u_new, v_new) = rates.step(u_here, v_here, lu, lv);
            *u_next.add(here) = u_new;
            *v_next.add(here) = v_new;
            (u_up, u_here, v_up, v_here) = (u_here, u_down, v_here, v_down);
            here = below;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_clamp01_saturates_like_the_gpu() {
        let bits = |x: f32| x.to_bits();
        assert_eq!(bits(add_clamp01(0.25, 0.5)), bits(0.75));
        assert_eq!(bits(add_clamp01(0.75, 0.5)), bits(1.0));
        assert_eq!(bits(add_clamp01(0.25, -0.5)), bits(0.0));
        // NaN and −0 both become +0, as the GPU's saturation makes them.
        assert_eq!(bits(add_clamp01(f32::NAN, 0.5)), bits(0.0));
        assert_eq!(bits(add_clamp01(f32::INFINITY, f32::NEG_INFINITY)), bits(0.0));
        assert_eq!(bits(add_clamp01(-0.0, -0.0)), bits(0.0));
        assert_eq!(bits(add_clamp01(f32::MAX, f32::MAX)), bits(1.0));
        // Rounded before clamping: 1 − 2⁻²⁵ rounds to 1 (ties to even), a value just below
        // 1 stays.
        assert_eq!(bits(add_clamp01(1.0, -(2.0f32).powi(-25))), bits(1.0));
        assert_eq!(bits(add_clamp01(1.0, -(2.0f32).powi(-24))), bits(1.0 - (2.0f32).powi(-24)));
    }

    #[test]
    fn laplacian5_is_neighbours_minus_four_centres() {
        assert_eq!(laplacian5(0.5, 1.0, 0.0, 0.25, 0.75), 0.0);
        assert_eq!(laplacian5(0.0, 1.0, 2.0, 3.0, 4.0), 10.0);
        assert_eq!(laplacian5(1.0, 0.0, 0.0, 0.0, 0.0), -4.0);
    }

    /// The kernels' tile geometry, from the documented shapes: the tiled block's 32 × 8 cells
    /// and their one-cell halo; the temporal window (32 lanes × 4 columns, 8 warps × 6 rows)
    /// less a halo of `steps` each side; the streaming strip (32 · cols · warps columns less
    /// `steps` each side) and its shared planes (2 · steps float4 planes of 32 · warps + 2).
    #[test]
    fn tile_geometry_is_the_documented_shapes() {
        assert_eq!(TILE_SPAN, 34 * 10);
        assert_eq!((TEMPORAL_SPAN_X, TEMPORAL_SPAN_Y, TEMPORAL_EDGE), (128, 48, 8 * 32 * 4));
        assert_eq!(temporal_tile(3), (122, 42));
        assert_eq!(stream_strip(7, 4, 2), 256 - 14);
        assert_eq!(stream_strip(1, 1, 1), 30);
        assert_eq!(stream_shared_bytes(7, 4), 2 * 7 * 16 * 130);
        assert_eq!(stream_shared_bytes(1, 1), 2 * 16 * 34);
    }

    /// The stencil's indices, from a row-major periodic grid's definition: (x, y) is
    /// y·width + x, and the neighbours wrap around each edge.
    #[test]
    fn the_stencil_holds_a_cell_and_its_periodic_neighbours() {
        let (w, h) = (7u32, 5u32);
        let index = |x: i64, y: i64| (y.rem_euclid(h as i64) * w as i64 + x.rem_euclid(w as i64)) as usize;
        for y in 0..h {
            for x in 0..w {
                let s = Stencil5::periodic(x, y, w, h);
                let (xi, yi) = (x as i64, y as i64);
                let got = [s.centre, s.left, s.right, s.up, s.down];
                let want = [
                    index(xi, yi),
                    index(xi - 1, yi),
                    index(xi + 1, yi),
                    index(xi, yi - 1),
                    index(xi, yi + 1),
                ];
                assert_eq!(got, want, "({x}, {y})");
            }
        }
    }
}
