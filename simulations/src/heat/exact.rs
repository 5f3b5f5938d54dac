//! The exact solution of the sine start with zero faces, and a run's distance from it.

use super::{HeatInit, HeatSetup, initial_slab};

/// For the sine start with the boundary at 0: the largest difference from the exact
/// semi-discrete solution `u₀·e^{λt}`, absolute and relative to its peak.
pub fn sine_error(setup: &HeatSetup, u: &[f32], t: f64) -> Option<(f64, f64)> {
    if !has_exact_solution(setup) {
        return None;
    }
    let decay = (setup.sine_eigenvalue() * t).exp();
    // The start slab by slab, not the whole box again beside `u` (a large box's field fills
    // the host's memory once, not twice).
    let plane = setup.n[0] as usize * setup.n[1] as usize;
    let (mut worst, mut peak) = (0.0f64, 0.0f64);
    for z0 in (0..setup.n[2]).step_by(64) {
        let z1 = (z0 + 64).min(setup.n[2]);
        let u0 = initial_slab(setup, z0, z1);
        let here = &u[z0 as usize * plane..z1 as usize * plane];
        for (&x, &x0) in here.iter().zip(&u0) {
            worst = worst.max((f64::from(x) - f64::from(x0) * decay).abs());
            peak = peak.max(f64::from(x0).abs());
        }
    }
    let peak = peak * decay;
    Some((worst, worst / peak))
}

/// Whether [`sine_error`] has an exact solution to compare with (the sine mode, zero faces).
pub fn has_exact_solution(setup: &HeatSetup) -> bool {
    setup.init == HeatInit::Sine && setup.boundary == 0.0
}
