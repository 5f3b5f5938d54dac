//! A CUDA Gray-Scott built with its launch settings: tuned for its GPU and size, or given.
//! The only place outside the engine that sets them, so no caller reaches into the engine.

use super::{GrayScott, Setup, Variant, cuda::schemes::TuneTarget, parts::LaunchSettings};
use crate::{Device, error::Result};

impl GrayScott {
    /// [`GrayScott::new`] with the variant's launch setting (`fused`, `temporal` and
    /// `streaming` have one) tuned for this GPU and grid (timed once per GPU and size, then
    /// cached), or its default without `autotune`.
    pub fn new_tuned(setup: &Setup, device: &Device, variant: Variant, autotune: bool) -> Result<Self> {
        let mut sim = Self::new(setup, device, variant)?;
        let (Device::Cuda(gpu), Some(scheme)) = (device, variant.scheme()) else { return Ok(sim) };
        let mut settings = LaunchSettings::default();
        scheme
            .tune(&TuneTarget { gpu, width: setup.width, height: setup.height, autotune }, &mut settings)?;
        if let Some(engine) = sim.cuda_engine() {
            engine.set_launch_settings(&settings);
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
            engine.set_launch_settings(settings);
        }
        Ok(sim)
    }
}
