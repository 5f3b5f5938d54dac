//! `v1`: a Laplacian kernel then an update kernel, all on the GPU (40 B/cell/step).

use super::{Launch, Scheme};
use crate::{
    error::Result,
    grayscott::cuda::{launch_laplacian, launch_update},
};

/// The `v1` variant.
pub(crate) struct V1;

impl Scheme for V1 {
    fn ping_pongs(&self) -> bool {
        false
    }

    /// One step: the Laplacians into the other pair, then the update in place.
    fn enqueue(&self, launch: Launch<'_>, _steps: u32) -> Result<()> {
        let Launch { gpu, width, height, rates, u, v, other_u, other_v, .. } = launch;
        launch_laplacian(gpu, u, v, other_u, other_v, width, height)?;
        launch_update(gpu, u, v, other_u, other_v, width, height, rates)
    }
}
