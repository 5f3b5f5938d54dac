//! A Physarum run as a user asks for it (a preset, and values that replace the preset's),
//! resolved into a [`PhysarumSetup`] and checked: the rules the command line and `serve`
//! share, so neither can start a run the other would refuse.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::{AgentInit, PHYSARUM_PRESETS, PhysarumPreset, PhysarumSetup, Sensing, physarum_preset};
use crate::{
    error::{Error, Result},
    settings::{DEFAULT_SEED, Seed},
};

/// The most trail the whole grid may ever hold: diffusion keeps the total and decay shrinks
/// it, so no cell (and no sum over cells) exceeds image strength × cells + deposit × agents ×
/// min(steps, 1/decay); below this bound that stays far inside float32.
pub const MAX_TRAIL: f64 = 1e30;

/// The preset called `name`; the error lists the valid ones.
pub fn named_physarum_preset(name: &str) -> Result<&'static PhysarumPreset> {
    physarum_preset(name).ok_or_else(|| {
        let names: Vec<_> = PHYSARUM_PRESETS.iter().map(|p| p.name).collect();
        Error::InvalidInput(format!("unknown preset '{name}'; valid presets: {}", names.join(", ")))
    })
}

/// The preset of a run that asks for none.
pub const DEFAULT_PRESET: &str = "network";
/// The grid side of a run that asks for none.
pub const DEFAULT_SIZE: u32 = 1024;
/// The agent count of a run that asks for none.
pub const DEFAULT_AGENTS: u32 = 1_500_000;
/// The step count of a run that asks for none.
pub const DEFAULT_STEPS: u32 = 600;

/// What a run asks for: a preset, and the values that replace the preset's own (`None`: the
/// preset's, or the default: the constants above, and [`PhysarumSetup::default`]'s jitter,
/// sensing, start and image strength). The one struct of Physarum's settings: the `[physarum]`
/// table of a settings file (the fields named as the command line's options; a file may set a
/// few), `serve`'s page settings, and what the command line's options make.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhysarumChoices {
    /// A preset's name (default [`DEFAULT_PRESET`]).
    pub preset: Option<String>,
    /// Default [`DEFAULT_SIZE`].
    pub width: Option<u32>,
    /// Default [`DEFAULT_SIZE`].
    pub height: Option<u32>,
    /// Default [`DEFAULT_AGENTS`].
    pub agents: Option<u32>,
    /// The run's step count (default [`DEFAULT_STEPS`]); [`Self::setup`] takes the count it
    /// checks for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps: Option<u32>,
    pub sensor_dist: Option<f32>,
    pub sensor_angle: Option<f32>,
    pub turn_angle: Option<f32>,
    pub step_size: Option<f32>,
    pub deposit: Option<f32>,
    pub diffuse: Option<f32>,
    pub decay: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jitter: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "crate::settings::by_name")]
    pub sensing: Option<Sensing>,
    #[serde(default, with = "crate::settings::by_name")]
    pub init: Option<AgentInit>,
    /// Seeds the trail from this image's luminance (agents random).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub init_image: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image_strength: Option<f32>,
    /// Default [`DEFAULT_SEED`].
    pub seed: Option<Seed>,
}

impl PhysarumChoices {
    /// The resolved choices of a run of `setup` from `preset`, for `steps` steps: every value
    /// given (what a run's settings document records).
    pub fn resolved(preset: &str, setup: &PhysarumSetup, steps: u32) -> Self {
        Self {
            preset: Some(preset.to_owned()),
            width: Some(setup.width),
            height: Some(setup.height),
            agents: Some(setup.agents),
            steps: Some(steps),
            sensor_dist: Some(setup.sensor_dist),
            sensor_angle: Some(setup.sensor_angle),
            turn_angle: Some(setup.turn_angle),
            step_size: Some(setup.step_size),
            deposit: Some(setup.deposit),
            diffuse: Some(setup.diffuse),
            decay: Some(setup.decay),
            jitter: Some(setup.jitter),
            sensing: Some(setup.sensing),
            init: Some(setup.init),
            init_image: setup.init_image.clone(),
            image_strength: Some(setup.image_strength),
            seed: Some(Seed(setup.seed)),
        }
    }

