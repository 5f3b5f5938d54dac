//! A Physarum run as a user asks for it (a preset, and values that replace the preset's),
//! resolved into a [`PhysarumSetup`] and checked: the rules the command line and `serve`
//! share, so neither can start a run the other would refuse.

use std::path::PathBuf;

use super::{AgentInit, PHYSARUM_PRESETS, PhysarumPreset, PhysarumSetup, Sensing, physarum_preset};
use crate::error::{Error, Result};

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

/// What a run asks for: a preset, and the model parameters that replace the preset's own
/// (`None`: the preset's).
#[derive(Clone, Debug)]
pub struct PhysarumChoices {
    pub preset: String,
    pub width: u32,
    pub height: u32,
    pub agents: u32,
    pub sensor_dist: Option<f32>,
    pub sensor_angle: Option<f32>,
    pub turn_angle: Option<f32>,
    pub step_size: Option<f32>,
    pub deposit: Option<f32>,
    pub diffuse: Option<f32>,
    pub decay: Option<f32>,
    pub jitter: f32,
    pub sensing: Sensing,
    pub seed: u64,
    pub init: AgentInit,
    /// Seeds the trail from this image's luminance (agents random).
    pub init_image: Option<PathBuf>,
    pub image_strength: f32,
}

impl PhysarumChoices {
    /// The setup these choices make for a run of `steps` steps, checked: the preset, the grid
    /// and agents, the model parameters, and the most trail the run can deposit (which
    /// `steps` bounds, with the decay); each refusal names the option at fault.
    pub fn setup(&self, steps: u32) -> Result<PhysarumSetup> {
        let bad = |message: String| Err(Error::InvalidInput(message));
        let preset = named_physarum_preset(&self.preset)?;
        let setup = PhysarumSetup {
            width: self.width,
            height: self.height,
            agents: self.agents,
            sensor_dist: self.sensor_dist.unwrap_or(preset.sensor_dist),
            sensor_angle: self.sensor_angle.unwrap_or(preset.sensor_angle),
            turn_angle: self.turn_angle.unwrap_or(preset.turn_angle),
            step_size: self.step_size.unwrap_or(preset.step_size),
            deposit: self.deposit.unwrap_or(preset.deposit),
            diffuse: self.diffuse.unwrap_or(preset.diffuse),
            decay: self.decay.unwrap_or(preset.decay),
            jitter: self.jitter,
            sensing: self.sensing,
            seed: self.seed,
            init: self.init,
            init_image: self.init_image.clone(),
            image_strength: self.image_strength,
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
            preset: "network".into(),
            width: 64,
            height: 64,
            agents: 1000,
            sensor_dist: None,
            sensor_angle: None,
            turn_angle: None,
            step_size: None,
            deposit: None,
            diffuse: None,
            decay: None,
            jitter: 0.0,
            sensing: Sensing::default(),
            seed: 1,
            init: AgentInit::default(),
            init_image: None,
            image_strength: 3.0,
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
                PhysarumChoices { preset: "nope".into(), ..network() },
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
}
