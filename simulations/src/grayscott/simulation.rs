//! The [`GrayScott`] simulation value that the CLI, tests and examples drive: building it on
//! a device, stepping, frames, fields, the brush, live rate changes and checkpoints.

use std::path::{Path, PathBuf};

use super::{
    Engine, Rates, Setup, Variant, cpu, cuda, cuda::schemes::TuneTarget, disc_cells, init, initial_fields,
    parts, parts::LaunchSettings,
};
use crate::{
    Device,
    checkpoint::{self, Checkpoint, Simulation},
    error::{Error, Result},
    memory,
};

/// A running Gray-Scott simulation on some backend.
pub struct GrayScott {
    engine: Box<dyn Engine>,
    pub(super) width: u32,
    pub(super) height: u32,
    rates: Rates,
    steps_done: u64,
}

/// The start (u, v) of a split run, built in a thread of its own while the caller opens its
/// GPUs and connects its ranks (1.1-1.3 s of a 16384² plane, about what opening 4 GPUs and
/// NCCL take): [`StartFields::begin`], then [`GrayScott::new_in`].
pub struct StartFields(std::thread::JoinHandle<Result<(Vec<f32>, Vec<f32>)>>);

impl StartFields {
    /// Checks the setup and the host memory of the start, then starts building it.
    pub fn begin(setup: &Setup) -> Result<Self> {
        setup.validate()?;
        memory::check_host(setup.width, setup.height, 9 * setup.cells() as u64)?;
        let setup = setup.clone();
        let build = move || {
            let fields = match &setup.init_image {
                Some(path) => init::fields_from_image(path, setup.width, setup.height)?,
                None => initial_fields(setup.init, setup.width, setup.height, setup.seed),
            };
            crate::timeline::mark("initial fields built");
            Ok(fields)
        };
        let thread = memory::spawn(std::thread::Builder::new().name("initial-fields".into()), build);
        thread.map(Self).map_err(|e| {
            Error::InvalidInput(format!("cannot start a thread: {}", memory::thread_start_failure(&e)))
        })
    }

    /// The fields, once built.
    fn wait(self) -> Result<(Vec<f32>, Vec<f32>)> {
        self.0
            .join()
            .unwrap_or_else(|_| Err(Error::InvalidInput("building the initial fields failed".into())))
    }
}

impl GrayScott {
    /// [`GrayScott::new`] with the variant's launch setting (`fused`, `temporal` and
    /// `streaming` have one) tuned for this GPU and grid (timed once per GPU and size, then
    /// cached), or its default without `autotune`.
    pub fn new_tuned(setup: &Setup, device: &Device, variant: Variant, autotune: bool) -> Result<Self> {
        let mut sim = Self::new(setup, device, variant)?;
        let (Device::Cuda(gpu), Some(scheme)) = (device, variant.scheme()) else { return Ok(sim) };
        let mut settings = LaunchSettings::default();
        scheme
            .tune(&TuneTarget { gpu, width: setup.width, height: setup.height, autotune }, &mut settings)?;
        if let Some(engine) = sim.cuda_engine() {
            engine.set_launch_settings(&settings);
        }
        Ok(sim)
    }

    /// [`GrayScott::new`] with `settings` (as a split run's parts would take them).
    pub fn with_settings(
        setup: &Setup,
        device: &Device,
        variant: Variant,
        settings: &LaunchSettings,
    ) -> Result<Self> {
        let mut sim = Self::new(setup, device, variant)?;
        if let Some(engine) = sim.cuda_engine() {
            engine.set_launch_settings(settings);
        }
        Ok(sim)
    }

    /// Builds the initial state and uploads it to `device`, stepping with `variant`. Checks
    /// the setup first, and refuses a grid that would not fit in the device's memory, or a GPU
    /// variant on the CPU.
    pub fn new(setup: &Setup, device: &Device, variant: Variant) -> Result<Self> {
        setup.validate()?;
        if variant.is_gpu() && matches!(device, Device::Cpu) {
            return Err(Error::InvalidInput(format!(
                "the {} variant runs on a CUDA GPU, and this run is on the CPU",
                variant.name()
            )));
        }
        let cells = setup.cells() as u64;
        match device {
            Device::Cuda(_) if variant.is_gpu() => {
                // The initial fields are built on the host, then uploaded (v0 keeps four).
                let host_bytes = if variant.state_on_host() { 17 } else { 9 };
                // (The GPU memory is checked once, by `CudaGrayScott::new`.)
                memory::check_host(setup.width, setup.height, host_bytes * cells)?;
            }
            _ => memory::check_host(setup.width, setup.height, cpu::BYTES_PER_CELL * cells)?,
        }
        let (u, v) = match &setup.init_image {
            Some(path) => init::fields_from_image(path, setup.width, setup.height)?,
            None => initial_fields(setup.init, setup.width, setup.height, setup.seed),
        };
        let engine: Box<dyn Engine> = match device {
            Device::Cuda(gpu) if variant.is_gpu() => Box::new(cuda::CudaGrayScott::new(
                gpu.clone(),
                variant,
                setup.width,
                setup.height,
                setup.rates,
                &u,
                &v,
            )?),
            _ => Box::new(cpu::CpuGrayScott::new(setup.width, setup.height, setup.rates, u, v)),
        };
        Ok(Self { engine, width: setup.width, height: setup.height, rates: setup.rates, steps_done: 0 })
    }

