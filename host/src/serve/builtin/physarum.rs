//! Physarum in the live view: the library's [`Physarum`] through the driver's
//! [`PhysarumRun`], checked by the library's rules ([`PhysarumChoices`]), its model changed
//! live, the brush dropping agents.

use serde::{Deserialize, Serialize};
use simulations::{
    Device,
    choice::VariantChoice as _,
    physarum::{
        AgentInit, PHYSARUM_PRESETS, Physarum, PhysarumChoices, PhysarumSetup, PhysarumVariant,
        driven::PhysarumRun, named_physarum_preset,
    },
};

use super::batch;
use crate::{
    cli::physarum::PhysarumSim,
    serve::model::{Control, Demand, LiveModel, PresetInfo, Recorded, Start},
    settings_document::{Document, PhysarumTable, RunTable, name_of, names, parse_name},
};

/// The step count given to the checks of a live run, which has no end: the bound on the trail
/// deposited (deposit × agents × steps, at most 1/decay) then holds for any run.
const ENDLESS: u32 = u32::MAX;

/// Physarum, as the live view runs it.
#[derive(Debug)]
pub struct PhysarumLive;

/// Physarum's settings in the page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhysarumValues {
    pub width: u32,
    pub height: u32,
    pub agents: u32,
    pub preset: String,
    pub sensor_dist: f32,
    pub sensor_angle: f32,
    pub turn_angle: f32,
    pub step_size: f32,
    pub deposit: f32,
    pub diffuse: f32,
    pub decay: f32,
    /// Where agents start (`--init`).
    pub init: String,
    pub seed: u64,
}

impl PhysarumValues {
    /// The library's choices; what the page does not set (jitter, sensing, image strength) is
    /// the library's default, as on the command line.
    fn choices(&self) -> Result<PhysarumChoices, String> {
        let init = parse_name::<AgentInit>(&self.init).ok_or_else(|| {
            format!("init: unknown start '{}'; valid starts: {}", self.init, names::<AgentInit>())
        })?;
        let base = PhysarumSetup::default();
        Ok(PhysarumChoices {
            preset: self.preset.clone(),
            width: self.width,
            height: self.height,
            agents: self.agents,
            sensor_dist: Some(self.sensor_dist),
            sensor_angle: Some(self.sensor_angle),
            turn_angle: Some(self.turn_angle),
            step_size: Some(self.step_size),
            deposit: Some(self.deposit),
            diffuse: Some(self.diffuse),
            decay: Some(self.decay),
            jitter: base.jitter,
            sensing: base.sensing,
            seed: self.seed,
            init,
            init_image: None,
            image_strength: base.image_strength,
        })
    }

    /// The command line's options for these values.
    fn options(&self) -> Vec<(&'static str, String)> {
        vec![
            ("width", self.width.to_string()),
            ("height", self.height.to_string()),
            ("agents", self.agents.to_string()),
            ("preset", self.preset.clone()),
            ("sensor-dist", self.sensor_dist.to_string()),
            ("sensor-angle", self.sensor_angle.to_string()),
            ("turn-angle", self.turn_angle.to_string()),
            ("step-size", self.step_size.to_string()),
            ("deposit", self.deposit.to_string()),
            ("diffuse", self.diffuse.to_string()),
            ("decay", self.decay.to_string()),
            ("init", self.init.clone()),
            ("seed", self.seed.to_string()),
        ]
    }
}

impl LiveModel for PhysarumLive {
    type Settings = PhysarumValues;
    type Setup = PhysarumSetup;
    type Run = PhysarumRun;

    const RANGES_ARE_LIMITS: bool = false;
    const BRUSH: bool = true;

