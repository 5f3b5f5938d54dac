//! Gray-Scott through the driver ([`crate::driver`]): its frames come back from the GPU
//! while the simulation goes on.

use std::path::{Path, PathBuf};

use super::GrayScott;
use crate::{
    checkpoint::Checkpoint,
    driver::{DrivenSimulation, FrameDefaults, State},
    error::Result,
    export,
};

/// Gray-Scott's frame outputs by default: file names, frame rate, frame interval and palette (the
/// command line's and the Python package's).
#[derive(Debug)]
pub struct GrayScottFrames;

impl FrameDefaults for GrayScottFrames {
    const NAME: &'static str = "grayscott";
    const GIF: &'static str = "grayscott.gif";
    const MP4: &'static str = "grayscott.mp4";
    const FPS: &'static str = "25";
    const FRAME_EVERY: &'static str = "50";
    const PALETTE: &'static str = "cyberpunk";
}

impl State for GrayScott {
    fn steps_done(&self) -> u64 {
        GrayScott::steps_done(self)
    }

    fn fields(&mut self) -> Result<export::Fields> {
        self.export_fields()
    }

    fn save_checkpoint(&mut self, path: &Path) -> Result<PathBuf> {
        GrayScott::save_checkpoint(self, path)
    }

    fn is_root(&self) -> bool {
        GrayScott::is_root(self)
    }
}

impl DrivenSimulation for GrayScott {
    fn step(&mut self, steps: u32) -> Result<()> {
        GrayScott::step(self, steps)
    }

    fn synchronize(&mut self) -> Result<()> {
        GrayScott::synchronize(self)
    }

    fn frame_size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    /// Now; NCCL ranks other than 0 take part in the gather and get nothing.
    fn frame(&mut self) -> Result<Vec<u8>> {
        if !self.is_root() {
            self.fields()?;
            return Ok(Vec::new());
        }
        let mut levels = vec![0u8; self.width as usize * self.height as usize];
        self.levels(&mut levels)?;
        Ok(levels)
    }

    /// Frames come back while the simulation goes on ([`GrayScott::snapshot`]).
    fn take_frame(&mut self) -> Result<Option<Vec<u8>>> {
        self.snapshot()?;
        Ok(None)
    }

    fn collect_frames(&mut self, wait: bool) -> Result<Vec<Vec<u8>>> {
        self.collect(wait)
    }

    fn restore(&mut self, checkpoint: Checkpoint) -> Result<()> {
        GrayScott::restore(self, checkpoint)
    }

    fn describe(&self) -> String {
        GrayScott::describe(self)
    }
}
