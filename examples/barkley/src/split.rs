//! Barkley split into bands of rows (`--split P`, `--gpus N`) through the simulations library's
//! generic split ([`simulations::split`]): this file only says what Barkley's grid, fields and
//! stencil are, and how one part steps. A part is Barkley over a band-sized field, stepped by
//! [`GpuField::step`] or [`step_cpu`] (the same kernel and per-cell functions as a whole run,
//! so the same bits): no-flux edges, which at the grid's first and last rows are the real
//! boundary and at a cut edge spoil one row a step inside the halo.
//!
//! A GPU part keeps its band in the GPU's memory ([`GpuField`]) and offers it to the split
//! ([`split::Part::device_rows`]), so its halos are copied GPU to GPU; a CPU part's go
//! through the host. Under `mpirun` or `srun` (or `--transport nccl`) each process is one
//! part on its own GPU ([`connect`]), its halos sent by NCCL from that memory.

use std::sync::Arc;

use host_cli::cli::options::{RanksArgs, one_part_per_rank, rank_ordinal};
use ptxkit_host::Gpu;
use simulations::{
    split::decomposition::LaunchRank,
    split::nccl::Communicator,
    split::{self, BandedModel, DeviceRows, PartRows},
};

use crate::{Coefficients, Field, GpuField, Model, step_cpu};

/// Where a part runs: a GPU, or `None` for the CPU.
pub type Device = Option<Arc<Gpu>>;

/// Barkley's grid as the generic split sees it.
pub struct BarkleyBands {
    pub model: Model,
    pub width: u32,
    pub height: u32,
}

/// One band of Barkley's grid on a GPU or the CPU.
pub struct BarkleyPart {
    rows: PartFields,
    coefficients: Coefficients,
}

/// Where a part's fields are between its steps.
enum PartFields {
    /// In a GPU's memory, stepped there.
    Gpu { gpu: Arc<Gpu>, field: GpuField },
    /// On the host, stepped by the CPU.
    Cpu(Field),
}

impl BandedModel for BarkleyBands {
    type Device = Device;
    type Part = BarkleyPart;

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

    /// No-flux boundaries.
    fn periodic(&self) -> bool {
        false
    }

    fn part(
        &self,
        device: &Self::Device,
        rows: PartRows,
        start: Vec<Vec<f32>>,
    ) -> simulations::Result<BarkleyPart> {
        let [u, v]: [Vec<f32>; 2] = start.try_into().expect("the split gives each of Barkley's two fields");
        let field = Field { width: self.width, height: rows.len(), u, v };
        let rows = match device {
            Some(gpu) => PartFields::Gpu { gpu: gpu.clone(), field: GpuField::upload(gpu, &field)? },
            None => PartFields::Cpu(field),
        };
        Ok(BarkleyPart { rows, coefficients: self.model.coefficients() })
    }
}

impl split::Part for BarkleyPart {
    fn step(&mut self, steps: u32) -> simulations::Result<()> {
        match &mut self.rows {
            PartFields::Gpu { gpu, field } => field.step(gpu, &self.coefficients, steps)?,
            PartFields::Cpu(field) => step_cpu(field, &self.coefficients, steps),
        }
        Ok(())
    }

    fn rows(&mut self, index: usize, first: u32, count: u32) -> simulations::Result<Vec<f32>> {
        match &mut self.rows {
            PartFields::Gpu { gpu, field } => Ok(field.download(gpu, first, count, index)?),
            PartFields::Cpu(field) => {
                let width = field.width as usize;
                Ok(values(field, index)[first as usize * width..(first + count) as usize * width].to_vec())
            }
        }
    }

    fn set_rows(&mut self, index: usize, first: u32, rows: &[f32]) -> simulations::Result<()> {
        match &mut self.rows {
            PartFields::Gpu { gpu, field } => Ok(field.write(gpu, first, index, rows)?),
            PartFields::Cpu(field) => {
                let at = first as usize * field.width as usize;
                values(field, index)[at..at + rows.len()].copy_from_slice(rows);
                Ok(())
            }
        }
    }

