//! The CPU backend: rows in parallel with rayon, each row a cache-friendly sweep whose
//! interior loop has no wrap-around branches. Uses the kernels crate's per-cell math
//! ([`laplacian5`], [`Rates::step`]), so it computes exactly what the GPU kernels compute.

use kernels::grayscott::{Rates, laplacian5, wrap_next, wrap_prev};
use rayon::prelude::*;

use super::Engine;
use crate::{error::Result, render::colormap};

/// Gray-Scott on the CPU, ping-ponging between two pairs of fields.
pub struct CpuGrayScott {
    frames: Vec<Vec<u8>>,
    width: u32,
    height: u32,
    rates: Rates,
    u: Vec<f32>,
    v: Vec<f32>,
    u_next: Vec<f32>,
    v_next: Vec<f32>,
}

/// Host bytes per cell: two pairs of f32 fields plus one byte of frame.
pub const BYTES_PER_CELL: u64 = 4 * 4 + 1;

impl CpuGrayScott {
    pub fn new(width: u32, height: u32, rates: Rates, u: Vec<f32>, v: Vec<f32>) -> Self {
        let cells = u.len();
        Self {
            frames: Vec::new(),
            width,
            height,
            rates,
            u,
            v,
            u_next: vec![0.0; cells],
            v_next: vec![0.0; cells],
        }
    }

    /// Field `field` (0: U, 1: V), in place: a split's host halos are written into it.
    pub(crate) fn field_mut(&mut self, field: usize) -> &mut [f32] {
        if field == 0 { &mut self.u } else { &mut self.v }
    }

    /// One Euler step of the whole grid.
    pub fn step_once(&mut self) {
        let (w, h) = (self.width as usize, self.height as usize);
        let (u, v, rates) = (&self.u, &self.v, self.rates);
        self.u_next.par_chunks_mut(w).zip(self.v_next.par_chunks_mut(w)).enumerate().for_each(
            |(y, (u_out, v_out))| {
                let (up, down) =
                    (wrap_prev(y as u32, h as u32) as usize, wrap_next(y as u32, h as u32) as usize);
                let rows_u = [row(u, w, up), row(u, w, y), row(u, w, down)];
                let rows_v = [row(v, w, up), row(v, w, y), row(v, w, down)];
                step_row(&rates, rows_u, rows_v, u_out, v_out);
            },
        );
        std::mem::swap(&mut self.u, &mut self.u_next);
        std::mem::swap(&mut self.v, &mut self.v_next);
    }
}

/// One Euler step of a whole periodic `width × height` grid from (`u`, `v`) into (`u_out`,
/// `v_out`), on the calling thread: the same row sweep as [`CpuGrayScott::step_once`], for
/// callers that run many small grids in parallel (the parameter map).
pub fn step_grid(
    rates: &Rates,
    width: u32,
    height: u32,
    u: &[f32],
    v: &[f32],
    u_out: &mut [f32],
    v_out: &mut [f32],
) {
    let w = width as usize;
    for (y, (u_row, v_row)) in u_out.chunks_mut(w).zip(v_out.chunks_mut(w)).enumerate() {
        let (up, down) = (wrap_prev(y as u32, height) as usize, wrap_next(y as u32, height) as usize);
        let rows_u = [row(u, w, up), row(u, w, y), row(u, w, down)];
        let rows_v = [row(v, w, up), row(v, w, y), row(v, w, down)];
        step_row(rates, rows_u, rows_v, u_row, v_row);
    }
}

/// Row `y` of a field `w` cells wide.
fn row(field: &[f32], w: usize, y: usize) -> &[f32] {
    &field[y * w..(y + 1) * w]
}

/// Steps one row, given the rows above, at and below it of U and V: [`step_row_fused`] where
/// the CPU has fused multiply-adds, else [`step_row_portable`] (the same bits, slower).
fn step_row(rates: &Rates, u: [&[f32]; 3], v: [&[f32]; 3], u_out: &mut [f32], v_out: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has the `fma` feature (checked just above).
        return unsafe { step_row_fused(rates, u, v, u_out, v_out) };
    }
    step_row_portable(rates, u, v, u_out, v_out)
}

