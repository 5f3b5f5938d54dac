//! Gray-Scott split into bands of rows (`--split P`, `--gpus N`, one band per NCCL rank): a
//! model adaptor on the one split engine ([`crate::split::Split`]), in the shape of Barkley's.
//! This file says what Gray-Scott's grid is to a split ([`GrayScottBands`]): two fields on a
//! periodic plane, a 5-point stencil, a part (`Piece`) that is a CUDA engine of its own over
//! its band plus `halo` rows on each side, and the steps between exchanges, chosen per variant
//! ([`LaunchSettings::halo`]: the halo rows). The kernels are the unsplit run's, unchanged; the
//! results are bit-identical to it (see [`crate::split::decomposition`] for why).
//!
//! The split decides the rest: the bands, the transport (peer copies in one process, NCCL
//! between processes) and the step loop. Between processes the exchange can be overlapped
//! with computation (`--overlap`): each rank steps its band in the split's pieces
//! ([`crate::split::pieces`]); in one process it is not.

use std::sync::Arc;

pub use super::launch::{HALO_ROWS_VAR, LaunchSettings, MULTI_STEP_HALO, SINGLE_STEP_HALO, multi_step_halo};
use super::{
    Engine, Rates, Variant,
    cpu::CpuGrayScott,
    cuda::CudaGrayScott,
    piece::{Piece, PieceEngine},
};
use crate::{
    cuda::Gpu,
    error::{Error, Result},
    render::colormap,
    split::{
        self, BandedModel, Layout, OverlapPlan, PartRows, Split, decomposition::Band, nccl::Communicator,
    },
};

/// Gray-Scott's grid as the split sees it: the variant and launch settings every part steps
/// with.
pub struct GrayScottBands {
    variant: Variant,
    width: u32,
    height: u32,
    rates: Rates,
    settings: LaunchSettings,
}

impl BandedModel for GrayScottBands {
    /// A GPU, or `None` for the CPU.
    type Device = Option<Arc<Gpu>>;
    type Part = Piece;

    fn size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    fn fields(&self) -> &[&str] {
        &["u", "v"]
    }

    /// The 5-point Laplacian reaches one row.
    fn rows_per_step(&self) -> u32 {
        1
    }

    /// The plane wraps around.
    fn periodic(&self) -> bool {
        true
    }

    /// The variant's halo rows ([`LaunchSettings::halo`]), one row a step.
    fn steps_per_exchange(&self, thinnest: u32) -> u32 {
        self.settings.halo(self.variant, thinnest.min(self.height))
    }

    fn part(&self, gpu: &Option<Arc<Gpu>>, rows: PartRows, start: Vec<Vec<f32>>) -> Result<Piece> {
        let [u, v]: [Vec<f32>; 2] =
            start.try_into().expect("the split gives each of Gray-Scott's two fields");
        let (width, height) = (self.width, rows.len());
        let engine = match gpu {
            Some(gpu) => {
                let mut engine =
                    CudaGrayScott::new(gpu.clone(), self.variant, width, height, self.rates, &u, &v)?;
                engine.set_launch_settings(&self.settings);
                PieceEngine::Gpu(Box::new(engine))
            }
            None => PieceEngine::Cpu(CpuGrayScott::new(width, height, self.rates, u, v)),
        };
        Ok(Piece::new(width, engine))
    }

    /// `--overlap`: a rank's band in pieces, its edges first.
    fn overlap(&self) -> OverlapPlan {
        if self.settings.overlap { OverlapPlan::Pieces } else { OverlapPlan::None }
    }
}

/// Gray-Scott in bands of rows, on GPUs of this process or one band per process: the split,
/// and the frames taken from it.
pub struct PartedGrayScott {
    split: Split<GrayScottBands>,
    ready: Vec<Vec<u8>>,
}