    /// A GPU part's u and v: its halos are copied GPU to GPU.
    fn device_rows(&mut self, index: usize) -> Option<DeviceRows<'_>> {
        match &mut self.rows {
            PartFields::Gpu { gpu, field } => {
                Some(DeviceRows { values: &mut field.fields[index], stream: gpu.stream() })
            }
            PartFields::Cpu(_) => None,
        }
    }
}

/// Field `index` of [`BarkleyBands::fields`] of a CPU part.
fn values(field: &mut Field, index: usize) -> &mut Vec<f32> {
    match index {
        0 => &mut field.u,
        _ => &mut field.v,
    }
}

/// The devices of a split run from `--split` and `--gpus`: `None` for a run in one piece (neither
/// given); else the parts and the device of each GPU (`gpu`, the one the run opened, then the
/// next ones), or the CPU's where `gpu` is `None`. Refuses `--gpus` on the CPU, more GPUs
/// than the machine has, and fewer parts than GPUs.
pub fn devices(
    split: Option<u32>,
    gpus: Option<u32>,
    gpu: Option<Arc<Gpu>>,
) -> simulations::Result<Option<(u32, Vec<Device>)>> {
    let refuse = |why: String| Err(simulations::Error::InvalidInput(why));
    let Some(first) = gpu else {
        return match (split, gpus) {
            (_, Some(_)) => refuse(
                "--gpus spreads the parts over CUDA GPUs, but this run is on the CPU (--split alone splits it on \
                 the CPU)"
                    .into(),
            ),
            (Some(parts), None) => Ok(Some((parts, vec![None]))),
            (None, None) => Ok(None),
        };
    };
    if split.is_none() && gpus.is_none() {
        return Ok(None);
    }
    let gpus = gpus.unwrap_or(1);
    let parts = split.unwrap_or(gpus);
    if parts < gpus {
        return refuse(format!(
            "--split {parts} is fewer parts than --gpus {gpus}: each GPU needs at least one part"
        ));
    }
    let present = simulations::cuda::device_count()?;
    if gpus as usize > present {
        return refuse(format!(
            "--gpus {gpus}: this machine has {present} CUDA GPU{}",
            if present == 1 { "" } else { "s" }
        ));
    }
    let mut opened = vec![first.clone()];
    for ordinal in (0..present).filter(|&o| o != first.ordinal()).take(gpus as usize - 1) {
        opened.push(Gpu::open(ordinal, &crate::IMAGES)?);
    }
    Ok(Some((parts, opened.into_iter().map(Some).collect())))
}

/// This process's rank of an NCCL job (`job`: the launcher's, or none for one rank alone), one
/// part per process: the GPU its rank on this host takes, opened with Barkley's kernels, and
/// connected to the other ranks as `ranks` says. Refuses `--cpu` (NCCL moves GPU memory
/// only), `--split` or `--gpus` other than the number of processes, and a process without a
/// usable GPU.
pub fn connect(
    ranks: &RanksArgs,
    job: Option<LaunchRank>,
    cpu: bool,
    split: Option<u32>,
    gpus: Option<u32>,
) -> simulations::Result<Communicator> {
    if cpu {
        return Err(simulations::Error::SameOnEveryRank(
            "--cpu: a split over NCCL ranks (mpirun, srun, --transport nccl) runs one part per process on its GPU, \
             NCCL moving GPU memory only; leave out --cpu, or run one process (--split splits it on the CPU)"
                .into(),
        ));
    }
    one_part_per_rank(gpus, split, job)?;
    let ordinal = rank_ordinal(job, 0)?;
    let gpu = match Gpu::open(ordinal, &crate::IMAGES) {
        Ok(gpu) => gpu,
        Err(ptxkit_host::Error::NoGpu(why)) => {
            return Err(simulations::Error::InvalidInput(format!(
                "no usable CUDA GPU ({why}): a split over NCCL ranks runs one part per process on its GPU"
            )));
        }
        Err(e) => return Err(e.into()),
    };
    ranks.connect_on(gpu, job)
}
