//! Physarum through the driver ([`crate::driver`]): frames are its trail map's levels;
//! `--save` writes the trail, and the agents too where asked.

use std::path::{Path, PathBuf};

use super::{Physarum, trail_levels};
use crate::{
    checkpoint::Checkpoint,
    driver::{DrivenSimulation, FrameDefaults, State},
    error::Result,
    export,
};

/// Physarum's frame outputs by default: file names, frame rate, frame interval and palette (the
/// command line's and the Python package's).
#[derive(Debug)]
pub struct PhysarumFrames;

impl FrameDefaults for PhysarumFrames {
    const NAME: &'static str = "physarum";
    const GIF: &'static str = "physarum.gif";
    const MP4: &'static str = "physarum.mp4";
    const FPS: &'static str = "25";
    const FRAME_EVERY: &'static str = "10";
    const PALETTE: &'static str = "slime";
}

/// A Physarum run as the driver steps it: the simulation, and whether `--save` holds the
/// agents (`--save-agents`).
pub struct PhysarumRun {
    pub sim: Physarum,
    pub save_agents: bool,
}

impl State for PhysarumRun {
    fn steps_done(&self) -> u64 {
        self.sim.steps_done()
    }

    fn fields(&mut self) -> Result<export::Fields> {
        self.sim.export_fields(self.save_agents)
    }

    fn save_checkpoint(&mut self, path: &Path) -> Result<PathBuf> {
        self.sim.save_checkpoint(path)
    }
}

impl DrivenSimulation for PhysarumRun {
    fn step(&mut self, steps: u32) -> Result<()> {
        self.sim.step(steps)
    }

    fn synchronize(&mut self) -> Result<()> {
        self.sim.synchronize()
    }

    fn frame_size(&self) -> (u32, u32) {
        (self.sim.setup.width, self.sim.setup.height)
    }

    fn frame(&mut self) -> Result<Vec<u8>> {
        Ok(trail_levels(&self.sim.trail()?))
    }

    fn restore(&mut self, checkpoint: Checkpoint) -> Result<()> {
        self.sim.restore(checkpoint)
    }

    fn describe(&self) -> String {
        self.sim.describe()
    }
}
