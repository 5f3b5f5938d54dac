//! Gray-Scott reaction-diffusion: parameters and presets, initial conditions, and the
//! simulation value that the CLI, tests and examples drive.
//!
//! ```no_run
//! use simulations::grayscott::{GrayScott, Setup};
//! use simulations::Device;
//! let setup = Setup::new(256, 256, simulations::grayscott::preset("coral").unwrap().rates());
//! let mut sim = GrayScott::new(&setup, &Device::Cpu, simulations::grayscott::Variant::Cpu)?;
//! sim.step(1000)?;
//! let mut levels = vec![0u8; 256 * 256];
//! sim.levels(&mut levels)?;
//! # Ok::<(), simulations::Error>(())
//! ```

pub mod cpu;
pub mod cuda;
mod driven;
pub mod init;
mod launch;
pub mod map;
pub mod parts;
mod settings;

use std::path::{Path, PathBuf};

pub use init::{Init, initial_fields};
pub use kernels::grayscott::Rates;
pub use settings::{Choices, MAX_RATE, named_preset};

use crate::{
    BackendChoice, Device,
    checkpoint::{self, Checkpoint, Simulation},
    error::{Error, Result},
    memory,
};

/// Diffusion rates and time step shared by all presets (Pearson's Du = 2e-5, Dv = 1e-5 on
/// a 2.5 × 2.5 domain of 256² cells, rescaled to unit grid spacing, as in the common WebGL
/// demos), with dt = 1.
pub const DEFAULT_DU: f32 = 0.2097;
pub const DEFAULT_DV: f32 = 0.105;
pub const DEFAULT_DT: f32 = 1.0;

/// A named (F, k) pair, with the start and the number of steps that show its pattern.
///
/// Classes are Pearson's (J. E. Pearson, "Complex patterns in a simple system", Science 261,
/// 1993: α to μ) and Munafo's extensions of them (ν, ξ, π, ρ, σ; R. Munafo, "Pearson's
/// Classification (Extended) of Gray-Scott System Parameter Values", mrob.com/pub/comp/xmorphia),
/// read off Munafo's map of the (F, k) plane; `coral` and `mitosis` are Karl Sims' named
/// examples (karlsims.com/rd.html).
#[derive(Clone, Copy, Debug)]
pub struct Preset {
    pub name: &'static str,
    pub feed: f32,
    pub kill: f32,
    /// The starting pattern that grows into this pattern (`--init` overrides it).
    pub init: Init,
    /// Steps for the default run (`--steps` overrides it): enough for the pattern to form.
    pub steps: u32,
    /// The class and where it is defined, e.g. "Pearson β".
    pub class: &'static str,
    pub description: &'static str,
}

impl Preset {
    /// The preset's rates with the default diffusion and time step.
    pub fn rates(&self) -> Rates {
        Rates { du: DEFAULT_DU, dv: DEFAULT_DV, feed: self.feed, kill: self.kill, dt: DEFAULT_DT }
    }

    /// A `width × height` setup of this preset: its rates and its start, seed 1.
    pub fn setup(&self, width: u32, height: u32) -> Setup {
        Setup { init: self.init, ..Setup::new(width, height, self.rates()) }
    }
}

