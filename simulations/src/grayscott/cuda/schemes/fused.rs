//! `fused`: Laplacian and update in one kernel, one step per launch (16 B/cell/step); its
//! launch shape is tuned.

use super::{Launch, Scheme, TuneTarget, Tuned};
use crate::{
    error::Result,
    grayscott::{
        cuda::{fused_shape_for, launch_fused},
        parts::LaunchSettings,
    },
};

/// The `fused` variant.
pub(crate) struct Fused;

impl Scheme for Fused {
    fn ping_pongs(&self) -> bool {
        true
    }

    /// One step with [`LaunchSettings::fused`].
    fn enqueue(&self, launch: Launch<'_>, _steps: u32) -> Result<()> {
        let Launch { gpu, width, height, rates, settings, u, v, other_u, other_v, .. } = launch;
        launch_fused(gpu, u, v, other_u, other_v, width, height, rates, settings.fused)
    }

    /// [`LaunchSettings::fused`], from [`fused_shape_for`].
    fn tune(&self, target: &TuneTarget<'_>, settings: &mut LaunchSettings) -> Result<Option<Tuned>> {
        let (shape, source) = fused_shape_for(target.gpu, target.width, target.height, target.autotune)?;
        settings.fused = shape;
        Ok(Some(Tuned { setting: shape.to_string(), source }))
    }
}
