//! Barkley in `serve`'s live view: this one unit is all it takes ([`LiveModel`]); `barkley
//! serve` registers it beside the built-in simulations. Frames are the driver's
//! ([`BarkleyRun`]'s u as palette levels). A change of a, b or ε goes on from the fields as
//! they are, with the new model from the next step (CPU and GPU alike); a change of the grid
//! starts the spiral again.

use barkley::{Field, Model, driven::BarkleyRun};
use host_cli::serve::{Control, Demand, LiveModel, Start};
use serde::{Deserialize, Serialize};
use simulations::Device;

/// The grid sides the command line accepts too (`--width`, `--height`): the library's.
pub use barkley::{MAX_SIDE, MIN_SIDE};

/// Barkley's model, as the live view runs it.
pub struct BarkleyLive;

/// Barkley's settings in the page: the grid and the model's a, b and ε (D, h and dt are the
/// default model's).
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BarkleySettings {
    pub width: u32,
    pub height: u32,
    pub a: f32,
    pub b: f32,
    pub epsilon: f32,
}

/// Checked settings: the grid and the model.
pub struct BarkleySetup {
    width: u32,
    height: u32,
    model: Model,
}

impl LiveModel for BarkleyLive {
    type Settings = BarkleySettings;
    type Setup = BarkleySetup;
    type Run = BarkleyRun;

    fn name(&self) -> &'static str {
        "barkley"
    }

    fn label(&self) -> &'static str {
        "Barkley"
    }

    fn defaults(&self, _device: &Device) -> Start<BarkleySettings> {
        let Model { a, b, epsilon, .. } = Model::default();
        Start {
            settings: BarkleySettings { width: 256, height: 256, a, b, epsilon },
            palette: "ocean",
            steps_per_frame: 10,
        }
    }

    /// Ranges within which the explicit step stays stable (dt/ε ≤ 2); the server refuses
    /// values outside them.
    fn controls(&self) -> Vec<Control> {
        vec![
            Control::slider("a", "a", 0.3, 1.0, 0.01),
            Control::slider("b", "b", 0.0, 0.1, 0.001),
            Control::slider("epsilon", "ε", 0.01, 0.1, 0.001),
        ]
    }

    fn check(&self, s: &BarkleySettings) -> Result<BarkleySetup, String> {
        for (name, side) in [("width", s.width), ("height", s.height)] {
            if !(MIN_SIDE..=MAX_SIDE).contains(&side) {
                return Err(format!("{name} must be between {MIN_SIDE} and {MAX_SIDE}, got {side}"));
            }
        }
        let model = Model { a: s.a, b: s.b, epsilon: s.epsilon, ..Model::default() };
        Ok(BarkleySetup { width: s.width, height: s.height, model })
    }

    fn demand(&self, setup: &BarkleySetup) -> Demand {
        Demand { cells: u64::from(setup.width) * u64::from(setup.height), agents: 0 }
    }

    /// The broken wave at step 0, on the server's GPU (with Barkley's kernels) or the CPU.
    fn build(&self, setup: &BarkleySetup, device: &Device) -> simulations::Result<BarkleyRun> {
        let gpu = match device {
            Device::Cuda(gpu) => Some(ptxkit_host::Gpu::open(gpu.ordinal(), &barkley::IMAGES)?),
            Device::Cpu => None,
        };
        let field = Field::broken_wave(setup.width, setup.height, &setup.model);
        Ok(BarkleyRun::new(field, setup.model, gpu))
    }

    /// The same grid: the running simulation takes the new model and goes on (`Ok(true)`);
    /// another grid: `Ok(false)`, a new simulation.
    fn change_live(
        &self,
        old: &BarkleySetup,
        new: &BarkleySetup,
        run: &mut BarkleyRun,
    ) -> Result<bool, String> {
        if (old.width, old.height) != (new.width, new.height) {
            return Ok(false);
        }
        Ok(run.set_model(new.model))
    }
}
