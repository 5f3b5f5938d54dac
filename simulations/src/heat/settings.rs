//! A heat run as a user asks for it, resolved into a [`HeatSetup`] and checked: the rules the
//! command line and `serve` share, so neither can start a run the other would refuse.

use super::{HeatInit, HeatSetup};
use crate::error::{Error, Result, at_most};

/// α/h² (the coefficient of the stencil) is kept within [1/MAX_COEFFICIENT, MAX_COEFFICIENT]
/// and the boundary value within ±MAX_VALUE: then every RK4 stage (at most 12·MAX_VALUE·α/h²
/// before the multiplication by dt ≤ 0.232·h²/α) stays finite in float32, and so does the
/// default dt.
pub const MAX_COEFFICIENT: f64 = 1e20;
pub const MAX_VALUE: f64 = 1e15;
/// h² (computed in float32) stays a normal number within these bounds.
pub const MIN_H: f64 = 1e-15;
pub const MAX_H: f64 = 1e15;

/// What a run asks for (`dt`: `None` for 80% of the RK4 stability limit).
#[derive(Clone, Debug)]
pub struct HeatChoices {
    /// Grid points along x, y, z, faces included.
    pub n: [u32; 3],
    pub alpha: f32,
    pub h: f32,
    pub dt: Option<f32>,
    pub boundary_value: f32,
    pub init: HeatInit,
    pub seed: u64,
}

impl HeatChoices {
    /// The setup these choices make, checked (the grid, α and h and their ratio, the boundary
    /// value, dt against the stability limit); each refusal names the option at fault.
    pub fn setup(&self) -> Result<HeatSetup> {
        let bad = |message: String| Err(Error::InvalidInput(message));
        for (option, value) in [("--alpha", self.alpha), ("--h", self.h)] {
            if !(value.is_finite() && value > 0.0) {
                return bad(format!("{option} must be a finite number above 0, got {value}"));
            }
        }
        if !(MIN_H..=MAX_H).contains(&f64::from(self.h)) {
            return bad(format!(
                "--h must be between {MIN_H:e} and {MAX_H:e}, got {}: h² is computed in float32",
                self.h
            ));
        }
        let coefficient = f64::from(self.alpha) / (f64::from(self.h) * f64::from(self.h));
        if !(1.0 / MAX_COEFFICIENT..=MAX_COEFFICIENT).contains(&coefficient) {
            return bad(format!(
                "--alpha / --h² = {coefficient:e} (α = {}, h = {}) must be between {:e} and {MAX_COEFFICIENT:e}, \
                 where the RK4 stages and the time step stay finite in float32; rescale --alpha or --h",
                self.alpha,
                self.h,
                1.0 / MAX_COEFFICIENT
            ));
        }
        at_most(
            "--boundary-value",
            f64::from(self.boundary_value),
            MAX_VALUE,
            "beyond it the stencil can overflow float32",
        )?;
        let mut setup = HeatSetup {
            n: self.n,
            alpha: self.alpha,
            h: self.h,
            dt: 0.0,
            boundary: self.boundary_value,
            init: self.init,
            seed: self.seed,
        };
        // The default dt is finite and positive within the bounds above; a given one is checked
        // against the stability limit.
        setup.dt = self.dt.unwrap_or(0.8 * setup.dt_limit());
        setup.validate()?;
        Ok(setup)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cube() -> HeatChoices {
        HeatChoices {
            n: [16; 3],
            alpha: 1.0,
            h: 1.0,
            dt: None,
            boundary_value: 0.0,
            init: HeatInit::HotCube,
            seed: 1,
        }
    }

    #[test]
    fn the_default_dt_is_inside_the_limit() {
        let setup = cube().setup().unwrap();
        assert_eq!(setup.dt, 0.8 * setup.dt_limit());
    }

    #[test]
    fn refusals_name_the_option() {
        for (choices, expected) in [
            (HeatChoices { alpha: 0.0, ..cube() }, "--alpha must be a finite number above 0"),
            (HeatChoices { h: 1e-20, ..cube() }, "--h must be between"),
            (HeatChoices { alpha: 1e30, ..cube() }, "rescale --alpha or --h"),
            (HeatChoices { boundary_value: 1e38, ..cube() }, "--boundary-value must be a finite number"),
            (HeatChoices { dt: Some(10.0), ..cube() }, "stability limit"),
            (HeatChoices { n: [2, 16, 16], ..cube() }, "--nx"),
        ] {
            let e = choices.setup().unwrap_err().to_string();
            assert!(e.contains(expected), "{e}");
        }
    }
}
