//! Initial conditions: U = 1 and V = 0 everywhere except where a pattern seeds V.

use std::path::Path;

use crate::{error::Result, rng::SplitMix64};

crate::choice! {
    /// Built-in starting patterns (`--init`).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub enum Init {
        /// A square in the centre, as in the reference write-up.
        #[default]
        Square = "square",
        /// A thin ring around the centre.
        Ring = "ring",
        /// Small squares scattered at random.
        Spots = "spots",
        /// Sparse random seeds over the whole field.
        Noise = "noise",
    }
}

/// The seeded state inside a pattern: U = 1/2, V = 1/4.
pub(crate) const SEED_U: f32 = 0.5;
pub(crate) const SEED_V: f32 = 0.25;

/// The (U, V) fields of a `width × height` grid for `init`. Seeded cells get ±1% noise so
/// that symmetric starts break symmetry; `seed` makes it reproducible.
pub fn initial_fields(init: Init, width: u32, height: u32, seed: u64) -> (Vec<f32>, Vec<f32>) {
    let (w, h) = (width as usize, height as usize);
    let mut rng = SplitMix64::new(seed);
    let mut inside = vec![false; w * h];
    let mut mark_rect = |x0: i64, y0: i64, side: i64| {
        for y in y0..y0 + side {
            for x in x0..x0 + side {
                let (x, y) = (x.rem_euclid(w as i64) as usize, y.rem_euclid(h as i64) as usize);
                inside[y * w + x] = true;
            }
        }
    };
    let small = w.min(h) as i64;
    match init {
        Init::Square => {
            let side = (small / 8).max(8);
            mark_rect(w as i64 / 2 - side / 2, h as i64 / 2 - side / 2, side);
        }
        Init::Ring => {
            let (cx, cy) = (w as f32 / 2.0, h as f32 / 2.0);
            let radius = small as f32 / 5.0;
            let half_width = (small as f32 / 60.0).max(3.0);
            for y in 0..h {
                for x in 0..w {
                    let r = ((x as f32 + 0.5 - cx).powi(2) + (y as f32 + 0.5 - cy).powi(2)).sqrt();
                    inside[y * w + x] = (r - radius).abs() <= half_width;
                }
            }
        }
        Init::Spots => {
            let side = (small / 40).max(6);
            let count = (w * h / 8192).clamp(4, 400);
            for _ in 0..count {
                let (x, y) = (rng.below(w as u64) as i64, rng.below(h as u64) as i64);
                mark_rect(x, y, side);
            }
        }
        Init::Noise => {
            for cell in inside.iter_mut() {
                *cell = rng.unit() < 0.02;
            }
        }
    }
    let mut u = vec![1.0; w * h];
    let mut v = vec![0.0; w * h];
    for i in 0..w * h {
        if inside[i] {
            u[i] = SEED_U + 0.01 * (rng.unit() - 0.5);
            v[i] = SEED_V + 0.01 * (rng.unit() - 0.5);
        }
    }
    (u, v)
}

/// Seeds V from an image's luminance L in [0, 1], resized to the grid: V = L/4 and
/// U = 1 − L/2, so white cells start fully seeded (U = 1/2, V = 1/4) and black cells empty.
pub fn fields_from_image(path: &Path, width: u32, height: u32) -> Result<(Vec<f32>, Vec<f32>)> {
    let image = crate::input::read_image(path)?;
    let luma =
        image::imageops::resize(&image.to_luma32f(), width, height, image::imageops::FilterType::Triangle);
    let lum: Vec<f32> = luma.into_raw().into_iter().map(|l| l.clamp(0.0, 1.0)).collect();
    Ok(fields_from_luminance(&lum))
}

/// The (U, V) fields for a luminance grid, as [`fields_from_image`] documents.
pub fn fields_from_luminance(lum: &[f32]) -> (Vec<f32>, Vec<f32>) {
    (lum.iter().map(|l| 1.0 - 0.5 * l).collect(), lum.iter().map(|l| 0.25 * l).collect())
}
