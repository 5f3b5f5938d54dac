//! Heat through the driver ([`crate::driver`]): frames are the middle z-slice, coloured over
//! the initial field's range (and the boundary value), fixed for the whole run and computed
//! once.

use std::path::{Path, PathBuf};

use super::{Heat, initial_range};
use crate::{
    checkpoint::Checkpoint,
    driver::{DrivenSimulation, FrameDefaults, State},
    error::Result,
    export,
};

/// Heat's frame outputs by default: file names, frame rate, frame interval and palette (the
/// command line's and the Python package's).
#[derive(Debug)]
pub struct HeatFrames;

impl FrameDefaults for HeatFrames {
    const NAME: &'static str = "heat";
    const GIF: &'static str = "heat.gif";
    const MP4: &'static str = "heat.mp4";
    const FPS: &'static str = "20";
    const FRAME_EVERY: &'static str = "10";
    const PALETTE: &'static str = "magma";
}

impl State for Heat {
    fn steps_done(&self) -> u64 {
        Heat::steps_done(self)
    }

    fn fields(&mut self) -> Result<export::Fields> {
        self.export_fields()
    }

    fn save_checkpoint(&mut self, path: &Path) -> Result<PathBuf> {
        Heat::save_checkpoint(self, path)
    }

    fn is_root(&self) -> bool {
        Heat::is_root(self)
    }
}

impl DrivenSimulation for Heat {
    fn step(&mut self, steps: u32) -> Result<()> {
        Heat::step(self, steps)
    }

    fn synchronize(&mut self) -> Result<()> {
        Heat::synchronize(self)
    }

    fn frame_size(&self) -> (u32, u32) {
        (self.setup.n[0], self.setup.n[1])
    }

    fn frame(&mut self) -> Result<Vec<u8>> {
        let setup = &self.setup;
        let (lo, hi) = *self.frame_range.get_or_insert_with(|| initial_range(setup));
        Ok(levels(&self.middle_slice()?, lo, hi))
    }

    fn restore(&mut self, checkpoint: Checkpoint) -> Result<()> {
        Heat::restore(self, checkpoint)
    }

    fn describe(&self) -> String {
        Heat::describe(self)
    }
}

/// Palette levels of `values` over `lo..=hi` (clamped).
pub fn levels(values: &[f32], lo: f32, hi: f32) -> Vec<u8> {
    let span = (hi - lo).max(f32::MIN_POSITIVE);
    values.iter().map(|&x| (((x - lo) / span).clamp(0.0, 1.0) * 255.0) as u8).collect()
}
