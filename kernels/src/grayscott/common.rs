//! What every Gray-Scott PTX module and the host share: the rates, the per-cell math (the
//! CPU backend computes with the same expressions), and the kernels' tile shapes.

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
    ///
    /// The rates are applied with fused multiply-adds, each rounded once: `dU/dt =
    /// fma(F, 1 − U, fma(Du, ∇²U, −UV²))` and `dV/dt = fma(−(F + k), V, fma(Dv, ∇²V, UV²))`,
    /// four operations fewer a cell than separate products and sums. The GPU's `fma.rn.f32`
    /// and the CPU's `f32::mul_add` (one instruction where the CPU has FMA, libm's correctly
    /// rounded `fmaf` where not) give the same bits.
    #[inline(always)]
    pub fn step(&self, u: f32, v: f32, lu: f32, lv: f32) -> (f32, f32) {
        self.step_at::<false>(u, v, lu, lv)
    }

    /// [`Rates::step`], and with `UNIT_DT` its copy for `dt` = 1 (the presets' time step,
    /// which the caller has checked), without the two multiplies by `dt`: `x · 1.0` is `x` in
    /// IEEE arithmetic, every bit, for every `x` but NaN (whose payload a multiply may change;
    /// the clamp makes any NaN +0 either way), and these kernels do not flush subnormals (a PTX
    /// test checks), so both give the same results; a CPU test compares them.
    #[inline(always)]
    pub fn step_at<const UNIT_DT: bool>(&self, u: f32, v: f32, lu: f32, lv: f32) -> (f32, f32) {
        use core::f32::math::mul_add;
        let uvv = u * v * v;
        let du_dt = mul_add(self.feed, 1.0 - u, mul_add(self.du, lu, -uvv));
        let dv_dt = mul_add(-(self.feed + self.kill), v, mul_add(self.dv, lv, uvv));
        if UNIT_DT {
            (add_clamp01(u, du_dt), add_clamp01(v, dv_dt))
        } else {
            (add_clamp01(u, du_dt * self.dt), add_clamp01(v, dv_dt * self.dt))
        }
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

/// Block shape of [`gray_scott_tiled`] (fixed: it sizes the shared tile).
pub const TILE_W: u32 = 32;
pub const TILE_H: u32 = 8;
pub const TILE_SPAN: usize = ((TILE_W + 2) * (TILE_H + 2)) as usize;

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

/// Floats of a `streaming` block's shared plane: two halves of a `float2` per thread (its
/// first column's U and V in the first half, its last column's in the second; the one-cell
/// kernels use the first half alone) plus one at each end, for the largest block
/// ([`STREAM_MAX_WARPS`]); smaller blocks use the start of each half.
pub const STREAM_PLANE: u32 = 4 * (32 * STREAM_MAX_WARPS + 2);

/// The most cells a `streaming` launch takes: the kernels compute a cell's offset in 32 bits
/// (`MAX_SIDE`² of the host's grids fits; a larger launch does nothing).
pub const STREAM_MAX_CELLS: u64 = 1 << 32;

/// Offset in a shared plane of the two-cell kernels' last-column slots (its second half).
pub const STREAM_LAST_COLUMNS: u32 = STREAM_PLANE / 2;

/// Dynamic shared memory of a `streaming` block taking `steps` steps: for each time level
/// below `steps` and each iteration parity, a plane of [`STREAM_PLANE`] floats.
pub const fn stream_shared_bytes(steps: u32) -> u32 {
    2 * steps * 4 * STREAM_PLANE
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The copy for dt = 1 gives [`Rates::step`]'s bits at dt = 1: on a million random cells
    /// (values and Laplacians across many binades, subnormals and signed zeros included) and on
    /// special values; and at another dt it would not (so the comparison can fail).
    #[test]
    fn step_without_dt_equals_step_at_unit_dt() {
        let rates = Rates { du: 0.16, dv: 0.08, feed: 0.06, kill: 0.062, dt: 1.0 };
        let mut state = 0x2545_f491_u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            f32::from_bits((state >> 32) as u32 & 0x7fff_ffff) * if state & 1 == 0 { 1.0 } else { -1.0 }
        };
        let special = [0.0, -0.0, 1.0, -1.0, f32::MIN_POSITIVE, 1e-40, -1e-40, 0.5, f32::MAX, f32::INFINITY];
        // Half of them in the fields' own ranges (U, V in [0, 1), Laplacians in [-4, 4)).
        let unit = |x: f32| (x.to_bits() >> 9) as f32 / (1u32 << 23) as f32;
        let mut cases: Vec<[f32; 4]> = (0..1_000_000)
            .map(|i| {
                let raw = [next(), next(), next(), next()];
                if i % 2 == 0 {
                    raw
                } else {
                    [unit(raw[0]), unit(raw[1]), 8.0 * unit(raw[2]) - 4.0, 8.0 * unit(raw[3]) - 4.0]
                }
            })
            .collect();
        for &a in &special {
            for &b in &special {
                cases.push([a, b, -a, b]);
                cases.push([a.abs().min(1.0), b.abs().min(1.0), a, b]);
            }
        }
        let bits = |(u, v): (f32, f32)| (u.to_bits(), v.to_bits());
        for [u, v, lu, lv] in cases.iter().copied() {
            assert_eq!(
                bits(rates.step_at::<true>(u, v, lu, lv)),
                bits(rates.step(u, v, lu, lv)),
                "{u} {v} {lu} {lv}"
            );
        }
        let other = Rates { dt: 0.9, ..rates };
        let differ = cases.iter().filter(|&&[u, v, lu, lv]| {
            bits(other.step_at::<true>(u, v, lu, lv)) != bits(other.step(u, v, lu, lv))
        });
        assert!(differ.count() > 1000, "at dt 0.9 the copy without dt must differ");
    }

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
    /// `steps` each side) and its shared planes (2 · steps planes of two float2 halves for the
    /// largest block's 128 threads plus one at each end, whatever the block).
    #[test]
    fn tile_geometry_is_the_documented_shapes() {
        assert_eq!(TILE_SPAN, 34 * 10);
        assert_eq!((TEMPORAL_SPAN_X, TEMPORAL_SPAN_Y, TEMPORAL_EDGE), (128, 48, 8 * 32 * 4));
        assert_eq!(temporal_tile(3), (122, 42));
        assert_eq!(stream_strip(7, 4, 2), 256 - 14);
        assert_eq!(stream_strip(1, 1, 1), 30);
        assert_eq!(STREAM_PLANE, 4 * 130);
        assert_eq!(STREAM_LAST_COLUMNS, 2 * 130);
        assert_eq!(stream_shared_bytes(7), 2 * 7 * 16 * 130);
        assert_eq!(stream_shared_bytes(1), 2 * 16 * 130);
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
