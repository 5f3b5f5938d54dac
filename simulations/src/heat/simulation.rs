//! A running heat simulation ([`Heat`]): built on one device or split into slabs, stepped,
//! read, exported, checkpointed and restored.

use std::path::{Path, PathBuf};

use super::{HeatEngine, HeatSetup, HeatVariant, check_part, cpu, cuda, initial_field, parts};
use crate::{
    Device,
    checkpoint::{self, Checkpoint, Simulation},
    error::{Error, Result},
    memory,
};

/// A running heat simulation.
pub struct Heat {
    engine: Box<dyn HeatEngine>,
    pub(super) setup: HeatSetup,
    steps_done: u64,
    /// The frames' colour range ([`initial_range`](super::initial_range): it builds the whole
    /// initial field, so it is computed once, at the first frame).
    pub(super) frame_range: Option<(f32, f32)>,
}

impl Heat {
    /// Checks the setup, refuses a grid that does not fit in the device's memory (saying how
    /// much it needs and how much is free), and uploads the initial field.
    pub fn new(setup: &HeatSetup, device: &Device, variant: HeatVariant) -> Result<Self> {
        setup.validate()?;
        check_part(variant, setup.n, "the box")?;
        let cells = setup.cells() as u64;
        let engine: Box<dyn HeatEngine> = match (device, variant) {
            (Device::Cpu, v) if v != HeatVariant::Cpu => {
                return Err(Error::InvalidInput(format!(
                    "the {} variant runs on a CUDA GPU, and this run is on the CPU",
                    v.name()
                )));
            }
            (Device::Cuda(gpu), v) if v != HeatVariant::Cpu => {
                memory::check_host_box(setup.n, 4 * cells)?;
                let (free, _) = gpu.memory()?;
                memory::require_box(setup.n, v.bytes_per_cell() * cells + (64 << 20), free, "GPU")?;
                Box::new(cuda::CudaHeat::new(gpu.clone(), v, setup, &initial_field(setup))?)
            }
            _ => {
                memory::check_host_box(setup.n, HeatVariant::Cpu.bytes_per_cell() * cells)?;
                Box::new(cpu::CpuHeat::new(setup, initial_field(setup)))
            }
        };
        Ok(Self { engine, setup: setup.clone(), steps_done: 0, frame_range: None })
    }

    /// A CUDA run split into `split` slabs along z over `gpus` (see [`parts`]); bit-identical
    /// to [`Heat::new`]'s run of the same variant.
    pub fn new_parted(
        setup: &HeatSetup,
        gpus: &[std::sync::Arc<crate::cuda::Gpu>],
        variant: HeatVariant,
        split: u32,
        overlap: bool,
    ) -> Result<Self> {
        Self::new_in(setup, crate::split::Layout::Local { gpus: gpus.to_vec(), split }, variant, overlap)
    }

    /// A CUDA run in the slabs of `layout` (in this process, or this process's slab of an
    /// NCCL job: every process builds the whole start and keeps its slab); bit-identical to
    /// [`Heat::new`]'s run of the same variant. `overlap`: write each slab in halves, in
    /// turns, each half's edge exchanged while the other is written (single only; [`parts`]).
    pub fn new_in(
        setup: &HeatSetup,
        layout: crate::split::Layout,
        variant: HeatVariant,
        overlap: bool,
    ) -> Result<Self> {
        setup.validate()?;
        let engine = parts::PartedHeat::new(layout, variant, setup, overlap)?;
        Ok(Self { engine: Box::new(engine), setup: setup.clone(), steps_done: 0, frame_range: None })
    }

    pub fn step(&mut self, steps: u32) -> Result<()> {
        self.engine.step(steps)?;
        self.steps_done += u64::from(steps);
        Ok(())
    }

    /// Where the current field is, for zero-copy access (valid until the next step; see
    /// [`crate::view`]). A run in parts refuses.
    pub fn views(&self) -> Result<Vec<crate::view::FieldView>> {
        self.engine.views()
    }

    pub fn field(&mut self) -> Result<Vec<f32>> {
        self.engine.field()
    }

    /// The middle z-slice.
    pub fn middle_slice(&mut self) -> Result<Vec<f32>> {
        self.engine.slice(self.setup.n[2] / 2)
    }

    pub fn synchronize(&mut self) -> Result<()> {
        self.engine.synchronize()
    }

    /// Simulated time so far.
    pub fn time(&self) -> f64 {
        self.steps_done as f64 * f64::from(self.setup.dt)
    }

    /// `u` as a named array of shape `[nz, ny, nx]` with the grid spacing, for `--save`.
    pub fn export_fields(&mut self) -> Result<crate::export::Fields> {
        use crate::export::{Array, Fields};
        let (n, spacing) = (self.setup.n, self.setup.h);
        let shape = [n[2], n[1], n[0]].map(u64::from);
        let u = self.field()?;
        // NCCL ranks other than 0 sent their slabs and hold no field: nothing to write.
        let arrays = if self.is_root() { vec![Array::new("u", &shape, u)] } else { Vec::new() };
        Ok(Fields { grid: n, spacing, arrays })
    }

    pub fn steps_done(&self) -> u64 {
        self.steps_done
    }

    pub fn setup(&self) -> &HeatSetup {
        &self.setup
    }

    /// The parameters a checkpoint must share with the run it resumes (the starting field
    /// and seed do not matter once the state is restored).
    fn checkpoint_params(&self) -> Vec<(String, String)> {
        let s = &self.setup;
        [("alpha", s.alpha), ("h", s.h), ("dt", s.dt), ("boundary", s.boundary)]
            .map(|(name, value)| checkpoint::param(name, value))
            .to_vec()
    }

    /// The whole state (u and the step count) as a checkpoint.
    pub fn checkpoint(&mut self) -> Result<Checkpoint> {
        let mut c =
            Checkpoint::new(Simulation::Heat, self.setup.n, self.steps_done, self.checkpoint_params());
        c.arrays = vec![("u".into(), self.field()?)];
        Ok(c)
    }

    /// Writes [`Heat::checkpoint`] to `path` (replacing the file there only once the new one
    /// is complete).
    pub fn save_checkpoint(&mut self, path: &Path) -> Result<PathBuf> {
        self.checkpoint()?.write(path)
    }

    /// Continues from `checkpoint`: refuses one of another simulation, grid or parameter
    /// set, else replaces the field and the step count (and so the simulated time).
    pub fn restore(&mut self, mut checkpoint: Checkpoint) -> Result<()> {
        checkpoint.check(Simulation::Heat, self.setup.n, &self.checkpoint_params())?;
        let u = checkpoint.take_array("u", self.setup.cells())?;
        self.engine.set_field(&u)?;
        self.steps_done = checkpoint.steps;
        Ok(())
    }

    /// Reads the checkpoint at `path` and [`restore`](Heat::restore)s it.
    pub fn resume_from(&mut self, path: &Path) -> Result<()> {
        self.restore(Checkpoint::read(path)?)
    }

    pub fn describe(&self) -> String {
        self.engine.describe()
    }

    /// Whether this process writes the outputs (false on NCCL ranks other than 0).
    pub fn is_root(&self) -> bool {
        self.engine.is_root()
    }
}
