//! One slab of heat's split ([`Slab`]): its planes with their halos and the engine that steps
//! them, on a GPU or the CPU; a part of the split ([`crate::split::Part`]).
//!
//! Why four planes: the kernels hold a slab's outer planes fixed, as faces, and give every
//! stage 0 there. The four stages of an RK4 step each apply the Laplacian once (k1..k4 for
//! `naive`/`reuse`, the powers Lu..L⁴u of the Laplacian L for `fused`/`tiled`/`single`), so a wrong value at
//! the slab's edge reaches one plane further per stage: after one step the first four planes
//! are wrong and the fifth is right. Every variant needs the same four planes per side.

use std::sync::Arc;

use super::{HeatEngine, HeatVariant, cpu::CpuHeat, cuda::CudaHeat};
use crate::{
    cuda::Gpu,
    error::Result,
    split::{self, DeviceRows, PartRows},
};

/// Planes of halo per side per RK4 step: one per stage.
pub const HALO: u32 = 4;

/// One slab with its halos (none at the domain's faces) and the engine that steps it, on a
/// GPU or the CPU: a part of the split.
pub struct Slab {
    pub(super) rows: PartRows,
    /// The cells of a plane.
    plane: usize,
    variant: HeatVariant,
    engine: SlabEngine,
}

/// Where a slab steps.
pub(super) enum SlabEngine {
    Gpu(CudaHeat),
    Cpu(CpuHeat),
}

impl Slab {
    pub(super) fn new(rows: PartRows, plane: usize, variant: HeatVariant, engine: SlabEngine) -> Self {
        Self { rows, plane, variant, engine }
    }

    /// The slab's GPU engine: an overlap is built on GPU slabs only (its exchange streams
    /// are forked from theirs).
    pub(super) fn cuda(&mut self) -> &mut CudaHeat {
        match &mut self.engine {
            SlabEngine::Gpu(engine) => engine,
            SlabEngine::Cpu(_) => unreachable!("an overlap is built on GPU slabs only"),
        }
    }

    /// [`Slab::cuda`], to read.
    pub(super) fn cuda_ref(&self) -> &CudaHeat {
        match &self.engine {
            SlabEngine::Gpu(engine) => engine,
            SlabEngine::Cpu(_) => unreachable!("an overlap is built on GPU slabs only"),
        }
    }

    fn engine(&mut self) -> &mut dyn HeatEngine {
        match &mut self.engine {
            SlabEngine::Gpu(engine) => engine,
            SlabEngine::Cpu(engine) => engine,
        }
    }
}

impl split::Part for Slab {
    /// RK4 steps with no exchange: `single` writes the slab's own planes, the other variants
    /// the whole slab.
    fn step(&mut self, steps: u32) -> Result<()> {
        if self.variant != HeatVariant::Single {
            return self.engine().step(steps);
        }
        let own = self.rows.halo_before..self.rows.halo_before + self.rows.band.len;
        for _ in 0..steps {
            self.cuda().step_planes(own.clone())?;
            self.cuda().finish_planes();
        }
        Ok(())
    }

    /// One plane comes down alone.
    /// On the CPU, the planes themselves; from a GPU, one plane alone or the field.
    fn rows(&mut self, _field: usize, first: u32, count: u32) -> Result<Vec<f32>> {
        let at = first as usize * self.plane..(first + count) as usize * self.plane;
        if let SlabEngine::Cpu(engine) = &mut self.engine {
            return Ok(engine.values_mut()[at].to_vec());
        }
        if count == 1 {
            return self.engine().slice(first);
        }
        Ok(self.engine().field()?[at].to_vec())
    }

    /// On the CPU, in place (the host halos of an exchange); on a GPU, the field round trips.
    fn set_rows(&mut self, _field: usize, first: u32, values: &[f32]) -> Result<()> {
        let at = first as usize * self.plane..first as usize * self.plane + values.len();
        if let SlabEngine::Cpu(engine) = &mut self.engine {
            engine.values_mut()[at].copy_from_slice(values);
            return Ok(());
        }
        let mut u = self.engine().field()?;
        u[at].copy_from_slice(values);
        self.engine().set_field(&u)
    }

    fn set_all(&mut self, values: &[Vec<f32>]) -> Result<()> {
        self.engine().set_field(&values[0])
    }

    fn synchronize(&mut self) -> Result<()> {
        self.engine().synchronize()
    }

    fn device_rows(&mut self, _field: usize) -> Option<DeviceRows<'_>> {
        match &mut self.engine {
            SlabEngine::Gpu(engine) => Some(engine.device_rows()),
            SlabEngine::Cpu(_) => None,
        }
    }

    fn gpu(&self) -> Option<&Arc<Gpu>> {
        match &self.engine {
            SlabEngine::Gpu(engine) => Some(engine.gpu()),
            SlabEngine::Cpu(_) => None,
        }
    }
}
