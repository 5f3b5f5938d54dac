//! The [`Engine`] trait: what a backend (the CPU, the CUDA engine, a run in parts) provides to
//! the simulation.

use super::{Rates, cuda};
use crate::error::Result;

/// What a backend provides. A new GPU variant is not a new engine but a new scheme of the
/// CUDA one (`cuda/schemes/`, registered in `Variant::scheme`).
pub trait Engine {
    /// Advances the simulation by `steps` steps (possibly asynchronously).
    fn step(&mut self, steps: u32) -> Result<()>;
    /// Takes a frame of the current state (palette levels); it becomes available, in order,
    /// from [`Engine::collect`].
    fn snapshot(&mut self) -> Result<()>;
    /// The frames finished so far, oldest first; with `wait`, every frame taken.
    fn collect(&mut self, wait: bool) -> Result<Vec<Vec<u8>>>;
    /// Copies the current U and V fields out.
    fn fields(&mut self) -> Result<(Vec<f32>, Vec<f32>)>;
    /// Where the current U and V are, for zero-copy access ([`crate::view`]); a run in parts
    /// refuses.
    fn views(&self) -> Result<Vec<crate::view::FieldView>> {
        Err(crate::view::not_in_one_piece("gray-scott"))
    }
    /// Replaces the current U and V fields (restoring a checkpoint).
    fn set_fields(&mut self, u: &[f32], v: &[f32]) -> Result<()>;
    /// Replaces the rates the next steps use (checked by
    /// [`GrayScott::set_rates`](super::GrayScott::set_rates)).
    fn set_rates(&mut self, rates: Rates);
    /// Waits for queued work.
    fn synchronize(&mut self) -> Result<()> {
        Ok(())
    }
    /// "cpu (2 threads)", "cuda fused (NVIDIA H200)", ...
    fn describe(&self) -> String;
    /// Whether this process writes the outputs: false on NCCL ranks other than 0, which
    /// take part in every gather but get empty fields and frames.
    fn is_root(&self) -> bool {
        true
    }
    /// The CUDA engine behind this trait object, if it is one.
    fn as_cuda(&mut self) -> Option<&mut cuda::CudaGrayScott> {
        None
    }
}
