//! A Gray-Scott run as a user asks for it (a preset, and values that replace the preset's),
//! resolved into a [`Setup`] and checked: the rules the command line and `serve` share, so
//! neither can start a run the other would refuse.

use std::path::PathBuf;

use super::{Init, PRESETS, Preset, Rates, Setup};
use crate::error::{Error, Result, at_most};

/// The largest rate accepted: with every rate and dt at most this, each term of the update
/// stays below 1e13, far inside float32 (U and V are clamped to [0, 1]).
pub const MAX_RATE: f64 = 1e6;

/// The preset called `name`; the error lists the valid ones.
pub fn named_preset(name: &str) -> Result<&'static Preset> {
    super::preset(name).ok_or_else(|| {
        let names: Vec<_> = PRESETS.iter().map(|p| p.name).collect();
        Error::InvalidInput(format!("unknown preset '{name}'; valid presets: {}", names.join(", ")))
    })
}

/// What a run asks for: a preset, and the values that replace the preset's own (`None`: the
/// preset's).
#[derive(Clone, Debug)]
pub struct Choices {
    pub preset: String,
    pub width: u32,
    pub height: u32,
    pub feed: Option<f32>,
    pub kill: Option<f32>,
    pub du: Option<f32>,
    pub dv: Option<f32>,
    pub dt: Option<f32>,
    pub init: Option<Init>,
    /// Seeds V from this image's luminance instead of `init`.
    pub init_image: Option<PathBuf>,
    pub seed: u64,
}

impl Choices {
    /// The setup these choices make, checked: the preset, the grid, the rates (finite, within
    /// ±[`MAX_RATE`], inside the stability limit); each refusal names the option at fault.
    pub fn setup(&self) -> Result<Setup> {
        let preset = named_preset(&self.preset)?;
        let base = preset.rates();
        let setup = Setup {
            width: self.width,
            height: self.height,
            rates: Rates {
                du: self.du.unwrap_or(base.du),
                dv: self.dv.unwrap_or(base.dv),
                feed: self.feed.unwrap_or(base.feed),
                kill: self.kill.unwrap_or(base.kill),
                dt: self.dt.unwrap_or(base.dt),
            },
            init: self.init.unwrap_or(preset.init),
            init_image: self.init_image.clone(),
            seed: self.seed,
        };
        setup.validate()?;
        let r = &setup.rates;
        for (option, value) in
            [("--du", r.du), ("--dv", r.dv), ("--feed", r.feed), ("--kill", r.kill), ("--dt", r.dt)]
        {
            at_most(option, f64::from(value), MAX_RATE, "beyond it the update can overflow float32")?;
        }
        Ok(setup)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn coral() -> Choices {
        Choices {
            preset: "coral".into(),
            width: 64,
            height: 32,
            feed: None,
            kill: None,
            du: None,
            dv: None,
            dt: None,
            init: None,
            init_image: None,
            seed: 7,
        }
    }

    #[test]
    fn the_preset_fills_what_is_not_given() {
        let setup = coral().setup().unwrap();
        let preset = named_preset("coral").unwrap();
        assert_eq!((setup.width, setup.height, setup.seed), (64, 32, 7));
        assert_eq!((setup.rates.feed, setup.init), (preset.feed, preset.init));
        let given = Choices { kill: Some(0.06), ..coral() }.setup().unwrap();
        assert_eq!(given.rates.kill, 0.06);
    }

    #[test]
    fn refusals_name_the_option() {
        for (choices, expected) in [
            (Choices { preset: "nope".into(), ..coral() }, "unknown preset 'nope'; valid presets: coral, "),
            (Choices { feed: Some(1e7), ..coral() }, "--feed must be a finite number within ±1e6"),
            (Choices { width: 0, ..coral() }, "--width"),
            (Choices { du: Some(0.3), ..coral() }, "stability"),
        ] {
            let e = choices.setup().unwrap_err().to_string();
            assert!(e.contains(expected), "{e}");
        }
    }
}
