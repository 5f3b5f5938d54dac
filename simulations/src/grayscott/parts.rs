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
use super::{Engine, Rates, Variant, cpu::CpuGrayScott, cuda::CudaGrayScott};
use crate::{
    cuda::Gpu,
    error::{Error, Result},
    render::colormap,
    split::{
        self, BandedModel, DeviceRows, Layout, OverlapPlan, PartRows, Split, decomposition::Band,
        nccl::Communicator,
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
        let engine: Box<dyn Engine> = match gpu {
            Some(gpu) => {
                let mut engine =
                    CudaGrayScott::new(gpu.clone(), self.variant, width, height, self.rates, &u, &v)?;
                engine.set_launch_settings(&self.settings);
                Box::new(engine)
            }
            None => Box::new(CpuGrayScott::new(width, height, self.rates, u, v)),
        };
        Ok(Piece { width, gpu: gpu.clone(), engine })
    }

    /// `--overlap`: a rank's band in pieces, its edges first.
    fn overlap(&self) -> OverlapPlan {
        if self.settings.overlap { OverlapPlan::Pieces } else { OverlapPlan::None }
    }
}

/// One band (or, for an NCCL rank with `--overlap`, one piece of its band) and the engine that
/// steps it with its halo rows, on a GPU or the CPU: a part of the split.
pub struct Piece {
    width: u32,
    gpu: Option<Arc<Gpu>>,
    engine: Box<dyn Engine>,
}

impl split::Part for Piece {
    fn step(&mut self, steps: u32) -> Result<()> {
        self.engine.step(steps)
    }

    fn rows(&mut self, field: usize, first: u32, count: u32) -> Result<Vec<f32>> {
        Ok(self.rows_of(&[field], first, count)?.pop().expect("one field"))
    }

    /// U and V come down together.
    fn rows_of(&mut self, fields: &[usize], first: u32, count: u32) -> Result<Vec<Vec<f32>>> {
        let (u, v) = self.engine.fields()?;
        let at = first as usize * self.width as usize..(first + count) as usize * self.width as usize;
        Ok(fields.iter().map(|&f| if f == 0 { &u } else { &v }[at.clone()].to_vec()).collect())
    }

    fn set_rows(&mut self, field: usize, first: u32, values: &[f32]) -> Result<()> {
        let (mut u, mut v) = self.engine.fields()?;
        let at = first as usize * self.width as usize;
        let target = if field == 0 { &mut u } else { &mut v };
        target[at..at + values.len()].copy_from_slice(values);
        self.engine.set_fields(&u, &v)
    }

    /// U and V go up together.
    fn set_all(&mut self, values: &[Vec<f32>]) -> Result<()> {
        self.engine.set_fields(&values[0], &values[1])
    }

    fn synchronize(&mut self) -> Result<()> {
        self.engine.synchronize()
    }

    /// A GPU piece's u and v: its halos are copied GPU to GPU.
    fn device_rows(&mut self, field: usize) -> Option<DeviceRows<'_>> {
        self.engine.as_cuda().map(|engine| engine.device_rows(field))
    }

    fn gpu(&self) -> Option<&Arc<Gpu>> {
        self.gpu.as_ref()
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
            part.engine.set_rates(rates);
        }
    }

    fn describe(&self) -> String {
        let bands = self.split.bands();
        let (thinnest, thickest) =
            (bands.iter().map(|b| b.len).min().unwrap_or(0), bands.iter().map(|b| b.len).max().unwrap_or(0));
        let model = self.split.model();
        format!(
            "cuda {} in {} parts of {thinnest}-{thickest} rows (halo {}) {}",
            model.variant.name(),
            bands.len(),
            self.split.halo(),
            self.split.describe_place(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bands(variant: Variant, height: u32) -> GrayScottBands {
        let rates = super::super::preset("coral").expect("a preset").rates();
        GrayScottBands { variant, width: 16, height, rates, settings: LaunchSettings::default() }
    }

    #[test]
    fn a_band_takes_the_variants_halo_from_both_neighbours_on_the_periodic_plane() {
        let plan = split::model::plan(&bands(Variant::Fused, 100), 4, false).unwrap();
        // One step per launch: SINGLE_STEP_HALO rows, as many steps between exchanges.
        assert_eq!((plan.halo, plan.steps_per_exchange), (SINGLE_STEP_HALO, SINGLE_STEP_HALO));
        assert!(
            plan.rows.iter().all(|r| (r.halo_before, r.halo_after) == (SINGLE_STEP_HALO, SINGLE_STEP_HALO))
        );
        // The first band's halo before is the plane's last rows.
        assert_eq!(plan.rows[0].grid_rows().next(), Some(100 - SINGLE_STEP_HALO));
        // Bands thinner than that halo get a halo of their rows: 20 rows in 6 bands of 3-4.
        let thin = split::model::plan(&bands(Variant::Fused, 20), 6, false).unwrap();
        assert_eq!((thin.halo, thin.steps_per_exchange), (3, 3));
        // The CPU's bands exchange as often.
        assert_eq!(split::model::plan(&bands(Variant::Cpu, 100), 4, false).unwrap().halo, SINGLE_STEP_HALO);
    }
}
