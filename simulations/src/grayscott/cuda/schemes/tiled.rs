//! `tiled`: fused, through a shared-memory tile with a halo; one step per launch.

use super::{Launch, Scheme};
use crate::{error::Result, grayscott::cuda::launch_tiled};

/// The `tiled` variant.
pub(crate) struct Tiled;

impl Scheme for Tiled {
    fn ping_pongs(&self) -> bool {
        true
    }

    /// One step.
    fn enqueue(&self, launch: Launch<'_>, _steps: u32) -> Result<()> {
        let Launch { gpu, width, height, rates, u, v, other_u, other_v, .. } = launch;
        launch_tiled(gpu, u, v, other_u, other_v, width, height, rates)
    }
}
