//! The overlap hook ([`Overlap`]): how a model hides its halo exchange behind its steps, the
//! split's step loop handing it each round of steps. Gray-Scott's pieces between NCCL ranks
//! are the split's own ([`super::pieces`]); heat's halves, edges first and rounds of tile
//! columns are heat's (`heat::overlap`).

use super::transport::Transport;
use crate::error::Result;

/// A model's way of overlapping its exchange with its steps, on the parts `P` of one process.
pub trait Overlap<P>: Send {
    /// `steps` steps of every part of `parts` (this process's, in order; at most the steps
    /// per exchange) and the exchange that refreshes every halo after them, over `transport`,
    /// queued so that the halos travel while the parts compute.
    fn round(&mut self, parts: &mut [P], transport: &mut Transport, steps: u32) -> Result<()>;
    /// Makes each part's stream wait for whatever the hook still has travelling: called at the
    /// end of every [`super::Split::step`], so that an output, new values or the caller's
    /// next work see the whole field.
    fn settle(&mut self, _parts: &mut [P]) -> Result<()> {
        Ok(())
    }
    /// Waits for the exchanges on the hook's own streams.
    fn synchronize(&mut self) -> Result<()> {
        Ok(())
    }
    /// For run summaries, after where the parts are: `exchange overlapped with ...`.
    fn describe(&self) -> String;
}
