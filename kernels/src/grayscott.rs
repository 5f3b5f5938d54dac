//! Gray-Scott reaction-diffusion.
//!
//! dU/dt = Du·∇²U − U·V² + F·(1−U),  dV/dt = Dv·∇²V + U·V² − (F+k)·V
//!
//! Explicit Euler with step `dt`, the 5-point Laplacian (−4 centre + 4 neighbours) on a
//! periodic grid, U and V clamped to [0, 1] after each step, float32. Fields are row-major
//! `width × height` arrays, index `y * width + x`.
//!
//! The kernels follow the reference write-up's progression:
//! 1. [`gray_scott_laplacian`] + [`gray_scott_update`]: two launches per step, the
//!    Laplacians go through device memory (the write-up's "v1").
//! 2. [`gray_scott_fused`]: one launch per step, Laplacian and update in registers, ping-pong
//!    buffers (the write-up's final step; the default).

#[cfg(target_arch = "nvptx64")]
use crate::cuda_std::thread;
use crate::kernel;

/// The model's rates, passed to the kernels by value.
#[derive(Clone, Copy, Debug, PartialEq)]
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
        (clamp01(u + du_dt * self.dt), clamp01(v + dv_dt * self.dt))
    }
}

/// Clamps to [0, 1]; NaN becomes 0 (unlike `f32::clamp`, which keeps NaN), so a field can
/// never hold NaN.
#[inline(always)]
#[allow(clippy::manual_clamp)]
pub fn clamp01(x: f32) -> f32 {
    x.max(0.0).min(1.0)
}

/// The 5-point Laplacian: the sum of the four neighbours minus four times the centre.
#[inline(always)]
pub fn laplacian5(centre: f32, left: f32, right: f32, up: f32, down: f32) -> f32 {
    (left + right) + (up + down) - 4.0 * centre
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
/// Thread mapping: one thread per cell of a 2-D launch. Bytes per cell: reads u and v (8 B;
/// neighbours hit in cache), writes the next u and v (8 B): 16 B, the single-step minimum.
#[kernel]
pub unsafe fn gray_scott_fused(
    u: *const f32,
    v: *const f32,
    u_next: *mut f32,
    v_next: *mut f32,
    width: u32,
    height: u32,
    rates: Rates,
) {
    let (x, y) = thread::index_2d();
    if x >= width || y >= height {
        return;
    }
    let at = Stencil5::periodic(x, y, width, height);
    unsafe {
        let (u_new, v_new) =
            rates.step(*u.add(at.centre), *v.add(at.centre), at.laplacian(u), at.laplacian(v));
        *u_next.add(at.centre) = u_new;
        *v_next.add(at.centre) = v_new;
    }
}
