//! [`Scheme`]: what differs between the GPU variants, asked by the engine, the launch
//! settings, split runs and the bench instead of matching on [`Variant`](crate::grayscott::Variant).

use cudarc::driver::CudaSlice;
use kernels::grayscott::Rates;

use super::HostFields;
use crate::{
    cuda::Gpu,
    error::Result,
    grayscott::{cuda::BYTES_PER_CELL, parts::LaunchSettings},
};

/// What one launch works on: the GPU, the grid, the rates and settings, and the buffers.
pub(crate) struct Launch<'a> {
    pub gpu: &'a Gpu,
    pub width: u32,
    pub height: u32,
    pub rates: Rates,
    pub settings: &'a LaunchSettings,
    /// The current fields.
    pub u: &'a mut CudaSlice<f32>,
    pub v: &'a mut CudaSlice<f32>,
    /// The other pair: the next fields of a scheme that [`ping_pongs`](Scheme::ping_pongs),
    /// else scratch (the Laplacians of v0, v1 and v2).
    pub other_u: &'a mut CudaSlice<f32>,
    pub other_v: &'a mut CudaSlice<f32>,
    /// The fields on the host, for a scheme whose [`state_on_host`](Scheme::state_on_host).
    pub host: Option<&'a mut HostFields>,
}

/// Where a launch setting is tuned: a GPU, a grid, and whether to time candidates there
/// (else the default).
pub(crate) struct TuneTarget<'a> {
    pub gpu: &'a Gpu,
    pub width: u32,
    pub height: u32,
    pub autotune: bool,
}

/// A launch setting as the bench lists it, and where it came from (`tuned`, `cached` or
/// `default`).
pub(crate) struct Tuned {
    pub setting: String,
    pub source: &'static str,
}

/// A GPU variant: the one unit that knows how it steps. The defaults fit a variant of one
/// step per launch, without launch settings, whose state and frames stay on the GPU.
pub(crate) trait Scheme: Sync {
    /// Steps one launch advances with `settings`; at least 1 for the settings an engine holds
    /// (see `CudaGrayScott::set_launch_settings`). It also sets a split run's halo
    /// ([`LaunchSettings::halo`]).
    fn steps_per_launch(&self, _settings: &LaunchSettings) -> u32 {
        1
    }

    /// The most steps one launch advances with any setting: a split run's parts are tuned
    /// with the halo of this many ([`LaunchSettings::for_parts`]).
    fn max_steps_per_launch(&self) -> u32 {
        1
    }

    /// Whether a launch writes the next fields into the other pair, which then becomes the
    /// current one (else it updates the current fields in place).
    fn ping_pongs(&self) -> bool;

    /// Queues one launch of `steps` steps (1 to [`Scheme::steps_per_launch`]).
    fn enqueue(&self, launch: Launch<'_>, steps: u32) -> Result<()>;

    /// Writes its launch setting for `target` into `settings`: from the autotune cache, else
    /// tuned now and cached, or the default without autotuning. `None` for a variant without
    /// launch settings.
    fn tune(&self, _target: &TuneTarget<'_>, _settings: &mut LaunchSettings) -> Result<Option<Tuned>> {
        Ok(None)
    }

    /// Device bytes per cell.
    fn device_bytes_per_cell(&self) -> u64 {
        BYTES_PER_CELL
    }

    /// Whether the fields live on the host between steps (v0): no step graphs, frames
    /// coloured on the host, no split runs.
    fn state_on_host(&self) -> bool {
        false
    }

    /// Whether frames are gathered on the GPU and colour-mapped a batch per launch (v2).
    fn batched_frames(&self) -> bool {
        false
    }

    /// Whether `bench grayscott` times it without `--variants`.
    fn benched_by_default(&self) -> bool {
        true
    }
}
