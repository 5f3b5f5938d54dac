//! A Gray-Scott run as a user asks for it (a preset, and values that replace the preset's),
//! resolved into a [`Setup`] and checked: the rules the command line and `serve` share, so
//! neither can start a run the other would refuse.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::{Init, PRESETS, Preset, Rates, Setup};
use crate::{
    error::{Error, Result, at_most},
    settings::{DEFAULT_SEED, Seed},
};

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

/// The preset of a run that asks for none.
pub const DEFAULT_PRESET: &str = "coral";
/// The grid side of a run that asks for none.
pub const DEFAULT_SIZE: u32 = 512;

/// What a run asks for: a preset, and the values that replace the preset's own (`None`: the
/// preset's, or the default). The one struct of Gray-Scott's settings: the `[grayscott]` table
/// of a settings file (the fields named as the command line's options; a file may set a few),
/// `serve`'s page settings, and what the command line's options make.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Choices {
    /// A preset's name (default [`DEFAULT_PRESET`]).
    pub preset: Option<String>,
    /// Grid width in cells (default [`DEFAULT_SIZE`]).
    pub width: Option<u32>,
    /// Grid height in cells (default [`DEFAULT_SIZE`]).
    pub height: Option<u32>,
    /// The run's step count (default: the preset's); not part of the [`Setup`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps: Option<u32>,
    pub feed: Option<f32>,
    pub kill: Option<f32>,
    pub du: Option<f32>,
    pub dv: Option<f32>,
    pub dt: Option<f32>,
    #[serde(default, with = "crate::settings::by_name")]
    pub init: Option<Init>,
    /// Seeds V from this image's luminance instead of `init`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub init_image: Option<PathBuf>,
    /// Default [`DEFAULT_SEED`].
    pub seed: Option<Seed>,
}

impl Choices {
    /// The resolved choices of a run of `setup` from `preset`, for `steps` steps: every value
    /// given (what a run's settings document records).
    pub fn resolved(preset: &str, setup: &Setup, steps: u32) -> Self {
        let r = &setup.rates;
        Self {
            preset: Some(preset.to_owned()),
            width: Some(setup.width),
            height: Some(setup.height),
            steps: Some(steps),
            feed: Some(r.feed),
            kill: Some(r.kill),
            du: Some(r.du),
            dv: Some(r.dv),
            dt: Some(r.dt),
            init: Some(setup.init),
            init_image: setup.init_image.clone(),
            seed: Some(Seed(setup.seed)),
        }
    }

    /// The preset these choices start from; the error lists the valid ones.
    pub fn preset(&self) -> Result<&'static Preset> {
        named_preset(self.preset.as_deref().unwrap_or(DEFAULT_PRESET))
    }

    /// The step count: the one given, else the preset's.
    pub fn steps(&self) -> Result<u32> {
        Ok(self.steps.unwrap_or(self.preset()?.steps))
    }

    /// The setup these choices make, checked: the preset, the grid, the rates (finite, within
    /// ±[`MAX_RATE`], inside the stability limit); each refusal names the option at fault.
    pub fn setup(&self) -> Result<Setup> {
        let preset = self.preset()?;
        let base = preset.rates();
        let setup = Setup {
            width: self.width.unwrap_or(DEFAULT_SIZE),
            height: self.height.unwrap_or(DEFAULT_SIZE),
            rates: Rates {
                du: self.du.unwrap_or(base.du),
                dv: self.dv.unwrap_or(base.dv),
                feed: self.feed.unwrap_or(base.feed),
                kill: self.kill.unwrap_or(base.kill),
                dt: self.dt.unwrap_or(base.dt),
            },
            init: self.init.unwrap_or(preset.init),
            init_image: self.init_image.clone(),
            seed: self.seed.map_or(DEFAULT_SEED, |s| s.0),
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
            preset: Some("coral".into()),
            width: Some(64),
            height: Some(32),
            seed: Some(Seed(7)),
            ..Choices::default()
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
            (
                Choices { preset: Some("nope".into()), ..coral() },
                "unknown preset 'nope'; valid presets: coral, ",
            ),
            (Choices { feed: Some(1e7), ..coral() }, "--feed must be a finite number within ±1e6"),
            (Choices { width: Some(0), ..coral() }, "--width"),
            (Choices { du: Some(0.3), ..coral() }, "stability"),
        ] {
            let e = choices.setup().unwrap_err().to_string();
            assert!(e.contains(expected), "{e}");
        }
    }

    #[test]
    fn nothing_given_is_the_defaults() {
        let setup = Choices::default().setup().unwrap();
        let preset = named_preset(DEFAULT_PRESET).unwrap();
        assert_eq!((setup.width, setup.height, setup.seed), (DEFAULT_SIZE, DEFAULT_SIZE, DEFAULT_SEED));
        assert_eq!((setup.rates.kill, setup.init), (preset.kill, preset.init));
        assert_eq!(Choices::default().steps().unwrap(), preset.steps);
    }

    #[test]
    fn serde_reads_back_what_it_writes_by_the_options_names() {
        let setup = coral().setup().unwrap();
        let resolved = Choices::resolved("coral", &setup, 300);
        let json = serde_json::to_value(&resolved).unwrap();
        assert_eq!(json["init"], "spots");
        assert!(json.get("init_image").is_none(), "{json}");
        assert_eq!(serde_json::from_value::<Choices>(json).unwrap(), resolved);
        let partial: Choices = serde_json::from_str(r#"{"feed": 0.05, "init": "ring"}"#).unwrap();
        assert_eq!(partial, Choices { feed: Some(0.05), init: Some(Init::Ring), ..Choices::default() });
        for (json, expected) in [
            (r#"{"fed": 1}"#, "unknown field `fed`"),
            (r#"{"init": "nope"}"#, "unknown value 'nope', expected one of: "),
        ] {
            let e = serde_json::from_str::<Choices>(json).unwrap_err().to_string();
            assert!(e.contains(expected), "{e}");
        }
    }
}