impl PartedGrayScott {
    /// Splits the `width × height` fields `u`, `v` as `layout` says (every process passes
    /// the whole fields and keeps its band): GPU variants on GPUs, the CPU variant on the CPU.
    /// Refuses v0 (its state lives on the host) and parts thinner than their halo.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        layout: Layout,
        variant: Variant,
        width: u32,
        height: u32,
        rates: Rates,
        settings: LaunchSettings,
        u: &[f32],
        v: &[f32],
    ) -> Result<Self> {
        let fits =
            if matches!(layout, Layout::Cpu { .. }) { variant == Variant::Cpu } else { variant.splits() };
        if !fits {
            return Err(Error::InvalidInput(format!(
                "--split and --gpus take a GPU variant whose fields live on the GPU, not {}",
                variant.name()
            )));
        }
        // One NCCL rank is its own neighbour: its band must hold the rows its halos take.
        let halo = settings.halo(variant, height);
        if matches!(&layout, Layout::Ranks(comm) if comm.size() == 1) && height < halo {
            return Err(Error::InvalidInput(format!(
                "the grid's {height} rows are fewer than the {halo}-row halo {} exchanges through NCCL; use a \
                 taller grid or --variant fused (a 1-row halo)",
                variant.name()
            )));
        }
        let model = GrayScottBands { variant, width, height, rates, settings };
        let start =
            |rows: &PartRows| Ok([u, v].iter().map(|field| split::part::cut(field, width, rows)).collect());
        Ok(Self { split: Split::in_layout(model, layout, &start)?, ready: Vec::new() })
    }

    /// The split itself (the bench times its exchange and its computation apart).
    pub fn split(&mut self) -> &mut Split<GrayScottBands> {
        &mut self.split
    }

    /// Gives up the parts, keeping this rank's communicator (for another run on it).
    pub fn into_communicator(self) -> Option<Communicator> {
        self.split.into_communicator()
    }

    /// The halo depth in rows (the steps between exchanges).
    pub fn halo(&self) -> u32 {
        self.split.halo()
    }

    /// The bands, in order.
    pub fn bands(&self) -> Vec<Band> {
        self.split.bands()
    }
}

impl Engine for PartedGrayScott {
    fn step(&mut self, steps: u32) -> Result<()> {
        self.split.step(steps)
    }

    /// Frames are gathered to the host and coloured there (the same levels as the GPU's);
    /// NCCL ranks other than 0 only send their band.
    fn snapshot(&mut self) -> Result<()> {
        let (u, v) = self.fields()?;
        if !self.is_root() {
            return Ok(());
        }
        let mut levels = vec![0u8; u.len()];
        colormap::levels_cpu(&u, &v, &mut levels);
        self.ready.push(levels);
        Ok(())
    }

    fn collect(&mut self, _wait: bool) -> Result<Vec<Vec<u8>>> {
        Ok(std::mem::take(&mut self.ready))
    }

    /// Every band's, assembled in this process or gathered to rank 0.
    fn fields(&mut self) -> Result<(Vec<f32>, Vec<f32>)> {
        let [u, v]: [Vec<f32>; 2] = self.split.fields()?.try_into().expect("two fields");
        Ok((u, v))
    }

    fn set_fields(&mut self, u: &[f32], v: &[f32]) -> Result<()> {
        self.split.restore(&[u.to_vec(), v.to_vec()])
    }

    fn synchronize(&mut self) -> Result<()> {
        self.split.synchronize()
    }

    fn is_root(&self) -> bool {
        self.split.is_root()
    }

    fn set_rates(&mut self, rates: Rates) {
        for part in self.split.parts_mut() {
            part.engine().set_rates(rates);
        }
    }

    fn describe(&self) -> String {
        let bands = self.split.bands();
        let (thinnest, thickest) =
            (bands.iter().map(|b| b.len).min().unwrap_or(0), bands.iter().map(|b| b.len).max().unwrap_or(0));
        let variant = self.split.model().variant;
        let engine =
            if variant == Variant::Cpu { "cpu".to_owned() } else { format!("cuda {}", variant.name()) };
        format!(
            "{engine} in {} parts of {thinnest}-{thickest} rows (halo {}) {}",
            bands.len(),
            self.split.halo(),
            self.split.describe_place(),
        )
    }
}

#[cfg(test)]
#[path = "parts_tests.rs"]
mod tests;
