//! Barkley split into bands of rows (`--split P`, `--gpus N`) through the simulations library's
//! generic split ([`simulations::banded`]): this file only says what Barkley's grid, fields and
//! stencil are, and how one part steps. A part is Barkley over a band-sized [`Field`], stepped
//! by [`step_gpu`] or [`step_cpu`] (the same kernel and per-cell functions as a whole run, so
//! the same bits): no-flux edges, which at the grid's first and last rows are the real
//! boundary and at a cut edge spoil one row a step inside the halo.
//!
//! The part keeps its band on the host between exchanges (a GPU part uploads it, runs its
//! steps and downloads it), as a whole run through the driver does every chunk; the halos go
//! through the host too.

use std::sync::Arc;

use ptxkit_host::Gpu;
use simulations::banded::{self, BandedModel, PartRows};

use crate::{Coefficients, Field, Model, step_cpu, step_gpu};

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
    field: Field,
    coefficients: Coefficients,
    gpu: Option<Arc<Gpu>>,
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
        Ok(BarkleyPart { field, coefficients: self.model.coefficients(), gpu: device.clone() })
    }
}

impl banded::Part for BarkleyPart {
    fn step(&mut self, steps: u32) -> simulations::Result<()> {
        match &self.gpu {
            Some(gpu) => step_gpu(gpu, &mut self.field, &self.coefficients, steps)?,
            None => step_cpu(&mut self.field, &self.coefficients, steps),
        }
        Ok(())
    }

    fn rows(&mut self, field: usize, first: u32, count: u32) -> simulations::Result<Vec<f32>> {
        let width = self.field.width as usize;
        Ok(self.values(field)[first as usize * width..(first + count) as usize * width].to_vec())
    }

    fn set_rows(&mut self, field: usize, first: u32, values: &[f32]) -> simulations::Result<()> {
        let at = first as usize * self.field.width as usize;
        self.values(field)[at..at + values.len()].copy_from_slice(values);
        Ok(())
    }
}

impl BarkleyPart {
    /// Field `index` of [`BarkleyBands::fields`].
    fn values(&mut self, index: usize) -> &mut Vec<f32> {
        match index {
            0 => &mut self.field.u,
            _ => &mut self.field.v,
        }
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
    let present = ptxkit_host::device_count()?;
    if gpus as usize > present {
        return refuse(format!(
            "--gpus {gpus}: this machine has {present} CUDA GPU{}",
            if present == 1 { "" } else { "s" }
        ));
    }
    let mut devices = vec![Some(first.clone())];
    for ordinal in (0..present).filter(|&o| o != first.ordinal()).take(gpus as usize - 1) {
        devices.push(Some(Gpu::open(ordinal, &crate::IMAGES)?));
    }
    Ok(Some((parts, devices)))
}
