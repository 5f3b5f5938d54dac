//! Per-cell helpers that more than one PTX module's kernels use (Gray-Scott's, the colormap's,
//! Physarum's): in a file of their own, so that an edit of a Gray-Scott file rebuilds only
//! Gray-Scott's modules. `grayscott` re-exports them under their old paths.

/// Clamps to [0, 1]; NaN becomes 0 (unlike `f32::clamp`, which keeps NaN), so a field can
/// never hold NaN.
#[inline(always)]
#[allow(clippy::manual_clamp)]
pub fn clamp01(x: f32) -> f32 {
    x.max(0.0).min(1.0)
}

/// `i mod n` for the small overshoots of tile windows (a subtraction or two instead of a
/// division; loops only on grids narrower than a tile).
#[inline(always)]
pub fn wrap_into(mut i: u32, n: u32) -> u32 {
    while i >= n {
        i -= n;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `wrap_into` is `i mod n` for the overshoots it is given (below a few `n`).
    #[test]
    fn wrap_into_is_the_remainder() {
        for n in [1u32, 3, 32, 1000] {
            for i in (0..4 * n).step_by((n as usize / 7).max(1)) {
                assert_eq!(wrap_into(i, n), i % n, "wrap_into({i}, {n})");
            }
        }
    }

    /// `clamp01` keeps [0, 1], clamps outside it, and makes NaN 0.
    #[test]
    fn clamp01_clamps_and_zeroes_nan() {
        assert_eq!(clamp01(0.25), 0.25);
        assert_eq!(clamp01(-3.0), 0.0);
        assert_eq!(clamp01(7.0), 1.0);
        assert_eq!(clamp01(f32::NAN), 0.0);
    }
}