/// [`step_row_portable`] compiled with the `fma` feature: [`Rates::step`]'s `mul_add`s become
/// single instructions. Without it, x86-64 code calls libm's `fmaf` for each (correctly
/// rounded, so the same bits, but a call per operation).
///
/// # Safety
/// The CPU must have the `fma` feature.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
unsafe fn step_row_fused(
    rates: &Rates,
    u: [&[f32]; 3],
    v: [&[f32]; 3],
    u_out: &mut [f32],
    v_out: &mut [f32],
) {
    step_row_portable(rates, u, v, u_out, v_out)
}

/// The row sweep itself, inlined into [`step_row_fused`] and [`step_row`].
#[inline(always)]
fn step_row_portable(rates: &Rates, u: [&[f32]; 3], v: [&[f32]; 3], u_out: &mut [f32], v_out: &mut [f32]) {
    let w = u_out.len();
    for x in [0, w - 1] {
        let (left, right) = (wrap_prev(x as u32, w as u32) as usize, wrap_next(x as u32, w as u32) as usize);
        (u_out[x], v_out[x]) = step_cell(rates, u, v, [left, x, right]);
    }
    for x in 1..w.saturating_sub(1) {
        (u_out[x], v_out[x]) = step_cell(rates, u, v, [x - 1, x, x + 1]);
    }
}

/// Cell `x` of the row (columns `[left, x, right]`); a function rather than a closure, so that
/// it is inlined into [`step_row_fused`] (a closure would be compiled apart, without `fma`).
#[inline(always)]
fn step_cell(rates: &Rates, u: [&[f32]; 3], v: [&[f32]; 3], [left, x, right]: [usize; 3]) -> (f32, f32) {
    let lu = laplacian5(u[1][x], u[1][left], u[1][right], u[0][x], u[2][x]);
    let lv = laplacian5(v[1][x], v[1][left], v[1][right], v[0][x], v[2][x]);
    rates.step(u[1][x], v[1][x], lu, lv)
}

impl Engine for CpuGrayScott {
    fn views(&self) -> Result<Vec<crate::view::FieldView>> {
        let shape = vec![self.height as usize, self.width as usize];
        use crate::view::FieldView;
        Ok(vec![FieldView::host("u", shape.clone(), &self.u), FieldView::host("v", shape, &self.v)])
    }

    fn step(&mut self, steps: u32) -> Result<()> {
        for _ in 0..steps {
            self.step_once();
        }
        Ok(())
    }

    fn snapshot(&mut self) -> Result<()> {
        let mut levels = vec![0u8; self.u.len()];
        colormap::levels_cpu(&self.u, &self.v, &mut levels);
        self.frames.push(levels);
        Ok(())
    }

    fn collect(&mut self, _wait: bool) -> Result<Vec<Vec<u8>>> {
        Ok(std::mem::take(&mut self.frames))
    }

    fn fields(&mut self) -> Result<(Vec<f32>, Vec<f32>)> {
        Ok((self.u.clone(), self.v.clone()))
    }

    fn set_fields(&mut self, u: &[f32], v: &[f32]) -> Result<()> {
        self.u.copy_from_slice(u);
        self.v.copy_from_slice(v);
        Ok(())
    }

    fn set_rates(&mut self, rates: Rates) {
        self.rates = rates;
    }

    fn describe(&self) -> String {
        format!("cpu ({} threads)", rayon::current_num_threads())
    }
}

/// The 5-point periodic Laplacian of a whole field (the CPU counterpart of the
/// `gray_scott_laplacian` kernel).
pub fn laplacian(field: &[f32], width: u32, height: u32) -> Vec<f32> {
    let (w, h) = (width as usize, height as usize);
    let mut out = vec![0.0; w * h];
    out.par_chunks_mut(w).enumerate().for_each(|(y, row)| {
        let (up, down) = (wrap_prev(y as u32, height) as usize, wrap_next(y as u32, height) as usize);
        for (x, value) in row.iter_mut().enumerate() {
            let (left, right) = (wrap_prev(x as u32, width) as usize, wrap_next(x as u32, width) as usize);
            *value = laplacian5(
                field[y * w + x],
                field[y * w + left],
                field[y * w + right],
                field[up * w + x],
                field[down * w + x],
            );
        }
    });
    out
}

