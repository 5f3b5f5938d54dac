//! The trail: where it starts (zero, or an image's luminance) and its palette levels.

use std::path::Path;

use rayon::prelude::*;

use super::PhysarumSetup;
use crate::error::Result;

/// The starting trail: zero, or `image_strength` times the image's luminance in [0, 1],
/// resized to the grid (Lanczos, as the write-up).
pub fn initial_trail(setup: &PhysarumSetup) -> Result<Vec<f32>> {
    match &setup.init_image {
        None => Ok(vec![0.0; setup.cells()]),
        Some(path) => {
            let lum = luminance(path, setup.width, setup.height)?;
            Ok(trail_from_luminance(&lum, setup.image_strength))
        }
    }
}

/// An image's luminance in [0, 1], resized to `width × height`.
pub fn luminance(path: &Path, width: u32, height: u32) -> Result<Vec<f32>> {
    let image = crate::input::read_image(path)?;
    let luma =
        image::imageops::resize(&image.to_luma32f(), width, height, image::imageops::FilterType::Lanczos3);
    Ok(luma.into_raw().into_iter().map(|l| l.clamp(0.0, 1.0)).collect())
}

/// `strength · luminance`, cell by cell.
pub fn trail_from_luminance(lum: &[f32], strength: f32) -> Vec<f32> {
    lum.iter().map(|l| strength * l).collect()
}

/// Palette levels of a trail: `t / (t + m)` with `m` the trail's mean, so the mean maps to
/// the middle of the palette and the brightest filaments approach the top, whatever the
/// number of agents. A zero trail is all level 0.
pub fn trail_levels(trail: &[f32]) -> Vec<u8> {
    let mean = (trail.par_iter().map(|&t| f64::from(t)).sum::<f64>() / trail.len().max(1) as f64) as f32;
    if mean <= 0.0 || !mean.is_finite() {
        return vec![0; trail.len()];
    }
    trail.par_iter().map(|&t| (255.0 * (t.max(0.0) / (t.max(0.0) + mean))).round() as u8).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trail_levels_put_the_mean_in_the_middle() {
        let levels = trail_levels(&[0.0, 1.0, 3.0]); // mean 4/3
        assert_eq!(levels[0], 0);
        assert_eq!(levels[1], (255.0f32 * (1.0 / (1.0 + 4.0 / 3.0))).round() as u8);
        assert!(levels[2] > 128);
        assert_eq!(trail_levels(&[0.0; 4]), vec![0; 4]);
        // Levels are rounded, not cut: the mean is 255/2 = 127.5, level 128; 1/(1 + 3/2) of
        // 255 is 102 exactly, and 2/(2 + 3/2) of it 145.71..., level 146.
        assert_eq!(trail_levels(&[1.0, 1.0]), [128, 128]);
        assert_eq!(trail_levels(&[1.0, 2.0]), [102, 146]);
    }
}
