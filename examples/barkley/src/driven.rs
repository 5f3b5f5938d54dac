//! Barkley through the simulations library's driver ([`simulations::driver`]): the GIF, MP4, PNG frames,
//! the final `--png`, `--save`, checkpoints and `--resume` come from the driver; this file
//! only says what a frame, the fields and a checkpoint of Barkley are.

use std::{
    path::{Path, PathBuf},
    sync::Arc,
};

use ptxkit_host::Gpu;
use simulations::{
    checkpoint::{self, Checkpoint},
    driver::{FrameDefaults, Simulation, State},
    export::{Array, Fields},
};

use crate::{Field, Model, step_cpu, step_gpu};

/// The name checkpoints carry, and the driver's defaults for Barkley's frame options.
pub struct Barkley;

impl FrameDefaults for Barkley {
    const NAME: &'static str = "barkley";
    const GIF: &'static str = "barkley.gif";
    const MP4: &'static str = "barkley.mp4";
    const FPS: &'static str = "20";
    const FRAME_EVERY: &'static str = "50";
    const PALETTE: &'static str = "ocean";
}

/// A run of Barkley's model on the CPU or a GPU, as the driver steps it.
pub struct BarkleyRun {
    pub field: Field,
    model: Model,
    gpu: Option<Arc<Gpu>>,
    steps_done: u64,
}

impl BarkleyRun {
    /// From `field` at step 0, on `gpu` (or the CPU).
    pub fn new(field: Field, model: Model, gpu: Option<Arc<Gpu>>) -> Self {
        Self { field, model, gpu, steps_done: 0 }
    }

    /// Every parameter that shapes the dynamics, as a checkpoint records them.
    fn params(&self) -> Vec<(String, String)> {
        let m = &self.model;
        [
            ("a", m.a),
            ("b", m.b),
            ("epsilon", m.epsilon),
            ("diffusion", m.diffusion),
            ("spacing", m.spacing),
            ("dt", m.dt),
        ]
        .map(|(name, value)| checkpoint::param(name, value))
        .to_vec()
    }

    fn grid(&self) -> [u32; 3] {
        [self.field.width, self.field.height, 1]
    }

    fn kind() -> checkpoint::Simulation {
        checkpoint::Simulation::Model(Barkley::NAME.into())
    }
}

impl State for BarkleyRun {
    fn steps_done(&self) -> u64 {
        self.steps_done
    }

    /// `u` and `v`, of shape `[height, width]`.
    fn fields(&mut self) -> simulations::Result<Fields> {
        let shape = [u64::from(self.field.height), u64::from(self.field.width)];
        let arrays = vec![
            Array::new("u", &shape, self.field.u.clone()),
            Array::new("v", &shape, self.field.v.clone()),
        ];
        Ok(Fields { grid: self.grid(), spacing: self.model.spacing, arrays })
    }

    fn save_checkpoint(&mut self, path: &Path) -> simulations::Result<PathBuf> {
        let mut checkpoint = Checkpoint::new(Self::kind(), self.grid(), self.steps_done, self.params());
        checkpoint.arrays = vec![("u".into(), self.field.u.clone()), ("v".into(), self.field.v.clone())];
        checkpoint.write(path)
    }
}

impl Simulation for BarkleyRun {
    fn step(&mut self, steps: u32) -> simulations::Result<()> {
        let coefficients = self.model.coefficients();
        match &self.gpu {
            Some(gpu) => step_gpu(gpu, &mut self.field, &coefficients, steps).map_err(|e| match e {
                crate::Error::Gpu(e) => simulations::Error::from(e),
                other => simulations::Error::InvalidInput(other.to_string()),
            })?,
            None => step_cpu(&mut self.field, &coefficients, steps),
        }
        self.steps_done += u64::from(steps);
        Ok(())
    }

    fn frame_size(&self) -> (u32, u32) {
        (self.field.width, self.field.height)
    }

    /// u, 0 to 1, as palette levels.
    fn frame(&mut self) -> simulations::Result<Vec<u8>> {
        Ok(self.field.u.iter().map(|&u| (u.clamp(0.0, 1.0) * 255.0).round() as u8).collect())
    }

    fn restore(&mut self, mut checkpoint: Checkpoint) -> simulations::Result<()> {
        checkpoint.check(Self::kind(), self.grid(), &self.params())?;
        let cells = self.field.u.len();
        self.field.u = checkpoint.take_array("u", cells)?;
        self.field.v = checkpoint.take_array("v", cells)?;
        self.steps_done = checkpoint.steps;
        Ok(())
    }

    fn describe(&self) -> String {
        match &self.gpu {
            Some(gpu) => format!("the GPU ({}, {})", gpu.name(), gpu.image()),
            None => "the CPU".into(),
        }
    }
}
