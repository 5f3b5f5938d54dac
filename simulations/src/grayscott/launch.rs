//! The launch settings of the GPU variants ([`LaunchSettings`]), with the halo of a split run
//! they make (the steps between its exchanges): tuned for a GPU and size, or given. A CUDA
//! Gray-Scott is built with them by [`super::GrayScott::new_tuned`] and
//! [`super::GrayScott::with_settings`].

use super::{
    Variant,
    cuda::{FusedShape, StreamShape, schemes::TuneTarget},
};
use crate::{cuda::Gpu, error::Result, split::Layout};

/// The launch settings of the GPU variants that have them, each read and tuned by its
/// variant's scheme alone (`cuda/schemes/`); every part of a split run runs with the same (tuned for a
/// part's size).
#[derive(Clone, Copy, Debug)]
pub struct LaunchSettings {
    /// `fused`'s launch shape.
    pub fused: FusedShape,
    /// `temporal`'s steps per launch (1 to 8).
    pub temporal_steps: u32,
    /// The `streaming` kernels' launch setting.
    pub stream: StreamShape,
    /// NCCL ranks: step the band's edges first and overlap the exchange with the middle.
    pub overlap: bool,
    /// The fewest rows of a multi-step halo ([`MULTI_STEP_HALO`], or [`HALO_ROWS_VAR`]):
    /// agreed with the other settings, since every rank's halos must be alike.
    pub halo_rows: u32,
}

impl Default for LaunchSettings {
    fn default() -> Self {
        Self {
            fused: FusedShape::default(),
            temporal_steps: kernels::grayscott::TEMPORAL_MAX_STEPS,
            stream: StreamShape::default(),
            overlap: false,
            halo_rows: min_multi_step_halo(),
        }
    }
}

impl LaunchSettings {
    /// Settings for the parts of `layout` of a `width × height` grid: [`Self::for_parts`] on
    /// this process's first GPU; rank 0's where the parts are processes (their halos must
    /// agree, and each rank's tuning may choose differently). `overlap` as
    /// [`LaunchSettings::overlap`]. Parts on the CPU take the defaults (only the halo counts).
    pub fn for_layout(
        layout: &Layout,
        variant: Variant,
        width: u32,
        height: u32,
        autotune: bool,
        overlap: bool,
    ) -> Result<Self> {
        let Some(gpu) = layout.first_gpu() else { return Ok(Self::default()) };
        let settings =
            Self { overlap, ..Self::for_parts(gpu, variant, width, height, layout.parts(), autotune)? };
        let mut words = settings.to_words();
        layout.agree(&mut words)?;
        Ok(Self::from_words(words))
    }

    fn to_words(self) -> [u32; 11] {
        let (f, s) = (self.fused, self.stream);
        [
            f.block.0,
            f.block.1,
            f.rows,
            f.columns,
            self.temporal_steps,
            s.steps,
            s.warps,
            s.chunk,
            s.cols,
            u32::from(self.overlap),
            self.halo_rows,
        ]
    }

    fn from_words(w: [u32; 11]) -> Self {
        Self {
            fused: FusedShape { block: (w[0], w[1]), rows: w[2], columns: w[3] },
            temporal_steps: w[4],
            stream: StreamShape { steps: w[5], warps: w[6], chunk: w[7], cols: w[8] },
            overlap: w[9] != 0,
            halo_rows: w[10],
        }
    }

    /// Settings for `split` bands of a `width × height` grid on `gpu`: the defaults, with
    /// `variant`'s own setting tuned (or taken from the cache, or the default without
    /// `autotune`) for one part with the largest halo its launches take, the size the parts
    /// really step.
    pub fn for_parts(
        gpu: &Gpu,
        variant: Variant,
        width: u32,
        height: u32,
        split: u32,
        autotune: bool,
    ) -> Result<Self> {
        let mut settings = Self::default();
        if let Some(scheme) = variant.scheme() {
            let part_rows = height.div_ceil(split.max(1));
            let rows = part_rows + 2 * settings.halo_depth(scheme.max_steps_per_launch());
            scheme.tune(&TuneTarget { gpu, width, height: rows, autotune }, &mut settings)?;
        }
        Ok(settings)
    }