/// The named presets, `--list-presets` order. Every one grows its pattern from its own start
/// (`host/tests/presets.rs` checks it at 128², on the CPU). All start from scattered small
/// squares (`spots`): from Pearson's single central square most of them die out.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "coral",
        feed: 0.0545,
        kill: 0.062,
        init: Init::Spots,
        steps: 10_000,
        class: "Pearson κ (Sims' \"coral growth\")",
        description: "branching stripes that grow from the seeds and fill the plane",
    },
    Preset {
        name: "mitosis",
        feed: 0.0367,
        kill: 0.0649,
        init: Init::Spots,
        steps: 10_000,
        class: "Pearson λ (Sims' \"mitosis\")",
        description: "spots that grow and divide like cells until they fill the plane",
    },
    Preset {
        name: "solitons",
        feed: 0.034,
        kill: 0.066,
        init: Init::Spots,
        steps: 5_000,
        class: "Pearson λ, high-k edge (Munafo's spot type: solitons)",
        description: "stable isolated spots: each seed becomes one spot that neither divides nor dies",
    },
    Preset {
        name: "spots",
        feed: 0.030,
        kill: 0.062,
        init: Init::Spots,
        steps: 10_000,
        class: "Pearson λ",
        description: "self-replicating spots that tile the plane in a near-hexagonal lattice",
    },
    Preset {
        name: "worms",
        feed: 0.046,
        kill: 0.065,
        init: Init::Spots,
        steps: 10_000,
        class: "Pearson μ",
        description: "long separate worms that grow at their ends",
    },
    Preset {
        name: "maze",
        feed: 0.029,
        kill: 0.057,
        init: Init::Spots,
        steps: 10_000,
        class: "Pearson θ",
        description: "a labyrinth of connected stripes",
    },
    Preset {
        name: "waves",
        feed: 0.018,
        kill: 0.047,
        init: Init::Spots,
        steps: 5_000,
        class: "Pearson α/β border",
        description: "wave fronts that expand from spots, collide and break up, never settling",
    },
    Preset {
        name: "chaos",
        feed: 0.026,
        kill: 0.051,
        init: Init::Spots,
        steps: 5_000,
        class: "Pearson β",
        description: "turbulent, ever-changing patches",
    },
    Preset {
        name: "holes",
        feed: 0.039,
        kill: 0.058,
        init: Init::Spots,
        steps: 10_000,
        class: "Pearson ι",
        description: "a V-rich sheet pierced by holes (negative spots)",
    },
];

/// The preset called `name`, if any.
pub fn preset(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}

/// The largest grid side: GIF frames are at most 65535 wide, and 65535² cells still index
/// with 32-bit integers on the GPU.
pub const MAX_SIDE: u32 = 65_535;

/// Everything that defines a simulation's initial state and dynamics.
#[derive(Clone, Debug)]
pub struct Setup {
    pub width: u32,
    pub height: u32,
    pub rates: Rates,
    pub init: Init,
    /// When set, V is seeded from this image's luminance (and `init` is ignored).
    pub init_image: Option<PathBuf>,
    pub seed: u64,
}

impl Setup {
    /// A `width × height` setup with the given rates, the default `square` start and seed 1.
    pub fn new(width: u32, height: u32, rates: Rates) -> Self {
        Self { width, height, rates, init: Init::Square, init_image: None, seed: 1 }
    }

    /// Number of cells.
    pub fn cells(&self) -> usize {
        self.width as usize * self.height as usize
    }

    /// Checks sizes and rates; the error names the offending option and its valid range.
    pub fn validate(&self) -> Result<()> {
        for (name, side) in [("width", self.width), ("height", self.height)] {
            if side == 0 || side > MAX_SIDE {
                return Err(Error::InvalidInput(format!(
                    "--{name} must be between 1 and {MAX_SIDE}, got {side}"
                )));
            }
        }
        let r = &self.rates;
        for (name, value) in [("du", r.du), ("dv", r.dv), ("feed", r.feed), ("kill", r.kill), ("dt", r.dt)] {
            if !value.is_finite() || value < 0.0 {
                return Err(Error::InvalidInput(format!(
                    "--{name} must be a finite, non-negative number, got {value}"
                )));
            }
        }
        if r.dt == 0.0 {
            return Err(Error::InvalidInput("--dt must be greater than 0".into()));
        }
        // Explicit Euler on the 5-point Laplacian is stable for D·dt ≤ 1/4.
        for (name, d) in [("du", r.du), ("dv", r.dv)] {
            if d * r.dt > 0.25 {
                return Err(Error::InvalidInput(format!(
                    "--{name} × --dt = {} exceeds 0.25, the stability limit of explicit Euler \
                     with the 5-point Laplacian; lower --dt or --{name}",
                    d * r.dt
                )));
            }
        }
        Ok(())
    }
}

