//! A heat run as a user asks for it, resolved into a [`HeatSetup`] and checked: the rules the
//! command line and `serve` share, so neither can start a run the other would refuse.

use serde::{Deserialize, Serialize};

use super::{HeatInit, HeatSetup};
use crate::{
    error::{Error, Result, at_most},
    settings::{DEFAULT_SEED, Seed},
};

/// α/h² (the coefficient of the stencil) is kept within [1/MAX_COEFFICIENT, MAX_COEFFICIENT]
/// and the boundary value within ±MAX_VALUE: then every RK4 stage (at most 12·MAX_VALUE·α/h²
/// before the multiplication by dt ≤ 0.232·h²/α) stays finite in float32, and so does the
/// default dt.
pub const MAX_COEFFICIENT: f64 = 1e20;
pub const MAX_VALUE: f64 = 1e15;
/// h² (computed in float32) stays a normal number within these bounds.
pub const MIN_H: f64 = 1e-15;
pub const MAX_H: f64 = 1e15;

/// The grid points per side of a run that asks for none.
pub const DEFAULT_SIZE: u32 = 128;
/// The step count of a run that asks for none.
pub const DEFAULT_STEPS: u32 = 200;
/// The diffusivity of a run that asks for none.
pub const DEFAULT_ALPHA: f32 = 1.0;
/// The grid spacing of a run that asks for none.
pub const DEFAULT_H: f32 = 1.0;
/// The starting field of a run that asks for none.
pub const DEFAULT_INIT: HeatInit = HeatInit::HotCube;

/// What a run asks for (`None`: the default; for `dt`, 80% of the RK4 stability limit). The one
/// struct of heat's settings: the `[heat]` table of a settings file (the fields named as the
/// command line's options; a file may set a few), `serve`'s page settings, and what the command
/// line's options make.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeatChoices {
    /// Grid points per side, faces included (a cube; default [`DEFAULT_SIZE`]); `nx`, `ny`,
    /// `nz` override it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nx: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ny: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nz: Option<u32>,
    /// The run's step count (default [`DEFAULT_STEPS`]); not part of the [`HeatSetup`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps: Option<u32>,
    /// Default [`DEFAULT_ALPHA`].
    pub alpha: Option<f32>,
    /// Default [`DEFAULT_H`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub h: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dt: Option<f32>,
    /// Default 0.
    pub boundary_value: Option<f32>,
    /// Default [`DEFAULT_INIT`].
    #[serde(default, with = "crate::settings::by_name")]
    pub init: Option<HeatInit>,
    /// Default [`DEFAULT_SEED`].
    pub seed: Option<Seed>,
}

impl HeatChoices {
    /// The resolved choices of a run of `setup` for `steps` steps: every value given (what a
    /// run's settings document records).
    pub fn resolved(setup: &HeatSetup, steps: u32) -> Self {
        let [nx, ny, nz] = setup.n;
        Self {
            size: None,
            nx: Some(nx),
            ny: Some(ny),
            nz: Some(nz),
            steps: Some(steps),
            alpha: Some(setup.alpha),
            h: Some(setup.h),
            dt: Some(setup.dt),
            boundary_value: Some(setup.boundary),
            init: Some(setup.init),
            seed: Some(Seed(setup.seed)),
        }
    }

    /// The step count: the one given, else [`DEFAULT_STEPS`].
    pub fn steps(&self) -> u32 {
        self.steps.unwrap_or(DEFAULT_STEPS)
    }

    /// Grid points along x, y, z, faces included.
    pub fn n(&self) -> [u32; 3] {
        let size = self.size.unwrap_or(DEFAULT_SIZE);
        [self.nx, self.ny, self.nz].map(|n| n.unwrap_or(size))
    }

