//! What the driver needs of a simulation ([`DrivenSimulation`], beyond its [`State`]): the one
//! trait the step loop and a command's run both drive, in a file of its own so that neither
//! imports the other for it.

use super::state::State;
use crate::{checkpoint::Checkpoint, error::Result};

/// What the driver needs of a simulation beyond its state ([`State`]).
pub trait DrivenSimulation: State {
    /// Queues `steps` steps (on a GPU they may still run when this returns).
    fn step(&mut self, steps: u32) -> Result<()>;
    /// Waits for the queued steps (a chunk that ends with no frame).
    fn synchronize(&mut self) -> Result<()> {
        Ok(())
    }
    /// The frame's width and height in pixels.
    fn frame_size(&self) -> (u32, u32);
    /// The current frame as palette levels, one byte per pixel, row by row. Every process of
    /// a job calls it (the processes gather to rank 0); other ranks may return nothing.
    fn frame(&mut self) -> Result<Vec<u8>>;
    /// Takes the current frame for the frame outputs: `Some` now, or `None` where it comes
    /// back later through [`DrivenSimulation::collect_frames`] (a GPU copying it back while the next
    /// steps run). Default: [`DrivenSimulation::frame`], now.
    fn take_frame(&mut self) -> Result<Option<Vec<u8>>> {
        self.frame().map(Some)
    }
    /// The frames [`DrivenSimulation::take_frame`] left to come back that are ready, oldest first;
    /// with `wait`, all of them. Default: none.
    fn collect_frames(&mut self, _wait: bool) -> Result<Vec<Vec<u8>>> {
        Ok(Vec::new())
    }
    /// Continues from `checkpoint`, refusing one of another simulation, grid or parameters.
    fn restore(&mut self, checkpoint: Checkpoint) -> Result<()>;
    /// Where and how it runs, for a summary line (`cuda fused on NVIDIA H200`).
    fn describe(&self) -> String;
}
