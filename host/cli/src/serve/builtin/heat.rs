//! Heat in the live view: the library's [`Heat`] (its middle z-slice), its settings the
//! library's [`HeatChoices`] checked by the library's rules; every change of the model starts
//! a new simulation.

use simulations::{
    Choice as _, Device,
    choice::VariantChoice as _,
    heat::{self, Heat, HeatChoices, HeatSetup, HeatVariant},
    settings::{DEFAULT_SEED, Seed},
};

use super::batch;
use crate::{
    cli::heat::HeatSim,
    serve::model::{Control, Demand, LiveModel, Recorded, Start},
    settings_document::{Document, RunTable},
};

/// Heat, as the live view runs it.
#[derive(Debug)]
pub struct HeatLive;

/// The command line's options (name, value) of the page's settings, in the order the batch
/// command lists them.
fn options(c: &HeatChoices) -> Vec<(&'static str, String)> {
    let words = [
        ("size", c.size.map(|v| v.to_string())),
        ("alpha", c.alpha.map(|v| v.to_string())),
        ("boundary-value", c.boundary_value.map(|v| v.to_string())),
        ("init", c.init.map(|v| v.name().to_owned())),
        ("seed", c.seed.map(|v| v.0.to_string())),
    ];
    words.into_iter().filter_map(|(name, value)| Some((name, value?))).collect()
}

impl LiveModel for HeatLive {
    /// The library's choices: a cube's `size`, `alpha`, `boundary_value`, `init` and `seed`
    /// given; the grid spacing, the time step and the step count the command line's defaults
    /// (the page has no setting for them).
    type Settings = HeatChoices;
    type Setup = HeatSetup;
    type Run = Heat;

    const RANGES_ARE_LIMITS: bool = false;

    fn name(&self) -> &'static str {
        "heat"
    }

    fn label(&self) -> &'static str {
        "heat (middle slice)"
    }

    /// A hot cube in a cold box, on a grid the device runs live (smaller on the CPU).
    fn defaults(&self, device: &Device) -> Start<HeatChoices> {
        let gpu = matches!(device, Device::Cuda(_));
        Start {
            settings: HeatChoices {
                size: Some(if gpu { 256 } else { 64 }),
                alpha: Some(heat::DEFAULT_ALPHA),
                boundary_value: Some(0.0),
                init: Some(heat::DEFAULT_INIT),
                seed: Some(Seed(DEFAULT_SEED)),
                ..HeatChoices::default()
            },
            palette: "magma",
            steps_per_frame: if gpu { 10 } else { 2 },
        }
    }

    fn controls(&self) -> Vec<Control> {
        vec![Control::slider("alpha", "α", 0.05, 4.0, 0.05)]
    }

    fn grid(&self) -> &'static [&'static str] {
        &["size"]
    }

    fn check(&self, settings: &HeatChoices) -> Result<HeatSetup, String> {
        settings.setup().map_err(|e| e.to_string())
    }

    fn demand(&self, setup: &HeatSetup) -> Demand {
        Demand { cells: setup.cells() as u64, agents: 0 }
    }

    fn build(&self, setup: &HeatSetup, device: &Device) -> simulations::Result<Heat> {
        Heat::new(setup, device, HeatVariant::default_on(device))
    }

    fn brush(&self, _run: &mut Heat, _x: f32, _y: f32, _radius: f32) -> Result<(), String> {
        Err("the brush paints Gray-Scott's V or drops Physarum's agents; heat has no brush".into())
    }

    fn command(&self, s: &Recorded<HeatChoices>, steps: u32) -> Option<String> {
        let arguments = batch::arguments(self.name(), &options(s.model), s.palette, s.steps_per_frame, steps);
        Some(batch::command(&arguments))
    }

    /// The `--config` TOML the CLI records for the same run.
    fn record(&self, s: &Recorded<HeatChoices>, steps: u32, device: &Device) -> Result<String, String> {
        let steps = batch::batch_steps(steps);
        let setup = s.model.setup().map_err(batch::message)?;
        let arguments = batch::arguments(self.name(), &options(s.model), s.palette, s.steps_per_frame, steps);
        let document = Document::of_run(
            HeatChoices::resolved(&setup, steps),
            RunTable::ran(device, HeatVariant::default_on(device)),
            batch::frames::<HeatSim>(s.palette, s.steps_per_frame),
            batch::provenance(&arguments, device),
        );
        Ok(document.to_toml(self.name()))
    }
}
