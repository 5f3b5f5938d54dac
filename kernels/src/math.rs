//! Per-cell helpers that more than one PTX module's kernels use (Gray-Scott's, the colormap's,
//! Physarum's): in a file of their own, so that an edit of `grayscott.rs` rebuilds only the
//! Gray-Scott module. `grayscott` re-exports them under their old paths.

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
