//! Physarum in the live view: the library's [`Physarum`] through the driver's
//! [`PhysarumRun`], its settings the library's [`PhysarumChoices`] checked by the library's
//! rules, its model changed live, the brush dropping agents.

use simulations::{
    Choice as _, Device,
    choice::VariantChoice as _,
    physarum::{
        AgentInit, PHYSARUM_PRESETS, Physarum, PhysarumChoices, PhysarumSetup, PhysarumVariant,
        driven::PhysarumRun, named_physarum_preset,
    },
    settings::{DEFAULT_SEED, Seed},
};

use super::batch;
use crate::{
    cli::physarum::PhysarumSim,
    serve::model::{Control, Demand, LiveModel, PresetInfo, Recorded, Start},
    settings_document::{Document, RunTable},
};

/// The step count given to the checks of a live run, which has no end: the bound on the trail
/// deposited (deposit × agents × steps, at most 1/decay) then holds for any run.
const ENDLESS: u32 = u32::MAX;

/// Physarum, as the live view runs it.
#[derive(Debug)]
pub struct PhysarumLive;

/// The command line's options (name, value) of the page's settings, in the order the batch
/// command lists them.
fn options(c: &PhysarumChoices) -> Vec<(&'static str, String)> {
    let number = |v: Option<f32>| v.map(|v| v.to_string());
    let words = [
        ("width", c.width.map(|v| v.to_string())),
        ("height", c.height.map(|v| v.to_string())),
        ("agents", c.agents.map(|v| v.to_string())),
        ("preset", c.preset.clone()),
        ("sensor-dist", number(c.sensor_dist)),
        ("sensor-angle", number(c.sensor_angle)),
        ("turn-angle", number(c.turn_angle)),
        ("step-size", number(c.step_size)),
        ("deposit", number(c.deposit)),
        ("diffuse", number(c.diffuse)),
        ("decay", number(c.decay)),
        ("init", c.init.map(|v| v.name().to_owned())),
        ("seed", c.seed.map(|v| v.0.to_string())),
    ];
    words.into_iter().filter_map(|(name, value)| Some((name, value?))).collect()
}

impl LiveModel for PhysarumLive {
    /// The library's choices; what the page has no setting for (the step count, jitter,
    /// sensing, image and its strength) is the library's default, as on the command line.
    type Settings = PhysarumChoices;
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
    fn defaults(&self, device: &Device) -> Start<PhysarumChoices> {
        let gpu = matches!(device, Device::Cuda(_));
        let preset = &PHYSARUM_PRESETS[0];
        let side = if gpu { 2048 } else { 256 };
        Start {
            settings: PhysarumChoices {
                width: Some(side),
                height: Some(side),
                agents: Some(if gpu { 1 << 20 } else { 16_384 }),
                preset: Some(preset.name.into()),
                sensor_dist: Some(preset.sensor_dist),
                sensor_angle: Some(preset.sensor_angle),
                turn_angle: Some(preset.turn_angle),
                step_size: Some(preset.step_size),
                deposit: Some(preset.deposit),
                diffuse: Some(preset.diffuse),
                decay: Some(preset.decay),
                init: Some(AgentInit::Random),
                seed: Some(Seed(DEFAULT_SEED)),
                ..PhysarumChoices::default()
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
    fn take_preset(&self, s: &mut PhysarumChoices, name: &str) -> Result<(), String> {
        let p = named_physarum_preset(name).map_err(|e| e.to_string())?;
        (s.sensor_dist, s.sensor_angle, s.turn_angle, s.step_size) =
            (Some(p.sensor_dist), Some(p.sensor_angle), Some(p.turn_angle), Some(p.step_size));
        (s.deposit, s.diffuse, s.decay) = (Some(p.deposit), Some(p.diffuse), Some(p.decay));
        Ok(())
    }

    fn check(&self, settings: &PhysarumChoices) -> Result<PhysarumSetup, String> {
        settings.setup(ENDLESS).map_err(|e| e.to_string())
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

    fn command(&self, s: &Recorded<PhysarumChoices>, steps: u32) -> Option<String> {
        let arguments = batch::arguments(self.name(), &options(s.model), s.palette, s.steps_per_frame, steps);
        Some(batch::command(&arguments))
    }

    /// The `--config` TOML the CLI records for the same run (checked for its `steps`, as
    /// the command line checks them).
    fn record(&self, s: &Recorded<PhysarumChoices>, steps: u32, device: &Device) -> Result<String, String> {
        let steps = batch::batch_steps(steps);
        let setup = s.model.setup(steps).map_err(batch::message)?;
        let preset = s.model.preset().map_err(batch::message)?;
        let arguments = batch::arguments(self.name(), &options(s.model), s.palette, s.steps_per_frame, steps);
        let document = Document::of_run(
            PhysarumChoices::resolved(preset.name, &setup, steps),
            RunTable::ran(device, PhysarumVariant::default_on(device)),
            batch::frames::<PhysarumSim>(s.palette, s.steps_per_frame),
            batch::provenance(&arguments, device),
        );
        Ok(document.to_toml(self.name()))
    }
}
