//! The initial field of a setup, whole or a slab at a time, and its value range.

use super::{HeatInit, HeatSetup};
use crate::rng::SplitMix64;

/// The initial field of `setup` (faces at the boundary value).
pub fn initial_field(setup: &HeatSetup) -> Vec<f32> {
    initial_slab(setup, 0, setup.n[2])
}

/// Planes `z0 .. z1` of [`initial_field`] (a slab's share of the start, without the rest of
/// the box: a split run's parts build only their own), computed in parallel over planes.
pub fn initial_slab(setup: &HeatSetup, z0: u32, z1: u32) -> Vec<f32> {
    use rayon::prelude::*;
    let [nx, ny, nz] = setup.n.map(|n| n as usize);
    let mut u = vec![0.0f32; nx * ny * (z1 - z0) as usize];
    let mut rng = SplitMix64::new(setup.seed);
    let blobs: Vec<[f32; 4]> = (0..6)
        .map(|_| {
            let r = 0.05 + 0.1 * rng.unit();
            [rng.unit(), rng.unit(), rng.unit(), r]
        })
        .collect();
    u.par_chunks_mut(nx * ny).enumerate().for_each(|(dz, plane)| {
        let z = z0 as usize + dz;
        for y in 0..ny {
            for x in 0..nx {
                let p = [x as f32 / (nx - 1) as f32, y as f32 / (ny - 1) as f32, z as f32 / (nz - 1) as f32];
                let face = x == 0 || y == 0 || z == 0 || x == nx - 1 || y == ny - 1 || z == nz - 1;
                plane[y * nx + x] = if face {
                    setup.boundary
                } else {
                    match setup.init {
                        HeatInit::HotCube => {
                            if p.iter().all(|c| (1.0 / 3.0..=2.0 / 3.0).contains(c)) {
                                1.0
                            } else {
                                0.0
                            }
                        }
                        HeatInit::Sine => p.iter().map(|c| (std::f32::consts::PI * c).sin()).product(),
                        HeatInit::Blobs => blobs
                            .iter()
                            .map(|b| {
                                let d2: f32 = (0..3).map(|k| (p[k] - b[k]).powi(2)).sum();
                                (-d2 / (b[3] * b[3])).exp()
                            })
                            .sum::<f32>()
                            .min(1.0),
                    }
                };
            }
        }
    });
    u
}

/// The smallest and largest value of [`initial_field`] and the boundary value, computed slab
/// by slab (never holding the whole box).
pub fn initial_range(setup: &HeatSetup) -> (f32, f32) {
    let (mut lo, mut hi) = (setup.boundary, setup.boundary);
    for z0 in (0..setup.n[2]).step_by(64) {
        for x in initial_slab(setup, z0, (z0 + 64).min(setup.n[2])) {
            (lo, hi) = (lo.min(x), hi.max(x));
        }
    }
    (lo, hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_initial_range_spans_the_field_and_the_boundary() {
        let mut setup = HeatSetup::cube(9, HeatInit::Blobs);
        setup.n = [7, 5, 131];
        setup.boundary = -0.5;
        let whole = initial_field(&setup);
        let lo = whole.iter().copied().fold(setup.boundary, f32::min);
        let hi = whole.iter().copied().fold(setup.boundary, f32::max);
        assert_eq!(initial_range(&setup), (lo, hi));
        assert!(lo == -0.5 && hi > 0.0);
    }

    #[test]
    fn slabs_of_the_start_are_the_start() {
        for init in [HeatInit::Blobs, HeatInit::Sine, HeatInit::HotCube] {
            let mut setup = HeatSetup::cube(9, init);
            setup.n = [7, 5, 11];
            let whole = initial_field(&setup);
            let plane = 7 * 5;
            for (z0, z1) in [(0, 4), (3, 11), (5, 6)] {
                assert_eq!(initial_slab(&setup, z0, z1), whole[z0 as usize * plane..z1 as usize * plane]);
            }
        }
    }
}