/// The cells (row-major indices) of a periodic `width × height` grid whose centres lie within
/// `radius` of (`x`, `y`); the disc is clipped to one period of the grid.
pub fn disc_cells(width: u32, height: u32, x: f32, y: f32, radius: f32) -> Vec<usize> {
    let (w, h) = (i64::from(width), i64::from(height));
    let r = radius.min(width.max(height) as f32);
    let span = |c: f32, side: i64| {
        let lo = ((c - r - 0.5).floor() as i64).max(-side);
        (lo, ((c + r - 0.5).ceil() as i64).min(lo + side - 1))
    };
    let ((x0, x1), (y0, y1)) = (span(x, w), span(y, h));
    let mut cells = Vec::new();
    for cy in y0..=y1 {
        for cx in x0..=x1 {
            let (dx, dy) = (cx as f32 + 0.5 - x, cy as f32 + 0.5 - y);
            if dx * dx + dy * dy <= r * r {
                cells.push((cy.rem_euclid(h) * w + cx.rem_euclid(w)) as usize);
            }
        }
    }
    cells
}

/// A running Gray-Scott simulation on some backend.
pub struct GrayScott {
    engine: Box<dyn Engine>,
    width: u32,
    height: u32,
    rates: Rates,
    steps_done: u64,
}

/// What a backend provides. A new GPU variant is not a new engine but a new scheme of the
/// CUDA one (`cuda/schemes/`, registered in `Variant::scheme`).
pub trait Engine {
    /// Advances the simulation by `steps` steps (possibly asynchronously).
    fn step(&mut self, steps: u32) -> Result<()>;
    /// Takes a frame of the current state (palette levels); it becomes available, in order,
    /// from [`Engine::collect`].
    fn snapshot(&mut self) -> Result<()>;
    /// The frames finished so far, oldest first; with `wait`, every frame taken.
    fn collect(&mut self, wait: bool) -> Result<Vec<Vec<u8>>>;
    /// Copies the current U and V fields out.
    fn fields(&mut self) -> Result<(Vec<f32>, Vec<f32>)>;
    /// Replaces the current U and V fields (restoring a checkpoint).
    fn set_fields(&mut self, u: &[f32], v: &[f32]) -> Result<()>;
    /// Replaces the rates the next steps use (checked by [`GrayScott::set_rates`]).
    fn set_rates(&mut self, rates: Rates);
    /// Waits for queued work.
    fn synchronize(&mut self) -> Result<()> {
        Ok(())
    }
    /// "cpu (2 threads)", "cuda fused (NVIDIA H200)", ...
    fn describe(&self) -> String;
    /// Whether this process writes the outputs: false on NCCL ranks other than 0, which
    /// take part in every gather but get empty fields and frames.
    fn is_root(&self) -> bool {
        true
    }
    /// The CUDA engine behind this trait object, if it is one.
    fn as_cuda(&mut self) -> Option<&mut cuda::CudaGrayScott> {
        None
    }
}

/// Resolves `--backend` and `--variant` together: a GPU variant needs the GPU (even with
/// `auto`), the `cpu` variant never opens it, and without `--variant` the GPU runs `fused`.
/// Returns the device, the variant, and with `auto` on a machine without a GPU a notice.
pub fn select(backend: BackendChoice, variant: Option<Variant>) -> Result<(Device, Variant, Option<String>)> {
    match (backend, variant) {
        (BackendChoice::Cuda, Some(Variant::Cpu)) => {
            Err(Error::InvalidInput("--variant cpu runs on the CPU; drop --backend cuda".into()))
        }
        (BackendChoice::Cpu, Some(v)) if v.is_gpu() => Err(Error::InvalidInput(format!(
            "--variant {} runs on a CUDA GPU, but --backend cpu was asked for",
            v.name()
        ))),
        (_, Some(Variant::Cpu)) | (BackendChoice::Cpu, None) => Ok((Device::Cpu, Variant::Cpu, None)),
        (_, Some(v)) => {
            let gpu = crate::cuda::open()
                .map_err(|e| Error::InvalidInput(format!("--variant {} needs a CUDA GPU: {e}", v.name())))?;
            Ok((Device::Cuda(gpu), v, None))
        }
        (choice, None) => {
            let (device, notice) = Device::select(choice)?;
            let variant = if matches!(device, Device::Cpu) { Variant::Cpu } else { Variant::Fused };
            Ok((device, variant, notice))
        }
    }
}

