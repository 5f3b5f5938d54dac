//! Barkley's model of excitable media, whose broken waves curl into rotating spirals:
//!
//! ∂u/∂t = D∇²u + (1/ε)·u(1−u)(u − (v+b)/a),  ∂v/∂t = u − v
//!
//! Explicit Euler, the 5-point Laplacian with no-flux boundaries, float32. Fields are
//! row-major `width × height` arrays, index `y * width + x`. The per-cell math below compiles
//! for the GPU and the host alike, so the kernel and the CPU reference compute the same bits.

#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

use ptxkit_device::kernel;

/// The model's coefficients for one step, passed to the kernel by value.
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Coefficients {
    /// 1/a: the excitation threshold is (v + b)/a.
    pub inv_a: f32,
    /// b.
    pub b: f32,
    /// dt/ε.
    pub dt_over_eps: f32,
    /// D·dt/h², h the grid spacing (≤ 1/4 for a stable explicit step).
    pub diffusion: f32,
    /// dt.
    pub dt: f32,
}

impl Coefficients {
    /// One explicit Euler step of one cell, from its (u, v) and the Laplacian of u
    /// (in cells, without the 1/h²); returns the new (u, v).
    #[inline(always)]
    pub fn step(&self, u: f32, v: f32, laplacian_u: f32) -> (f32, f32) {
        let threshold = (v + self.b) * self.inv_a;
        let reaction = self.dt_over_eps * u * (1.0 - u) * (u - threshold);
        (u + reaction + self.diffusion * laplacian_u, v + self.dt * (u - v))
    }
}

/// The 5-point Laplacian at (x, y) of a `width × height` field read through `at(index)`,
/// with no-flux boundaries: a neighbour beyond the edge reads as the cell itself.
#[inline(always)]
pub fn laplacian_no_flux(at: impl Fn(usize) -> f32, x: u32, y: u32, width: u32, height: u32) -> f32 {
    let index = |x: u32, y: u32| y as usize * width as usize + x as usize;
    let left = at(index(x.saturating_sub(1), y));
    let right = at(index(if x + 1 < width { x + 1 } else { x }, y));
    let up = at(index(x, y.saturating_sub(1)));
    let down = at(index(x, if y + 1 < height { y + 1 } else { y }));
    (left + right) + (up + down) - 4.0 * at(index(x, y))
}

/// One step of Barkley's model: (u, v) → (u_next, v_next).
///
/// Thread mapping: one thread per cell of a 2-D launch (x along rows). Bytes per cell per
/// step: 16 (reads u and v, 8 B, the four neighbours of u hitting in cache; writes u_next and
/// v_next, 8 B). The host ping-pongs the two pairs of fields.
#[kernel]
pub unsafe fn barkley_step(
    u: *const f32,
    v: *const f32,
    u_next: *mut f32,
    v_next: *mut f32,
    width: u32,
    height: u32,
    coefficients: Coefficients,
) {
    let (x, y) = ptxkit_device::thread::index_2d();
    if x >= width || y >= height {
        return;
    }
    let i = y as usize * width as usize + x as usize;
    // SAFETY: the host passes fields of `width × height` cells; every index is inside.
    unsafe {
        let read_u = |j: usize| *u.add(j);
        let laplacian = laplacian_no_flux(read_u, x, y, width, height);
        let (u_new, v_new) = coefficients.step(*u.add(i), *v.add(i), laplacian);
        *u_next.add(i) = u_new;
        *v_next.add(i) = v_new;
    }
}
