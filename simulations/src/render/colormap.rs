//! The colormap on the CPU: the reference for the `field_min_max` and `colormap_levels`
//! kernels, and the CPU backend's renderer. Uses the kernels crate's per-cell math.

use kernels::colormap::{MinMax, Source, level};
use rayon::prelude::*;

/// Minimum and maximum of V and U.
pub fn min_max(u: &[f32], v: &[f32]) -> MinMax {
    let fold = |field: &[f32]| {
        field
            .par_iter()
            .fold(|| (f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &x| (lo.min(x), hi.max(x)))
            .reduce(|| (f32::INFINITY, f32::NEG_INFINITY), |a, b| (a.0.min(b.0), a.1.max(b.1)))
    };
    let ((v_min, v_max), (u_min, u_max)) = (fold(v), fold(u));
    MinMax { v_min, v_max, u_min, u_max }
}

/// The palette level of every cell: V normalised by its range (or U when V is flat).
pub fn levels_cpu(u: &[f32], v: &[f32], out: &mut [u8]) {
    match min_max(u, v).source() {
        Source::V { lo, hi } => out.par_iter_mut().zip(v).for_each(|(o, &x)| *o = level(x, lo, hi)),
        Source::U { lo, hi } => out.par_iter_mut().zip(u).for_each(|(o, &x)| *o = level(x, lo, hi)),
        Source::Flat => out.fill(0),
    }
}