/// One Euler step from precomputed Laplacians, in place (the CPU counterpart of the
/// `gray_scott_update` kernel).
pub fn update(u: &mut [f32], v: &mut [f32], lu: &[f32], lv: &[f32], rates: &Rates) {
    // No copy compiled for FMA, unlike the row sweep: only the `v0` variant's host half and the
    // tests run this, and libm's `fmaf` gives the same bits.
    u.par_iter_mut().zip(v.par_iter_mut()).zip(lu.par_iter().zip(lv)).for_each(|((u, v), (lu, lv))| {
        (*u, *v) = rates.step(*u, *v, *lu, *lv);
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels::grayscott::add_clamp01;

    /// The host memory a CPU run is refused or admitted by (`BYTES_PER_CELL`) against what an
    /// engine holding one frame really allocates: four f32 fields and one byte of frame per
    /// cell, counted here from the engine's own buffers.
    #[test]
    fn host_bytes_per_cell_are_what_an_engine_with_one_frame_holds() {
        let (w, h) = (9u32, 7u32);
        let cells = (w * h) as usize;
        let rates = Rates { du: 0.16, dv: 0.08, feed: 0.06, kill: 0.062, dt: 1.0 };
        let mut engine = CpuGrayScott::new(w, h, rates, vec![1.0; cells], vec![0.0; cells]);
        engine.snapshot().unwrap();
        let fields = [&engine.u, &engine.v, &engine.u_next, &engine.v_next];
        let held: usize = fields.iter().map(|f| std::mem::size_of_val(f.as_slice())).sum::<usize>()
            + engine.frames.iter().map(Vec::len).sum::<usize>();
        assert_eq!(BYTES_PER_CELL * cells as u64, held as u64);
    }

    /// The row compiled with `fma` and the portable one (libm's `fmaf` where the target has no
    /// `fma`) give the same bits, and both round each fused pair once: on random rows in the
    /// fields' range, some cells differ from the same update with every product rounded apart.
    #[test]
    fn the_fused_row_and_the_portable_row_agree_bit_for_bit() {
        let rates = Rates { du: 0.16, dv: 0.08, feed: 0.0545, kill: 0.062, dt: 1.0 };
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut unit = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u32 << 24) as f32
        };
        let w = 4099;
        let rows: Vec<Vec<f32>> = (0..6).map(|_| (0..w).map(|_| unit()).collect()).collect();
        let (u, v) = ([&rows[0][..], &rows[1], &rows[2]], [&rows[3][..], &rows[4], &rows[5]]);
        let (mut u_portable, mut v_portable) = (vec![0.0; w], vec![0.0; w]);
        step_row_portable(&rates, u, v, &mut u_portable, &mut v_portable);
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("fma") {
            let (mut u_fused, mut v_fused) = (vec![0.0; w], vec![0.0; w]);
            // SAFETY: the CPU has the `fma` feature (checked just above).
            unsafe { step_row_fused(&rates, u, v, &mut u_fused, &mut v_fused) };
            let bits = |f: &[f32]| f.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&u_fused), bits(&u_portable));
            assert_eq!(bits(&v_fused), bits(&v_portable));
        }
        let rounded_apart = (1..w - 1).filter(|&x| {
            let (uc, vc) = (u[1][x], v[1][x]);
            let lu = laplacian5(uc, u[1][x - 1], u[1][x + 1], u[0][x], u[2][x]);
            let lv = laplacian5(vc, v[1][x - 1], v[1][x + 1], v[0][x], v[2][x]);
            let uvv = uc * vc * vc;
            let du_dt = rates.du * lu - uvv + rates.feed * (1.0 - uc);
            let dv_dt = rates.dv * lv + uvv - (rates.feed + rates.kill) * vc;
            let apart = (add_clamp01(uc, du_dt * rates.dt), add_clamp01(vc, dv_dt * rates.dt));
            (apart.0.to_bits(), apart.1.to_bits()) != (u_portable[x].to_bits(), v_portable[x].to_bits())
        });
        assert!(rounded_apart.count() > 100, "the update must round each fused pair once");
    }

    #[test]
    fn the_engine_describes_itself_with_its_threads() {
        let rates = Rates { du: 0.16, dv: 0.08, feed: 0.06, kill: 0.062, dt: 1.0 };
        let engine = CpuGrayScott::new(2, 2, rates, vec![1.0; 4], vec![0.0; 4]);
        let threads = rayon::current_num_threads();
        assert_eq!(engine.describe(), format!("cpu ({threads} threads)"));
    }
}
