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

/// Steps one row, given the rows above, at and below it of U and V.
fn step_row(rates: &Rates, u: [&[f32]; 3], v: [&[f32]; 3], u_out: &mut [f32], v_out: &mut [f32]) {
    let w = u_out.len();
    let cell = |x: usize, left: usize, right: usize| {
        let lu = laplacian5(u[1][x], u[1][left], u[1][right], u[0][x], u[2][x]);
        let lv = laplacian5(v[1][x], v[1][left], v[1][right], v[0][x], v[2][x]);
        rates.step(u[1][x], v[1][x], lu, lv)
    };
    for x in [0, w - 1] {
        let (left, right) = (wrap_prev(x as u32, w as u32) as usize, wrap_next(x as u32, w as u32) as usize);
        (u_out[x], v_out[x]) = cell(x, left, right);
    }
    for x in 1..w.saturating_sub(1) {
        (u_out[x], v_out[x]) = cell(x, x - 1, x + 1);
    }
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
    u.par_iter_mut().zip(v.par_iter_mut()).zip(lu.par_iter().zip(lv)).for_each(|((u, v), (lu, lv))| {
        (*u, *v) = rates.step(*u, *v, *lu, *lv);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn the_engine_describes_itself_with_its_threads() {
        let rates = Rates { du: 0.16, dv: 0.08, feed: 0.06, kill: 0.062, dt: 1.0 };
        let engine = CpuGrayScott::new(2, 2, rates, vec![1.0; 4], vec![0.0; 4]);
        let threads = rayon::current_num_threads();
        assert_eq!(engine.describe(), format!("cpu ({threads} threads)"));
    }
}
