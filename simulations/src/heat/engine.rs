//! What a heat backend provides ([`HeatEngine`]).

use crate::error::Result;

/// What a heat backend provides.
pub trait HeatEngine {
    /// Advances by `steps` RK4 steps.
    fn step(&mut self, steps: u32) -> Result<()>;
    /// The whole field.
    fn field(&mut self) -> Result<Vec<f32>>;
    /// The xy plane at height `z`.
    fn slice(&mut self, z: u32) -> Result<Vec<f32>>;
    /// Where the field is, for zero-copy access ([`crate::view`]); a run in parts refuses.
    fn views(&self) -> Result<Vec<crate::view::FieldView>> {
        Err(crate::view::not_in_one_piece("heat"))
    }
    /// Replaces the whole field (restoring a checkpoint).
    fn set_field(&mut self, u: &[f32]) -> Result<()>;
    /// Waits for queued work.
    fn synchronize(&mut self) -> Result<()> {
        Ok(())
    }
    fn describe(&self) -> String;
    /// Whether this process writes the outputs: false on NCCL ranks other than 0, which
    /// take part in every gather but get an empty field.
    fn is_root(&self) -> bool {
        true
    }
}
