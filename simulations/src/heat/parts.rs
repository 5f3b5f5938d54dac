//! Heat split into slabs along z (`--split P`, `--gpus N`, one slab per NCCL rank): a model
//! adaptor on the one split engine ([`crate::split::Split`]), in the shape of Barkley's. To the
//! split a "row" is an xy plane ([`HeatSlabs`]: one field, rows of `nx × ny` cells, a bounded
//! axis). Each part (`Slab`) is a CUDA engine of its own over its slab plus [`HALO`] planes
//! from each neighbour (none beyond the domain's own faces, `heat/slab.rs` says why four),
//! stepped one RK4 step per exchange.
//! Results are bit-identical to the run in one part.
//!
//! What this adaptor decides: the memory plan (every slab must fit the kernels' indexing, and
//! each GPU the slabs it holds), each slab's start (built slab by slab: a process holds only its
//! own), and `--overlap`, whose schemes are heat's overlap hook (`heat/overlap.rs`). `single`
//! writes a slab's own planes only (its halos come from the exchange); the other variants
//! step the whole slab, halos included.

use std::sync::Arc;

pub use super::overlap::{
    FREE_SMS_VAR, NCCL_FREE_SMS, OVERLAP_SCHEME_VAR, OverlapScheme, overlap_by_default,
};
pub use super::slab::HALO;
use super::{
    HeatEngine, HeatSetup, HeatVariant,
    cpu::CpuHeat,
    cuda::CudaHeat,
    overlap::HeatOverlap,
    slab::{Slab, SlabEngine},
};
use crate::{
    cuda::Gpu,
    error::{Error, Result, human_bytes},
    memory,
    split::{
        BandedModel, HaloPath, Layout, Overlap, OverlapPlan, PartRows, PeerCopy, Split, nccl::Communicator,
    },
};

/// Heat's box as the split sees it: its xy planes are the rows.
pub struct HeatSlabs {
    variant: HeatVariant,
    setup: HeatSetup,
    overlap: bool,
}

impl HeatSlabs {
    /// The cells of a plane.
    fn plane(&self) -> u32 {
        self.setup.n[0] * self.setup.n[1]
    }
}

impl BandedModel for HeatSlabs {
    /// A GPU, or `None` for the CPU.
    type Device = Option<Arc<Gpu>>;
    type Part = Slab;

    fn size(&self) -> (u32, u32) {
        (self.plane(), self.setup.n[2])
    }

    fn fields(&self) -> &[&str] {
        &["u"]
    }

    /// An RK4 step spoils one plane per stage.
    fn rows_per_step(&self) -> u32 {
        HALO
    }

    fn periodic(&self) -> bool {
        false
    }

    fn row_noun(&self) -> &'static str {
        "z planes"
    }

    /// One RK4 step per exchange.
    fn steps_per_exchange(&self, _thinnest: u32) -> u32 {
        1
    }

    /// Each slab must fit the kernels; each GPU the planes of every slab it holds, halos
    /// included (`gpu_bytes`). The CPU's slabs are checked as each is built.
    fn check_device(&self, gpu: &Option<Arc<Gpu>>, held: &[(usize, PartRows)], parts: usize) -> Result<()> {
        let Some(gpu) = gpu else { return Ok(()) };
        let [nx, ny, nz] = self.setup.n;
        for (p, rows) in held {
            let what = format!(
                "slab {} of {parts} (z {}..{}, halos included)",
                p + 1,
                rows.band.start,
                rows.band.end()
            );
            super::check_part(self.variant, [nx, ny, rows.len()], &what)?;
        }
        let planes: u32 = held.iter().map(|(_, rows)| rows.len()).sum();
        let need = gpu_bytes(self.variant, self.plane(), held);
        let (free, _) = gpu.memory()?;
        match memory::require(nx, ny * planes, need, free, "GPU") {
            Err(Error::TooBig { need, available, .. }) => Err(Error::InvalidInput(format!(
                "GPU {} would hold {} slab{} of this {nx}x{ny}x{nz} box, {planes} z planes with halos: {} needs {} of GPU \
                 memory there, but only {} is free; use more GPUs (--gpus, or processes under mpirun) or a smaller box",
                gpu.ordinal(),
                held.len(),
                if held.len() == 1 { "" } else { "s" },
                self.variant.name(),
                human_bytes(need),
                human_bytes(available),
            ))),
            _ => Ok(()),
        }
    }

    fn part(&self, gpu: &Option<Arc<Gpu>>, rows: PartRows, start: Vec<Vec<f32>>) -> Result<Slab> {
        let local = HeatSetup { n: [self.setup.n[0], self.setup.n[1], rows.len()], ..self.setup.clone() };
        let [start]: [Vec<f32>; 1] = start.try_into().expect("the split gives heat's one field");
        let engine = match gpu {
            Some(gpu) => SlabEngine::Gpu(CudaHeat::new(gpu.clone(), self.variant, &local, &start)?),
            None => SlabEngine::Cpu(CpuHeat::new(&local, start)),
        };
        Ok(Slab::new(rows, self.plane() as usize, self.variant, engine))
    }

    /// Beside a half that fills every SM, halos go by the copy engines, which take none (a
    /// reading kernel would wait for the half to end).
    fn overlap(&self) -> OverlapPlan {
        if self.overlap { OverlapPlan::Streams { peer_copy: PeerCopy::Engine } } else { OverlapPlan::None }
    }

    fn overlap_hook(
        &self,
        parts: &mut [Slab],
        streams: &[Arc<cudarc::driver::CudaStream>],
        path: HaloPath,
    ) -> Result<Box<dyn Overlap<Slab>>> {
        Ok(Box::new(HeatOverlap::new(parts, streams, path, self.setup.n[0], self.setup.n[1])?))
    }
}

