//! A heat run's definition ([`HeatSetup`]): its starting field's kind ([`HeatInit`]), its
//! checks, its stable dt and the sine mode's eigenvalue.

use super::{MAX_SIDE, MAX_Z, RK4_REAL_STABILITY};
use crate::error::{Error, Result};

crate::choice! {
    /// Starting fields (`--init`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum HeatInit {
        /// A hot cube (u = 1) in the middle third of the grid, u = 0 elsewhere.
        HotCube = "hot-cube",
        /// sin(πx/Lx)·sin(πy/Ly)·sin(πz/Lz): the slowest eigenmode, with a known exact decay.
        Sine = "sine",
        /// A few hot Gaussian blobs at random places.
        Blobs = "blobs",
    }
}

/// A heat run's definition.
#[derive(Clone, Debug)]
pub struct HeatSetup {
    /// Grid points along x, y, z (faces included).
    pub n: [u32; 3],
    pub alpha: f32,
    /// Grid spacing.
    pub h: f32,
    pub dt: f32,
    pub boundary: f32,
    pub init: HeatInit,
    pub seed: u64,
}

impl HeatSetup {
    /// A cube of side `n` with α = 1, h = 1, the boundary at 0 and dt at 80% of the limit.
    pub fn cube(n: u32, init: HeatInit) -> Self {
        let mut setup = Self { n: [n; 3], alpha: 1.0, h: 1.0, dt: 0.0, boundary: 0.0, init, seed: 1 };
        setup.dt = 0.8 * setup.dt_limit();
        setup
    }

    pub fn cells(&self) -> usize {
        self.n.iter().map(|&n| n as usize).product()
    }

    /// `a = α/h²`, the factor of the 7-point Laplacian.
    pub fn a(&self) -> f32 {
        self.alpha / (self.h * self.h)
    }

    /// The largest stable dt: the 7-point Laplacian's eigenvalues lie in (−12α/h², 0), and
    /// RK4 is stable for λ·dt ≥ −2.785.
    pub fn dt_limit(&self) -> f32 {
        (RK4_REAL_STABILITY * f64::from(self.h) * f64::from(self.h) / (12.0 * f64::from(self.alpha))) as f32
    }

    /// Checks sizes and parameters; the error names the option and its valid range.
    pub fn validate(&self) -> Result<()> {
        for (name, n, most) in
            [("nx", self.n[0], MAX_SIDE), ("ny", self.n[1], MAX_SIDE), ("nz", self.n[2], MAX_Z)]
        {
            if !(3..=most).contains(&n) {
                let split = if name == "nz" {
                    "; above 4096 the box is split into slabs: --split, --gpus"
                } else {
                    ""
                };
                return Err(Error::InvalidInput(format!(
                    "--{name} must be between 3 and {most} (faces included{split}), got {n}"
                )));
            }
        }
        for (name, value) in [("alpha", self.alpha), ("h", self.h), ("dt", self.dt)] {
            if !value.is_finite() || value <= 0.0 {
                return Err(Error::InvalidInput(format!(
                    "--{name} must be a finite number above 0, got {value}"
                )));
            }
        }
        if !self.boundary.is_finite() {
            return Err(Error::InvalidInput(format!(
                "--boundary-value must be finite, got {}",
                self.boundary
            )));
        }
        let limit = self.dt_limit();
        if self.dt > limit {
            return Err(Error::InvalidInput(format!(
                "--dt {} is above the RK4 stability limit {limit:.6} (2.785·h²/(12·α) for this 7-point stencil)",
                self.dt
            )));
        }
        Ok(())
    }

    /// The slowest eigenvalue of `α∇²` with Dirichlet faces: `−4a·Σ sin²(π/(2(n−1)))`.
    pub fn sine_eigenvalue(&self) -> f64 {
        let a = f64::from(self.a());
        -4.0 * a
            * self
                .n
                .iter()
                .map(|&n| (std::f64::consts::PI / (2.0 * f64::from(n - 1))).sin().powi(2))
                .sum::<f64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_split_box_goes_past_4096_planes() {
        let mut setup = HeatSetup::cube(16, HeatInit::Blobs);
        setup.n = [16, 16, MAX_Z];
        assert!(setup.validate().is_ok());
        setup.n = [16, 16, MAX_Z + 1];
        let e = setup.validate().unwrap_err().to_string();
        assert!(e.contains("--nz must be between 3 and 65536") && e.contains("--split"), "{e}");
        setup.n = [4097, 16, 16];
        assert!(setup.validate().unwrap_err().to_string().contains("--nx must be between 3 and 4096"));
    }
}
