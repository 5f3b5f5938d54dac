//! `v2`: v1's steps, with frames gathered on the GPU and colour-mapped a batch per launch.

use super::{Launch, Scheme, V1};
use crate::{error::Result, grayscott::cuda::V2_BATCH};

/// The `v2` variant.
pub(crate) struct V2;

impl Scheme for V2 {
    fn ping_pongs(&self) -> bool {
        V1.ping_pongs()
    }

    /// v1's step.
    fn enqueue(&self, launch: Launch<'_>, steps: u32) -> Result<()> {
        V1.enqueue(launch, steps)
    }

    /// U, V and two scratch fields (f32), and a batch of U and V copies and their frames (9
    /// bytes a cell each) instead of the frame slots.
    fn device_bytes_per_cell(&self) -> u64 {
        4 * 4 + 9 * V2_BATCH as u64
    }

    fn batched_frames(&self) -> bool {
        true
    }

    /// Its steps are v1's: the bench's frames-free runs would time v1 again.
    fn benched_by_default(&self) -> bool {
        false
    }
}