    /// The setup these choices make, checked (the grid, α and h and their ratio, the boundary
    /// value, dt against the stability limit); each refusal names the option at fault.
    pub fn setup(&self) -> Result<HeatSetup> {
        let alpha = self.alpha.unwrap_or(DEFAULT_ALPHA);
        let h = self.h.unwrap_or(DEFAULT_H);
        let boundary_value = self.boundary_value.unwrap_or(0.0);
        let bad = |message: String| Err(Error::InvalidInput(message));
        for (option, value) in [("--alpha", alpha), ("--h", h)] {
            if !(value.is_finite() && value > 0.0) {
                return bad(format!("{option} must be a finite number above 0, got {value}"));
            }
        }
        if !(MIN_H..=MAX_H).contains(&f64::from(h)) {
            return bad(format!(
                "--h must be between {MIN_H:e} and {MAX_H:e}, got {h}: h² is computed in float32"
            ));
        }
        let coefficient = f64::from(alpha) / (f64::from(h) * f64::from(h));
        if !(1.0 / MAX_COEFFICIENT..=MAX_COEFFICIENT).contains(&coefficient) {
            return bad(format!(
                "--alpha / --h² = {coefficient:e} (α = {alpha}, h = {h}) must be between {:e} and {MAX_COEFFICIENT:e}, \
                 where the RK4 stages and the time step stay finite in float32; rescale --alpha or --h",
                1.0 / MAX_COEFFICIENT
            ));
        }
        at_most(
            "--boundary-value",
            f64::from(boundary_value),
            MAX_VALUE,
            "beyond it the stencil can overflow float32",
        )?;
        let mut setup = HeatSetup {
            n: self.n(),
            alpha,
            h,
            dt: 0.0,
            boundary: boundary_value,
            init: self.init.unwrap_or(DEFAULT_INIT),
            seed: self.seed.map_or(DEFAULT_SEED, |s| s.0),
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
        HeatChoices { size: Some(16), ..HeatChoices::default() }
    }

    #[test]
    fn the_default_dt_is_inside_the_limit() {
        let setup = cube().setup().unwrap();
        assert_eq!(setup.dt, 0.8 * setup.dt_limit());
    }

    #[test]
    fn refusals_name_the_option() {
        for (choices, expected) in [
            (HeatChoices { alpha: Some(0.0), ..cube() }, "--alpha must be a finite number above 0"),
            (HeatChoices { h: Some(1e-20), ..cube() }, "--h must be between"),
            (HeatChoices { alpha: Some(1e30), ..cube() }, "rescale --alpha or --h"),
            (
                HeatChoices { boundary_value: Some(1e38), ..cube() },
                "--boundary-value must be a finite number",
            ),
            (HeatChoices { dt: Some(10.0), ..cube() }, "stability limit"),
            (HeatChoices { nx: Some(2), ..cube() }, "--nx"),
        ] {
            let e = choices.setup().unwrap_err().to_string();
            assert!(e.contains(expected), "{e}");
        }
    }

    #[test]
    fn nothing_given_is_the_defaults_and_serde_reads_back_what_it_writes() {
        let setup = HeatChoices::default().setup().unwrap();
        assert_eq!((setup.n, setup.alpha, setup.h), ([DEFAULT_SIZE; 3], DEFAULT_ALPHA, DEFAULT_H));
        assert_eq!(
            (setup.init, setup.seed, HeatChoices::default().steps()),
            (DEFAULT_INIT, DEFAULT_SEED, DEFAULT_STEPS)
        );
        let given = HeatChoices { size: Some(9), ny: Some(12), ..HeatChoices::default() };
        assert_eq!(given.n(), [9, 12, 9]);
        let resolved = HeatChoices::resolved(&cube().setup().unwrap(), 20);
        let json = serde_json::to_value(&resolved).unwrap();
        assert_eq!((json["init"].as_str(), json.get("size")), (Some("hot-cube"), None), "{json}");
        assert_eq!(serde_json::from_value::<HeatChoices>(json).unwrap(), resolved);
    }
}
