//! What a Physarum backend provides ([`PhysarumEngine`]).

use super::{Agents, Params};
use crate::error::Result;

/// What a Physarum backend provides.
pub trait PhysarumEngine {
    /// Advances by `steps` steps.
    fn step(&mut self, steps: u32) -> Result<()>;
    /// The trail map.
    fn trail(&mut self) -> Result<Vec<f32>>;
    /// The agents, by id.
    fn agents(&mut self) -> Result<Agents>;
    /// Where the trail map is, for zero-copy access ([`crate::view`]).
    fn views(&self) -> Result<Vec<crate::view::FieldView>>;
    /// Replaces the agents, the trail and the step counter that seeds the per-step random
    /// numbers (restoring a checkpoint).
    fn set_state(&mut self, agents: &Agents, trail: &[f32], step: u32) -> Result<()>;
    /// Replaces the model parameters the next steps use (same grid; checked by
    /// [`Physarum::set_model`](super::Physarum::set_model)).
    fn set_params(&mut self, params: Params);
    /// Waits for queued work.
    fn synchronize(&mut self) -> Result<()> {
        Ok(())
    }
    fn describe(&self) -> String;
    /// The engine itself, for a caller that knows its kind (GPU-side comparisons downcast to
    /// [`super::cuda::CudaPhysarum`]).
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any;
}