    /// Rows of halo a part needs on each side, which are also the steps between exchanges:
    /// for the variants of several steps per launch, whole launches' steps up to
    /// [`LaunchSettings::halo_rows`] or more; for those of one step per launch,
    /// [`SINGLE_STEP_HALO`]. At most `rows` (the thinnest part's rows), but never under one
    /// launch's steps.
    pub fn halo(&self, variant: Variant, rows: u32) -> u32 {
        let steps = variant.scheme().map_or(1, |scheme| scheme.steps_per_launch(self)).max(1);
        self.halo_depth(steps).min(rows).max(steps)
    }

    /// The halo of a variant of `steps` steps per launch on parts of any size.
    fn halo_depth(&self, steps: u32) -> u32 {
        match steps {
            0 | 1 => SINGLE_STEP_HALO,
            steps => self.halo_rows.div_ceil(steps) * steps,
        }
    }
}

/// Halo rows of the variants that advance one step per launch (`fused`, `tiled`, `v1`, `v2`)
/// in a split run: with `h` rows a part steps `h` times between exchanges (each step spoils
/// one more row from each edge of its halos, never its band), so the exchange's fixed cost,
/// 8 copies or an NCCL group, is paid every `h` steps; the price is `2h` extra rows stepped,
/// 0.4% of a 4096-row band at 8.
pub const SINGLE_STEP_HALO: u32 = 8;

/// The fewest halo rows of the variants that advance several steps per launch (`temporal`,
/// `streaming`: T steps each) in a split run: their halo is the smallest whole number of
/// launches' steps that reaches it (28 rows at T = 7, 24 at T = 8), and lasts as many
/// launches, so the exchange's fixed cost is paid once per so many launches. Measured on 4
/// H200s, Gray-Scott 16384² `streaming` (T = 7), strong scaling on 4 GPUs: 1 launch per
/// exchange 89.2%, 2 launches 91.0% (one process); at least 16 rows (3 launches) 91.9% in one
/// process and over NCCL, 22 (4 launches) 92.2% and 92.2%, 36 (6 launches) 91.6% and 91.5%
/// (`scripts/gpu-check.sh multi-sweep`; docs/multi-gpu.md).
pub const MULTI_STEP_HALO: u32 = 22;

/// Sets the fewest rows of a multi-step halo instead of [`MULTI_STEP_HALO`] (1 to 256), to
/// measure other depths; every rank of a job must be given the same (`mpirun -x`).
pub const HALO_ROWS_VAR: &str = "RUST_GPU_SIM_HALO_ROWS";

/// The fewest rows of a multi-step halo: [`MULTI_STEP_HALO`], or [`HALO_ROWS_VAR`] where it
/// is set (a value outside 1 to 256 is refused with a warning and the default kept).
fn min_multi_step_halo() -> u32 {
    static ROWS: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *ROWS.get_or_init(|| {
        let Ok(text) = std::env::var(HALO_ROWS_VAR) else { return MULTI_STEP_HALO };
        match text.parse::<u32>() {
            Ok(rows @ 1..=256) => rows,
            _ => {
                crate::stderr_line!(
                    "warning: {HALO_ROWS_VAR}={text} is not 1 to 256 rows: halos of {MULTI_STEP_HALO} rows"
                );
                MULTI_STEP_HALO
            }
        }
    })
}

/// The halo of a variant of `steps` (2 or more) steps per launch with the default
/// [`LaunchSettings::halo_rows`]: the smallest multiple of `steps` that is
/// at least [`MULTI_STEP_HALO`] (or [`HALO_ROWS_VAR`]).
pub fn multi_step_halo(steps: u32) -> u32 {
    let steps = steps.max(1);
    min_multi_step_halo().div_ceil(steps) * steps
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whole launches, at least MULTI_STEP_HALO rows, and no more launches than needed.
    #[test]
    fn multi_step_halos_are_whole_launches_of_at_least_the_fewest_rows() {
        for (steps, halo) in [(1, 22), (3, 24), (5, 25), (7, 28), (8, 24), (0, 22)] {
            assert_eq!(multi_step_halo(steps), halo, "{steps} steps per launch");
        }
        for steps in 1..=8 {
            let halo = multi_step_halo(steps);
            assert!(halo.is_multiple_of(steps) && halo >= MULTI_STEP_HALO && halo - steps < MULTI_STEP_HALO);
        }
    }
}