/// The bytes of GPU memory the slabs `held` (each with its halos) take: the variant's bytes
/// a cell, and 64 MiB beside them.
fn gpu_bytes(variant: HeatVariant, plane: u32, held: &[(usize, PartRows)]) -> u64 {
    let planes: u64 = held.iter().map(|(_, rows)| u64::from(rows.len())).sum();
    variant.bytes_per_cell() * u64::from(plane) * planes + (64 << 20)
}

/// Heat in slabs along z, on GPUs of this process or one slab per process.
pub struct PartedHeat {
    split: Split<HeatSlabs>,
}

impl PartedHeat {
    /// Splits the box of `setup` into slabs as `layout` says, each starting from its share of
    /// [`super::initial_field`] (built slab by slab: a process holds only its own): GPU
    /// variants on GPUs, the CPU variant on the CPU. Refuses slabs thinner than the halo,
    /// slabs the kernels cannot index and GPUs without the memory for their slabs.
    /// `overlap`: see `heat/overlap.rs` (single only).
    pub fn new(layout: Layout, variant: HeatVariant, setup: &HeatSetup, overlap: bool) -> Result<Self> {
        if matches!(layout, Layout::Cpu { .. }) != (variant == HeatVariant::Cpu) {
            return Err(Error::InvalidInput(match variant {
                HeatVariant::Cpu => "--split and --gpus take a GPU variant, not cpu".into(),
                _ => format!("a split on the CPU takes the cpu variant, not {}", variant.name()),
            }));
        }
        if overlap && variant != HeatVariant::Single {
            return Err(Error::InvalidInput(format!(
                "--overlap writes a slab in halves, each half's edge exchanged while the other is written, which \
                 only the single variant does, not {}",
                variant.name()
            )));
        }
        let plane = u64::from(setup.n[0]) * u64::from(setup.n[1]);
        let start = |rows: &PartRows| {
            let (z0, z1) = (rows.band.start - rows.halo_before, rows.band.end() + rows.halo_after);
            memory::check_host_box([setup.n[0], setup.n[1], z1 - z0], 4 * plane * u64::from(z1 - z0))?;
            Ok(vec![super::initial_slab(setup, z0, z1)])
        };
        let model = HeatSlabs { variant, setup: setup.clone(), overlap };
        Ok(Self { split: Split::in_layout(model, layout, &start)? })
    }

    /// The split itself (the bench times its exchange and its computation apart).
    pub fn split(&mut self) -> &mut Split<HeatSlabs> {
        &mut self.split
    }

    /// Gives up the parts, keeping this rank's communicator (for another run on it).
    pub fn into_communicator(self) -> Option<Communicator> {
        self.split.into_communicator()
    }
}

impl HeatEngine for PartedHeat {
    fn step(&mut self, steps: u32) -> Result<()> {
        self.split.step(steps)
    }

    /// Every slab's, assembled in this process or gathered to rank 0.
    fn field(&mut self) -> Result<Vec<f32>> {
        self.split.field(0)
    }

    /// Plane `z`: on rank 0 from the rank whose slab holds it.
    fn slice(&mut self, z: u32) -> Result<Vec<f32>> {
        self.split.row(0, z)
    }

    fn set_field(&mut self, u: &[f32]) -> Result<()> {
        self.split.restore(&[u.to_vec()])
    }

    /// Waits for every slab's stream and the exchanges on their own streams.
    fn synchronize(&mut self) -> Result<()> {
        self.split.synchronize()
    }

    fn is_root(&self) -> bool {
        self.split.is_root()
    }

    fn describe(&self) -> String {
        let bands = self.split.bands();
        let variant = self.split.model().variant;
        let engine =
            if variant == HeatVariant::Cpu { "cpu".to_owned() } else { format!("cuda {}", variant.name()) };
        format!(
            "{engine} in {} z slabs of {}-{} planes (halo {HALO}) {}",
            bands.len(),
            bands.iter().map(|b| b.len).min().unwrap_or(0),
            bands.iter().map(|b| b.len).max().unwrap_or(0),
            self.split.describe_place(),
        )
    }
}

#[cfg(test)]
#[path = "parts_tests.rs"]
mod tests;