    /// A CUDA run split into `split` bands of rows over `gpus` (see [`parts`]), each part
    /// stepped with `settings`. Bit-identical to [`GrayScott::new`]'s run.
    pub fn new_parted(
        setup: &Setup,
        gpus: &[std::sync::Arc<crate::cuda::Gpu>],
        variant: Variant,
        split: u32,
        settings: parts::LaunchSettings,
    ) -> Result<Self> {
        let layout = crate::split::Layout::Local { gpus: gpus.to_vec(), split };
        Self::new_in(setup, layout, variant, StartFields::begin(setup)?, |_| Ok(settings))
    }

    /// A CUDA run in the parts of `layout` (in this process, or this process's part of an
    /// NCCL job: every process builds the whole start and keeps its band) from `start` (see
    /// [`StartFields`]), each part stepped with the launch settings `settings` gives for the
    /// layout (called once the start is built: with NCCL ranks it agrees with the others).
    /// Bit-identical to [`GrayScott::new`]'s run.
    pub fn new_in(
        setup: &Setup,
        layout: crate::split::Layout,
        variant: Variant,
        start: StartFields,
        settings: impl FnOnce(&crate::split::Layout) -> Result<parts::LaunchSettings>,
    ) -> Result<Self> {
        let (u, v) = start.wait()?;
        let settings = settings(&layout)?;
        let engine = parts::PartedGrayScott::new(
            layout,
            variant,
            setup.width,
            setup.height,
            setup.rates,
            settings,
            &u,
            &v,
        )?;
        Ok(Self {
            engine: Box::new(engine),
            width: setup.width,
            height: setup.height,
            rates: setup.rates,
            steps_done: 0,
        })
    }

    /// Advances by `steps` steps.
    pub fn step(&mut self, steps: u32) -> Result<()> {
        self.engine.step(steps)?;
        self.steps_done += u64::from(steps);
        Ok(())
    }

    /// Takes a frame of the current state; see [`GrayScott::collect`].
    pub fn snapshot(&mut self) -> Result<()> {
        self.engine.snapshot()
    }

    /// Frames (palette levels, one byte per cell, row-major) finished so far, oldest first;
    /// with `wait`, all frames taken.
    pub fn collect(&mut self, wait: bool) -> Result<Vec<Vec<u8>>> {
        self.engine.collect(wait)
    }

    /// The current state as a frame, now (earlier frames not yet collected are dropped).
    pub fn levels(&mut self, out: &mut [u8]) -> Result<()> {
        assert_eq!(out.len(), self.width as usize * self.height as usize, "levels buffer size");
        self.engine.snapshot()?;
        let frame = self.engine.collect(true)?.pop().expect("the frame just taken");
        out.copy_from_slice(&frame);
        Ok(())
    }

    /// Waits for all queued work (for timing).
    pub fn synchronize(&mut self) -> Result<()> {
        self.engine.synchronize()
    }

    /// Changes the rates from the next step on (a live parameter change); the state and the
    /// step count stay. Refuses rates that [`Setup::validate`] refuses.
    pub fn set_rates(&mut self, rates: Rates) -> Result<()> {
        Setup::new(self.width, self.height, rates).validate()?;
        self.engine.set_rates(rates);
        self.rates = rates;
        Ok(())
    }

    /// The rates the steps use.
    pub fn rates(&self) -> Rates {
        self.rates
    }