crate::choice! {
    /// The steps of the optimisation progression (`--variant`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum Variant {
        /// The CPU reference (rayon).
        Cpu = "cpu",
        /// Laplacian on the GPU, update on the CPU, copies both ways every step.
        V0 = "v0",
        /// Laplacian kernel then update kernel, all on the GPU (40 B/cell/step).
        V1 = "v1",
        /// v1, with frames gathered on the GPU and colour-mapped a batch per launch.
        V2 = "v2",
        /// Laplacian and update in one kernel (16 B/cell/step).
        Fused = "fused",
        /// Fused, through a shared-memory tile with a halo.
        Tiled = "tiled",
        /// Temporal blocking: 2 to 8 steps (tuned) per launch on tiles held in registers.
        Temporal = "temporal",
        /// Temporal blocking by 2.5-D streaming: blocks march down strips, a wavefront of up to 8
        /// time levels (tuned) in register rings; halo work only at the strip's sides.
        Streaming = "streaming",
    }
}

impl Variant {
    /// The unit that steps a GPU variant on the CUDA engine; `None` for `cpu`, which has an
    /// engine of its own. The one registration of a GPU variant besides its entry above.
    pub(crate) fn scheme(self) -> Option<&'static dyn cuda::schemes::Scheme> {
        use cuda::schemes::*;
        match self {
            Variant::Cpu => None,
            Variant::V0 => Some(&V0),
            Variant::V1 => Some(&V1),
            Variant::V2 => Some(&V2),
            Variant::Fused => Some(&Fused),
            Variant::Tiled => Some(&Tiled),
            Variant::Temporal => Some(&Temporal),
            Variant::Streaming => Some(&Streaming),
        }
    }

    /// Every variant, in progression order.
    pub const ALL: &'static [Variant] = <Variant as crate::Choice>::VALUES;

    /// The `--variant` name (its [`Choice`](crate::Choice) name).
    pub fn name(self) -> &'static str {
        crate::Choice::name(self)
    }

    /// Whether it runs on the GPU.
    pub fn is_gpu(self) -> bool {
        self.scheme().is_some()
    }

    /// Whether its fields live on the host between steps (`v0`).
    pub(crate) fn state_on_host(self) -> bool {
        self.scheme().is_some_and(|scheme| scheme.state_on_host())
    }

    /// Whether `--split` and `--gpus` take it: a GPU variant whose fields live on the GPU.
    pub fn splits(self) -> bool {
        self.is_gpu() && !self.state_on_host()
    }

    /// The variants `bench grayscott` times without `--variants`, in progression order.
    pub fn benched_by_default() -> Vec<Variant> {
        Self::ALL.iter().copied().filter(|v| v.scheme().is_some_and(|s| s.benched_by_default())).collect()
    }
}

impl GrayScott {
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

    /// Advances by `steps` steps.
    /// A CUDA run split into `split` bands of rows over `gpus` (see [`parts`]), each part
    /// stepped with `settings`. Bit-identical to [`GrayScott::new`]'s run.
    pub fn new_parted(
        setup: &Setup,
        gpus: &[std::sync::Arc<crate::cuda::Gpu>],
        variant: Variant,
        split: u32,
        settings: parts::LaunchSettings,
    ) -> Result<Self> {
        let layout = crate::transport::Layout::Local { gpus: gpus.to_vec(), split };
        Self::new_in(setup, layout, variant, settings)
    }

    /// A CUDA run in the parts of `layout` (in this process, or this process's part of an
    /// NCCL job: every process builds the whole start and keeps its band), each part
    /// stepped with `settings`. Bit-identical to [`GrayScott::new`]'s run.
    pub fn new_in(
        setup: &Setup,
        layout: crate::transport::Layout,
        variant: Variant,
        settings: parts::LaunchSettings,
    ) -> Result<Self> {
        setup.validate()?;
        memory::check_host(setup.width, setup.height, 9 * setup.cells() as u64)?;
        let (u, v) = match &setup.init_image {
            Some(path) => init::fields_from_image(path, setup.width, setup.height)?,
            None => initial_fields(setup.init, setup.width, setup.height, setup.seed),
        };
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
