//! `temporal`: temporal blocking, [`LaunchSettings::temporal_steps`] (tuned, 1 to 8) steps per
//! launch on tiles held in registers.

use kernels::grayscott::TEMPORAL_MAX_STEPS;

use super::{Launch, Scheme, TuneTarget, Tuned};
use crate::{
    error::Result,
    grayscott::{
        cuda::{launch_temporal, temporal_steps_for},
        parts::LaunchSettings,
    },
};

/// The `temporal` variant.
pub(crate) struct Temporal;

impl Scheme for Temporal {
    fn steps_per_launch(&self, settings: &LaunchSettings) -> u32 {
        settings.temporal_steps
    }

    fn max_steps_per_launch(&self) -> u32 {
        TEMPORAL_MAX_STEPS
    }

    fn ping_pongs(&self) -> bool {
        true
    }

    /// `steps` steps (1 to 8).
    fn enqueue(&self, launch: Launch<'_>, steps: u32) -> Result<()> {
        let Launch { gpu, width, height, rates, u, v, other_u, other_v, .. } = launch;
        launch_temporal(gpu, u, v, other_u, other_v, width, height, rates, steps)
    }

    /// [`LaunchSettings::temporal_steps`], from [`temporal_steps_for`].
    fn tune(&self, target: &TuneTarget<'_>, settings: &mut LaunchSettings) -> Result<Option<Tuned>> {
        let (steps, source) = temporal_steps_for(target.gpu, target.width, target.height, target.autotune)?;
        settings.temporal_steps = steps;
        Ok(Some(Tuned { setting: format!("{steps} steps per launch"), source }))
    }
}