    /// Paints a disc of `radius` cells centred on cell (`x`, `y`) with the seed state of the
    /// starting patterns (U = 0.5, V = 0.25), wrapping around the edges like the field (the
    /// brush of `serve`). Copies the fields out and back in: one round trip per call.
    pub fn paint(&mut self, x: f32, y: f32, radius: f32) -> Result<()> {
        if !(x.is_finite() && y.is_finite() && radius.is_finite() && radius >= 0.0) {
            return Err(Error::InvalidInput(format!(
                "a brush needs a finite centre and radius, got ({x}, {y}) and {radius}"
            )));
        }
        let (mut u, mut v) = self.fields()?;
        for cell in disc_cells(self.width, self.height, x, y, radius) {
            u[cell] = init::SEED_U;
            v[cell] = init::SEED_V;
        }
        self.engine.set_fields(&u, &v)
    }

    /// The CUDA engine, to tune it (launch shapes, graphs); `None` on the CPU.
    pub fn cuda_engine(&mut self) -> Option<&mut cuda::CudaGrayScott> {
        self.engine.as_cuda()
    }

    /// Where the current U and V are, for zero-copy access (valid until the next step; see
    /// [`crate::view`]). A run in parts refuses.
    pub fn views(&self) -> Result<Vec<crate::view::FieldView>> {
        self.engine.views()
    }

    /// The current U and V fields.
    pub fn fields(&mut self) -> Result<(Vec<f32>, Vec<f32>)> {
        self.engine.fields()
    }

    /// `u` and `v` as named arrays of shape `[height, width]`, for `--save`.
    pub fn export_fields(&mut self) -> Result<crate::export::Fields> {
        use crate::export::{Array, Fields};
        let (w, h) = (self.width, self.height);
        let (u, v) = self.fields()?;
        let shape = [u64::from(h), u64::from(w)];
        // NCCL ranks other than 0 sent their bands and hold no fields: nothing to write.
        let arrays = if self.is_root() {
            vec![Array::new("u", &shape, u), Array::new("v", &shape, v)]
        } else {
            Vec::new()
        };
        Ok(Fields { grid: [w, h, 1], spacing: 1.0, arrays })
    }

    pub fn width(&self) -> u32 {
        self.width
    }

    pub fn height(&self) -> u32 {
        self.height
    }

    /// Steps taken so far.
    pub fn steps_done(&self) -> u64 {
        self.steps_done
    }

    /// Whether this process writes the outputs (false on NCCL ranks other than 0).
    pub fn is_root(&self) -> bool {
        self.engine.is_root()
    }

    /// Which backend runs the simulation, for messages.
    pub fn describe(&self) -> String {
        self.engine.describe()
    }

    /// The parameters a checkpoint must share with the run it resumes: the rates (the
    /// starting pattern, seed and image do not matter once the state is restored).
    fn checkpoint_params(&self) -> Vec<(String, String)> {
        let r = &self.rates;
        [("du", r.du), ("dv", r.dv), ("feed", r.feed), ("kill", r.kill), ("dt", r.dt)]
            .map(|(name, value)| checkpoint::param(name, value))
            .to_vec()
    }

    /// The whole state (U, V and the step count) as a checkpoint.
    pub fn checkpoint(&mut self) -> Result<Checkpoint> {
        let (u, v) = self.fields()?;
        let mut c = Checkpoint::new(
            Simulation::GrayScott,
            [self.width, self.height, 1],
            self.steps_done,
            self.checkpoint_params(),
        );
        c.arrays = vec![("u".into(), u), ("v".into(), v)];
        Ok(c)
    }

    /// Writes [`GrayScott::checkpoint`] to `path` (replacing the file there only once the new
    /// one is complete).
    pub fn save_checkpoint(&mut self, path: &Path) -> Result<PathBuf> {
        self.checkpoint()?.write(path)
    }

    /// Continues from `checkpoint`: refuses one of another simulation, size or rates, or with
    /// U or V outside [0, 1], else
    /// replaces the fields and the step count. Frames taken before are unaffected.
    pub fn restore(&mut self, mut checkpoint: Checkpoint) -> Result<()> {
        checkpoint.check(Simulation::GrayScott, [self.width, self.height, 1], &self.checkpoint_params())?;
        let cells = self.width as usize * self.height as usize;
        let u = checkpoint.take_unit_array("u", cells)?;
        let v = checkpoint.take_unit_array("v", cells)?;
        self.engine.set_fields(&u, &v)?;
        self.steps_done = checkpoint.steps;
        Ok(())
    }

    /// Reads the checkpoint at `path` and [`restore`](GrayScott::restore)s it.
    pub fn resume_from(&mut self, path: &Path) -> Result<()> {
        self.restore(Checkpoint::read(path)?)
    }
}