    /// The preset these choices start from; the error lists the valid ones.
    pub fn preset(&self) -> Result<&'static PhysarumPreset> {
        named_physarum_preset(self.preset.as_deref().unwrap_or(DEFAULT_PRESET))
    }

    /// The step count: the one given, else [`DEFAULT_STEPS`].
    pub fn steps(&self) -> u32 {
        self.steps.unwrap_or(DEFAULT_STEPS)
    }

    /// The setup these choices make for a run of `steps` steps, checked: the preset, the grid
    /// and agents, the model parameters, and the most trail the run can deposit (which
    /// `steps` bounds, with the decay); each refusal names the option at fault.
    pub fn setup(&self, steps: u32) -> Result<PhysarumSetup> {
        let bad = |message: String| Err(Error::InvalidInput(message));
        let preset = self.preset()?;
        let base = PhysarumSetup::default();
        let setup = PhysarumSetup {
            width: self.width.unwrap_or(DEFAULT_SIZE),
            height: self.height.unwrap_or(DEFAULT_SIZE),
            agents: self.agents.unwrap_or(DEFAULT_AGENTS),
            sensor_dist: self.sensor_dist.unwrap_or(preset.sensor_dist),
            sensor_angle: self.sensor_angle.unwrap_or(preset.sensor_angle),
            turn_angle: self.turn_angle.unwrap_or(preset.turn_angle),
            step_size: self.step_size.unwrap_or(preset.step_size),
            deposit: self.deposit.unwrap_or(preset.deposit),
            diffuse: self.diffuse.unwrap_or(preset.diffuse),
            decay: self.decay.unwrap_or(preset.decay),
            jitter: self.jitter.unwrap_or(base.jitter),
            sensing: self.sensing.unwrap_or(base.sensing),
            seed: self.seed.map_or(DEFAULT_SEED, |s| s.0),
            init: self.init.unwrap_or(base.init),
            init_image: self.init_image.clone(),
            image_strength: self.image_strength.unwrap_or(base.image_strength),
        };
        // Sensors and steps span at most one period of the grid: name the options that set it.
        let side = setup.width.min(setup.height);
        if side >= 1 {
            for (option, value) in [("--sensor-dist", setup.sensor_dist), ("--step-size", setup.step_size)] {
                if value > side as f32 {
                    return bad(format!(
                        "{option} {value} is longer than the grid's shorter side, {side} cells (--size, --width, \
                         --height); a sensor or a step spans at most one period"
                    ));
                }
            }
        }
        setup.validate()?;
        let cells = f64::from(setup.width) * f64::from(setup.height);
        let image_trail =
            if setup.init_image.is_some() { f64::from(setup.image_strength) * cells } else { 0.0 };
        if image_trail > MAX_TRAIL {
            return bad(format!(
                "--image-strength {} seeds {image_trail:e} trail units over the grid, above {MAX_TRAIL:e}, \
                 beyond which the trail can overflow float32; lower --image-strength",
                setup.image_strength
            ));
        }
        let lifetime = if setup.decay > 0.0 {
            f64::from(steps).min(1.0 / f64::from(setup.decay))
        } else {
            f64::from(steps)
        };
        let deposited = f64::from(setup.deposit) * f64::from(setup.agents) * lifetime;
        if deposited > MAX_TRAIL {
            return bad(format!(
                "--deposit {} × --agents {} × {lifetime} steps (--steps, at most 1/--decay) = {deposited:e} trail units, \
                 above {MAX_TRAIL:e}, beyond which the trail can overflow float32; lower --deposit",
                setup.deposit, setup.agents
            ));
        }
        Ok(setup)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn network() -> PhysarumChoices {
        PhysarumChoices {
            preset: Some("network".into()),
            width: Some(64),
            height: Some(64),
            agents: Some(1000),
            ..PhysarumChoices::default()
        }
    }

    #[test]
    fn the_preset_fills_what_is_not_given() {
        let preset = named_physarum_preset("network").unwrap();
        let setup = network().setup(100).unwrap();
        assert_eq!((setup.decay, setup.sensor_dist), (preset.decay, preset.sensor_dist));
        assert_eq!(PhysarumChoices { decay: Some(0.3), ..network() }.setup(100).unwrap().decay, 0.3);
    }

    #[test]
    fn refusals_name_the_option() {
        for (choices, expected) in [
            (
                PhysarumChoices { preset: Some("nope".into()), ..network() },
                "unknown preset 'nope'; valid presets: ",
            ),
            (PhysarumChoices { sensor_dist: Some(100.0), ..network() }, "--sensor-dist 100 is longer"),
            (PhysarumChoices { decay: Some(1.0), ..network() }, "--decay"),
            (PhysarumChoices { deposit: Some(1e30), ..network() }, "lower --deposit"),
        ] {
            let e = choices.setup(u32::MAX).unwrap_err().to_string();
            assert!(e.contains(expected), "{e}");
        }
    }

    #[test]
    fn nothing_given_is_the_defaults_and_serde_reads_back_what_it_writes() {
        let choices = PhysarumChoices::default();
        let setup = choices.setup(choices.steps()).unwrap();
        let preset = named_physarum_preset(DEFAULT_PRESET).unwrap();
        assert_eq!((setup.width, setup.height, setup.agents), (DEFAULT_SIZE, DEFAULT_SIZE, DEFAULT_AGENTS));
        assert_eq!(
            (setup.sensor_dist, setup.seed, choices.steps()),
            (preset.sensor_dist, DEFAULT_SEED, DEFAULT_STEPS)
        );
        let resolved = PhysarumChoices::resolved("network", &network().setup(10).unwrap(), 10);
        let json = serde_json::to_value(&resolved).unwrap();
        assert_eq!(
            (json["sensing"].as_str(), json["init"].as_str()),
            (Some("nearest"), Some("random")),
            "{json}"
        );
        assert_eq!(serde_json::from_value::<PhysarumChoices>(json).unwrap(), resolved);
    }
}
