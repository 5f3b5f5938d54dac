//! A CUDA Gray-Scott built with its launch settings: tuned for its GPU and size, or given.
//! The only place outside the engine that sets them, so no caller reaches into the engine.

use super::{GrayScott, Setup, Variant, cuda, parts::LaunchSettings};
use crate::{Device, error::Result};

impl GrayScott {
    /// [`GrayScott::new`] with the launch settings of `fused`, `temporal` and `streaming`
    /// tuned for this GPU and grid (timed once per GPU and size, then cached), or their
    /// defaults without `autotune`.
    pub fn new_tuned(setup: &Setup, device: &Device, variant: Variant, autotune: bool) -> Result<Self> {
        let mut sim = Self::new(setup, device, variant)?;
        let Device::Cuda(gpu) = device else { return Ok(sim) };
        let (width, height) = (setup.width, setup.height);
        let Some(engine) = sim.cuda_engine() else { return Ok(sim) };
        match variant {
            Variant::Fused => engine.set_fused_shape(cuda::fused_shape_for(gpu, width, height, autotune)?.0),
            Variant::Temporal => {
                engine.set_temporal_steps(cuda::temporal_steps_for(gpu, width, height, autotune)?.0)
            }
            Variant::Streaming => {
                engine.set_stream_shape(cuda::streaming_shape_for(gpu, width, height, autotune)?.0)
            }
            _ => {}
        }
        Ok(sim)
    }

    /// [`GrayScott::new`] with `settings` (as a split run's parts would take them).
    pub fn with_settings(
        setup: &Setup,
        device: &Device,
        variant: Variant,
        settings: &LaunchSettings,
    ) -> Result<Self> {
        let mut sim = Self::new(setup, device, variant)?;
        if let Some(engine) = sim.cuda_engine() {
            engine.set_fused_shape(settings.fused);
            engine.set_temporal_steps(settings.temporal_steps);
            engine.set_stream_shape(settings.stream);
        }
        Ok(sim)
    }
}
