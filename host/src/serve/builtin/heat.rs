//! Heat in the live view: the library's [`Heat`] (its middle z-slice), checked by the
//! library's rules ([`HeatChoices`]); every change of the model starts a new simulation.

use serde::{Deserialize, Serialize};
use simulations::{
    Device,
    choice::VariantChoice as _,
    heat::{Heat, HeatChoices, HeatInit, HeatSetup, HeatVariant},
};

use super::batch;
use crate::{
    cli::heat::HeatSim,
    serve::model::{Control, Demand, LiveModel, Recorded, Start},
    settings_document::{Document, HeatTable, RunTable, name_of, names, parse_name},
};

/// Heat, as the live view runs it.
#[derive(Debug)]
pub struct HeatLive;

/// Heat's settings in the page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeatValues {
    /// Grid points per side (a cube).
    pub size: u32,
    pub alpha: f32,
    pub boundary_value: f32,
    /// The starting field (`--init`).
    pub init: String,
    pub seed: u64,
}

/// The grid spacing of a live run: the command line's default.
const SPACING: f32 = 1.0;

impl HeatValues {
    fn choices(&self) -> Result<HeatChoices, String> {
        let init = parse_name::<HeatInit>(&self.init).ok_or_else(|| {
            format!("init: unknown starting field '{}'; valid fields: {}", self.init, names::<HeatInit>())
        })?;
        Ok(HeatChoices {
            n: [self.size; 3],
            alpha: self.alpha,
            h: SPACING,
            dt: None,
            boundary_value: self.boundary_value,
            init,
            seed: self.seed,
        })
    }

    /// The command line's options for these values.
    fn options(&self) -> Vec<(&'static str, String)> {
        vec![
            ("size", self.size.to_string()),
            ("alpha", self.alpha.to_string()),
            ("boundary-value", self.boundary_value.to_string()),
            ("init", self.init.clone()),
            ("seed", self.seed.to_string()),
        ]
    }
}

impl LiveModel for HeatLive {
    type Settings = HeatValues;
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
    fn defaults(&self, device: &Device) -> Start<HeatValues> {
        let gpu = matches!(device, Device::Cuda(_));
        Start {
            settings: HeatValues {
                size: if gpu { 256 } else { 64 },
                alpha: 1.0,
                boundary_value: 0.0,
                init: name_of(&HeatInit::HotCube),
                seed: 1,
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

    fn check(&self, settings: &HeatValues) -> Result<HeatSetup, String> {
        settings.choices()?.setup().map_err(|e| e.to_string())
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

    fn command(&self, s: &Recorded<HeatValues>, steps: u32) -> Option<String> {
        let arguments =
            batch::arguments(self.name(), &s.model.options(), s.palette, s.steps_per_frame, steps);
        Some(batch::command(&arguments))
    }

    /// The `--config` TOML the CLI records for the same run.
    fn record(&self, s: &Recorded<HeatValues>, steps: u32, device: &Device) -> Result<String, String> {
        let steps = batch::batch_steps(steps);
        let setup = s.model.choices()?.setup().map_err(batch::message)?;
        let arguments =
            batch::arguments(self.name(), &s.model.options(), s.palette, s.steps_per_frame, steps);
        let document = Document::of_run(
            HeatTable::of(&setup, steps),
            RunTable::ran(device, HeatVariant::default_on(device)),
            batch::frames::<HeatSim>(s.palette, s.steps_per_frame),
            batch::provenance(&arguments, device),
        );
        Ok(document.to_toml(self.name()))
    }
}