    fn name(&self) -> &'static str {
        "physarum"
    }

    fn label(&self) -> &'static str {
        "Physarum"
    }

    /// The first preset on a grid the device runs live (smaller on the CPU).
    fn defaults(&self, device: &Device) -> Start<PhysarumValues> {
        let gpu = matches!(device, Device::Cuda(_));
        let preset = &PHYSARUM_PRESETS[0];
        let side = if gpu { 2048 } else { 256 };
        Start {
            settings: PhysarumValues {
                width: side,
                height: side,
                agents: if gpu { 1 << 20 } else { 16_384 },
                preset: preset.name.into(),
                sensor_dist: preset.sensor_dist,
                sensor_angle: preset.sensor_angle,
                turn_angle: preset.turn_angle,
                step_size: preset.step_size,
                deposit: preset.deposit,
                diffuse: preset.diffuse,
                decay: preset.decay,
                init: name_of(&AgentInit::Random),
                seed: 1,
            },
            palette: "slime",
            steps_per_frame: 1,
        }
    }

    fn controls(&self) -> Vec<Control> {
        vec![
            Control::number("agents", "agents", 1.0, f64::from(u32::MAX)),
            Control::slider("sensor_angle", "sensor angle", 0.0, std::f64::consts::PI, 0.01),
            Control::slider("sensor_dist", "sensor dist", 0.0, 64.0, 0.5),
            Control::slider("turn_angle", "turn angle", 0.0, std::f64::consts::PI, 0.01),
            Control::slider("deposit", "deposit", 0.0, 20.0, 0.1),
            Control::slider("decay", "decay", 0.0, 0.5, 0.005),
        ]
    }

    fn presets(&self) -> Vec<PresetInfo> {
        PHYSARUM_PRESETS.iter().map(|p| PresetInfo { name: p.name, description: p.description }).collect()
    }

    /// The preset's model parameters.
    fn take_preset(&self, s: &mut PhysarumValues, name: &str) -> Result<(), String> {
        let p = named_physarum_preset(name).map_err(|e| e.to_string())?;
        (s.sensor_dist, s.sensor_angle, s.turn_angle, s.step_size) =
            (p.sensor_dist, p.sensor_angle, p.turn_angle, p.step_size);
        (s.deposit, s.diffuse, s.decay) = (p.deposit, p.diffuse, p.decay);
        Ok(())
    }

    fn check(&self, settings: &PhysarumValues) -> Result<PhysarumSetup, String> {
        settings.choices()?.setup(ENDLESS).map_err(|e| e.to_string())
    }

    fn demand(&self, setup: &PhysarumSetup) -> Demand {
        Demand { cells: setup.cells() as u64, agents: u64::from(setup.agents) }
    }

    fn build(&self, setup: &PhysarumSetup, device: &Device) -> simulations::Result<PhysarumRun> {
        Ok(PhysarumRun {
            sim: Physarum::new(setup, device, PhysarumVariant::default_on(device))?,
            save_agents: false,
        })
    }

    /// New model parameters apply from the next step; a new grid, agent count, seed or start
    /// needs a new simulation.
    fn change_live(
        &self,
        old: &PhysarumSetup,
        new: &PhysarumSetup,
        run: &mut PhysarumRun,
    ) -> Result<bool, String> {
        let key = |s: &PhysarumSetup| (s.width, s.height, s.agents, s.seed, s.init);
        if key(old) != key(new) {
            return Ok(false);
        }
        run.sim.set_model(new).map_err(|e| e.to_string())?;
        Ok(true)
    }

    /// Drops agents: about two per cell of the brush, and never more than a tenth of them.
    fn brush(&self, run: &mut PhysarumRun, x: f32, y: f32, radius: f32) -> Result<(), String> {
        let area = std::f32::consts::PI * radius * radius;
        let count = ((2.0 * area) as u32).clamp(1, (run.sim.setup().agents / 10).max(1));
        run.sim.drop_agents(x, y, radius, count).map_err(|e| e.to_string())
    }

    fn command(&self, s: &Recorded<PhysarumValues>, steps: u32) -> Option<String> {
        let arguments =
            batch::arguments(self.name(), &s.model.options(), s.palette, s.steps_per_frame, steps);
        Some(batch::command(&arguments))
    }

    /// The `--config` TOML the CLI records for the same run (checked for its `steps`, as
    /// the command line checks them).
    fn record(&self, s: &Recorded<PhysarumValues>, steps: u32, device: &Device) -> Result<String, String> {
        let steps = batch::batch_steps(steps);
        let setup = s.model.choices()?.setup(steps).map_err(batch::message)?;
        let arguments =
            batch::arguments(self.name(), &s.model.options(), s.palette, s.steps_per_frame, steps);
        let document = Document::of_run(
            PhysarumTable::of(&s.model.preset, &setup, steps),
            RunTable::ran(device, PhysarumVariant::default_on(device)),
            batch::frames::<PhysarumSim>(s.palette, s.steps_per_frame),
            batch::provenance(&arguments, device),
        );
        Ok(document.to_toml(self.name()))
    }
}
