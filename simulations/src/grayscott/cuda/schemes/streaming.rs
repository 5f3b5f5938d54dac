//! `streaming`: temporal blocking by 2.5-D streaming, [`LaunchSettings::stream`]'s steps
//! (tuned, 1 to 8) per launch.

use kernels::grayscott::STREAM_MAX_STEPS;

use super::{Launch, Scheme, TuneTarget, Tuned};
use crate::{
    error::Result,
    grayscott::{
        cuda::{launch_streaming, streaming_cells_fit, streaming_shape_for},
        parts::LaunchSettings,
    },
};

/// The `streaming` variant.
pub(crate) struct Streaming;

impl Scheme for Streaming {
    fn steps_per_launch(&self, settings: &LaunchSettings) -> u32 {
        settings.stream.steps
    }

    fn max_steps_per_launch(&self) -> u32 {
        STREAM_MAX_STEPS
    }

    fn ping_pongs(&self) -> bool {
        true
    }

    /// `steps` steps with the rest of [`LaunchSettings::stream`].
    fn enqueue(&self, launch: Launch<'_>, steps: u32) -> Result<()> {
        let Launch { gpu, width, height, rates, settings, u, v, other_u, other_v, .. } = launch;
        launch_streaming(gpu, u, v, other_u, other_v, width, height, rates, settings.stream, steps)
    }

    /// [`LaunchSettings::stream`], from [`streaming_shape_for`]; a grid or part too large for
    /// the kernels' 32-bit offsets is refused here, before tuning allocates for it.
    fn tune(&self, target: &TuneTarget<'_>, settings: &mut LaunchSettings) -> Result<Option<Tuned>> {
        streaming_cells_fit(target.width, target.height)?;
        let (shape, source) = streaming_shape_for(target.gpu, target.width, target.height, target.autotune)?;
        settings.stream = shape;
        Ok(Some(Tuned { setting: shape.to_string(), source }))
    }
}
