//! 3-D heat diffusion with RK4: setup and validation, initial conditions, the exact solution
//! of the sine eigenmode, and the simulation value that the CLI, tests and bench drive.

pub mod cpu;
pub mod cuda;
mod driven;
pub mod parts;
mod settings;

pub use settings::{HeatChoices, MAX_COEFFICIENT, MAX_H, MAX_VALUE, MIN_H};

use std::path::{Path, PathBuf};

use crate::{
    Device,
    checkpoint::{self, Checkpoint, Simulation},
    error::{Error, Result},
    memory,
    rng::SplitMix64,
};

/// RK4 is stable for λ·dt in [−2.785, 0] on the negative real axis.
pub const RK4_REAL_STABILITY: f64 = 2.785;

/// The largest side of the box one part holds (its z extent with halos included), and of
/// nx and ny always. Memory limits most boxes first (3000³ needs 216 GB with `single`).
pub const MAX_SIDE: u32 = 4096;

/// The largest z extent of a box split into slabs (`--split`, `--gpus`, NCCL ranks): each
/// slab holds at most [`MAX_SIDE`] planes.
pub const MAX_Z: u32 = 16 * MAX_SIDE;

/// Refuses a part (one GPU's box, or a slab with its halos) that the kernels cannot index:
/// more than [`MAX_SIDE`] z planes, or for the one-thread-per-cell variants (`naive`,
/// `reuse`, which count cells in 32 bits) more than 2³² − 1 cells.
pub fn check_part(variant: HeatVariant, n: [u32; 3], what: &str) -> Result<()> {
    if n[2] > MAX_SIDE {
        return Err(Error::InvalidInput(format!(
            "{what} has {} z planes, above the {MAX_SIDE} one part holds: split the box along z with --split P \
             or --gpus N (each slab at most {MAX_SIDE} planes with its halos)",
            n[2]
        )));
    }
    let cells = n.iter().map(|&s| u64::from(s)).product::<u64>();
    if matches!(variant, HeatVariant::Naive | HeatVariant::Reuse) && cells > u64::from(u32::MAX) {
        return Err(Error::InvalidInput(format!(
            "{what} has {cells} cells, more than the {} variant indexes (2^32 - 1, one thread per cell): use fused, \
             tiled or single, or more parts",
            variant.name()
        )));
    }
    Ok(())
}

crate::choice! {
    /// Starting fields (`--init`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum HeatInit {
        /// A hot cube (u = 1) in the middle third of the grid, u = 0 elsewhere.
        HotCube = "hot-cube",
        /// sin(πx/Lx)·sin(πy/Ly)·sin(πz/Lz): the slowest eigenmode, with a known exact decay.
        Sine = "sine",
        /// A few hot Gaussian blobs at random places.
        Blobs = "blobs",
    }
}

crate::choice! {
    /// The steps of the optimisation progression (`--variant`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum HeatVariant {
        /// The CPU reference: classic RK4 with explicit temporaries (rayon).
        Cpu = "cpu",
        /// One kernel per stage, each built from u, then an update kernel (write-up step 0).
        Naive = "naive",
        /// Stages reuse k1 instead of recomputing the stencil on u (write-up step 2).
        Reuse = "reuse",
        /// RK4 as its polynomial in the operator: 4 passes, 44 B/cell.
        Fused = "fused",
        /// Fused, each pass a 2.5-D kernel marching along z.
        Tiled = "tiled",
        /// The whole RK4 step in one 2.5-D pass (the four stencil levels pipelined along z).
        Single = "single",
    }
}

impl HeatVariant {
    /// The `--variant` name (its [`Choice`](crate::Choice) name).
    pub fn name(self) -> &'static str {
        crate::Choice::name(self)
    }

    /// Device bytes per cell: u and four stages, or u and three polynomial terms.
    pub fn bytes_per_cell(self) -> u64 {
        match self {
            HeatVariant::Cpu => 4 * 6,
            HeatVariant::Naive | HeatVariant::Reuse => 4 * 5,
            HeatVariant::Fused | HeatVariant::Tiled => 4 * 4,
            HeatVariant::Single => 4 * 2,
        }
    }
}

/// A heat run's definition.
#[derive(Clone, Debug)]
pub struct HeatSetup {
    /// Grid points along x, y, z (faces included).
    pub n: [u32; 3],
    pub alpha: f32,
    /// Grid spacing.
    pub h: f32,
    pub dt: f32,
    pub boundary: f32,
    pub init: HeatInit,
    pub seed: u64,
}

impl HeatSetup {
    /// A cube of side `n` with α = 1, h = 1, the boundary at 0 and dt at 80% of the limit.
    pub fn cube(n: u32, init: HeatInit) -> Self {
        let mut setup = Self { n: [n; 3], alpha: 1.0, h: 1.0, dt: 0.0, boundary: 0.0, init, seed: 1 };
        setup.dt = 0.8 * setup.dt_limit();
        setup
    }

    pub fn cells(&self) -> usize {
        self.n.iter().map(|&n| n as usize).product()
    }

    /// `a = α/h²`, the factor of the 7-point Laplacian.
    pub fn a(&self) -> f32 {
        self.alpha / (self.h * self.h)
    }

    /// The largest stable dt: the 7-point Laplacian's eigenvalues lie in (−12α/h², 0), and
    /// RK4 is stable for λ·dt ≥ −2.785.
    pub fn dt_limit(&self) -> f32 {
        (RK4_REAL_STABILITY * f64::from(self.h) * f64::from(self.h) / (12.0 * f64::from(self.alpha))) as f32
    }

    /// Checks sizes and parameters; the error names the option and its valid range.
    pub fn validate(&self) -> Result<()> {
        for (name, n, most) in
            [("nx", self.n[0], MAX_SIDE), ("ny", self.n[1], MAX_SIDE), ("nz", self.n[2], MAX_Z)]
        {
            if !(3..=most).contains(&n) {
                let split = if name == "nz" {
                    "; above 4096 the box is split into slabs: --split, --gpus"
                } else {
                    ""
                };
                return Err(Error::InvalidInput(format!(
                    "--{name} must be between 3 and {most} (faces included{split}), got {n}"
                )));
            }
        }
        for (name, value) in [("alpha", self.alpha), ("h", self.h), ("dt", self.dt)] {
            if !value.is_finite() || value <= 0.0 {
                return Err(Error::InvalidInput(format!(
                    "--{name} must be a finite number above 0, got {value}"
                )));
            }
        }
        if !self.boundary.is_finite() {
            return Err(Error::InvalidInput(format!(
                "--boundary-value must be finite, got {}",
                self.boundary
            )));
        }
        let limit = self.dt_limit();
        if self.dt > limit {
            return Err(Error::InvalidInput(format!(
                "--dt {} is above the RK4 stability limit {limit:.6} (2.785·h²/(12·α) for this 7-point stencil)",
                self.dt
            )));
        }
        Ok(())
    }

    /// The slowest eigenvalue of `α∇²` with Dirichlet faces: `−4a·Σ sin²(π/(2(n−1)))`.
    pub fn sine_eigenvalue(&self) -> f64 {
        let a = f64::from(self.a());
        -4.0 * a
            * self
                .n
                .iter()
                .map(|&n| (std::f64::consts::PI / (2.0 * f64::from(n - 1))).sin().powi(2))
                .sum::<f64>()
    }
}

/// The initial field of `setup` (faces at the boundary value).
pub fn initial_field(setup: &HeatSetup) -> Vec<f32> {
    initial_slab(setup, 0, setup.n[2])
}

/// Planes `z0 .. z1` of [`initial_field`] (a slab's share of the start, without the rest of
/// the box: a split run's parts build only their own), computed in parallel over planes.
pub fn initial_slab(setup: &HeatSetup, z0: u32, z1: u32) -> Vec<f32> {
    use rayon::prelude::*;
    let [nx, ny, nz] = setup.n.map(|n| n as usize);
    let mut u = vec![0.0f32; nx * ny * (z1 - z0) as usize];
    let mut rng = SplitMix64::new(setup.seed);
    let blobs: Vec<[f32; 4]> = (0..6)
        .map(|_| {
            let r = 0.05 + 0.1 * rng.unit();
            [rng.unit(), rng.unit(), rng.unit(), r]
        })
        .collect();
    u.par_chunks_mut(nx * ny).enumerate().for_each(|(dz, plane)| {
        let z = z0 as usize + dz;
        for y in 0..ny {
            for x in 0..nx {
                let p = [x as f32 / (nx - 1) as f32, y as f32 / (ny - 1) as f32, z as f32 / (nz - 1) as f32];
                let face = x == 0 || y == 0 || z == 0 || x == nx - 1 || y == ny - 1 || z == nz - 1;
                plane[y * nx + x] = if face {
                    setup.boundary
                } else {
                    match setup.init {
                        HeatInit::HotCube => {
                            if p.iter().all(|c| (1.0 / 3.0..=2.0 / 3.0).contains(c)) {
                                1.0
                            } else {
                                0.0
                            }
                        }
                        HeatInit::Sine => p.iter().map(|c| (std::f32::consts::PI * c).sin()).product(),
                        HeatInit::Blobs => blobs
                            .iter()
                            .map(|b| {
                                let d2: f32 = (0..3).map(|k| (p[k] - b[k]).powi(2)).sum();
                                (-d2 / (b[3] * b[3])).exp()
                            })
                            .sum::<f32>()
                            .min(1.0),
                    }
                };
            }
        }
    });
    u
}

/// For the sine start with the boundary at 0: the largest difference from the exact
/// semi-discrete solution `u₀·e^{λt}`, absolute and relative to its peak.
pub fn sine_error(setup: &HeatSetup, u: &[f32], t: f64) -> Option<(f64, f64)> {
    if !has_exact_solution(setup) {
        return None;
    }
    let decay = (setup.sine_eigenvalue() * t).exp();
    // The start slab by slab, not the whole box again beside `u` (a large box's field fills
    // the host's memory once, not twice).
    let plane = setup.n[0] as usize * setup.n[1] as usize;
    let (mut worst, mut peak) = (0.0f64, 0.0f64);
    for z0 in (0..setup.n[2]).step_by(64) {
        let z1 = (z0 + 64).min(setup.n[2]);
        let u0 = initial_slab(setup, z0, z1);
        let here = &u[z0 as usize * plane..z1 as usize * plane];
        for (&x, &x0) in here.iter().zip(&u0) {
            worst = worst.max((f64::from(x) - f64::from(x0) * decay).abs());
            peak = peak.max(f64::from(x0).abs());
        }
    }
    let peak = peak * decay;
    Some((worst, worst / peak))
}

/// The smallest and largest value of [`initial_field`] and the boundary value, computed slab
/// by slab (never holding the whole box).
pub fn initial_range(setup: &HeatSetup) -> (f32, f32) {
    let (mut lo, mut hi) = (setup.boundary, setup.boundary);
    for z0 in (0..setup.n[2]).step_by(64) {
        for x in initial_slab(setup, z0, (z0 + 64).min(setup.n[2])) {
            (lo, hi) = (lo.min(x), hi.max(x));
        }
    }
    (lo, hi)
}

/// Whether [`sine_error`] has an exact solution to compare with (the sine mode, zero faces).
pub fn has_exact_solution(setup: &HeatSetup) -> bool {
    setup.init == HeatInit::Sine && setup.boundary == 0.0
}

/// What a heat backend provides.
pub trait HeatEngine {
    /// Advances by `steps` RK4 steps.
    fn step(&mut self, steps: u32) -> Result<()>;
    /// The whole field.
    fn field(&mut self) -> Result<Vec<f32>>;
    /// The xy plane at height `z`.
    fn slice(&mut self, z: u32) -> Result<Vec<f32>>;
    /// Replaces the whole field (restoring a checkpoint).
    fn set_field(&mut self, u: &[f32]) -> Result<()>;
    /// Waits for queued work.
    fn synchronize(&mut self) -> Result<()> {
        Ok(())
    }
    fn describe(&self) -> String;
    /// Whether this process writes the outputs: false on NCCL ranks other than 0, which
    /// take part in every gather but get an empty field.
    fn is_root(&self) -> bool {
        true
    }
}

/// A running heat simulation.
pub struct Heat {
    engine: Box<dyn HeatEngine>,
    setup: HeatSetup,
    steps_done: u64,
    /// The frames' colour range ([`initial_range`]: it builds the whole initial field, so it
    /// is computed once, at the first frame).
    frame_range: Option<(f32, f32)>,
}

impl Heat {
    /// Checks the setup, refuses a grid that does not fit in the device's memory (saying how
    /// much it needs and how much is free), and uploads the initial field.
    pub fn new(setup: &HeatSetup, device: &Device, variant: HeatVariant) -> Result<Self> {
        setup.validate()?;
        check_part(variant, setup.n, "the box")?;
        let cells = setup.cells() as u64;
        let [nx, ny, nz] = setup.n;
        let (w, h) = (nx, ny * nz);
        let engine: Box<dyn HeatEngine> = match (device, variant) {
            (Device::Cpu, v) if v != HeatVariant::Cpu => {
                return Err(Error::InvalidInput(format!(
                    "the {} variant runs on a CUDA GPU, and this run is on the CPU",
                    v.name()
                )));
            }
            (Device::Cuda(gpu), v) if v != HeatVariant::Cpu => {
                memory::check_host(w, h, 4 * cells)?;
                let (free, _) = gpu.memory()?;
                memory::require_box(setup.n, v.bytes_per_cell() * cells + (64 << 20), free, "GPU")?;
                Box::new(cuda::CudaHeat::new(gpu.clone(), v, setup, &initial_field(setup))?)
            }
            _ => {
                memory::check_host(w, h, HeatVariant::Cpu.bytes_per_cell() * cells)?;
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
        Self::new_in(setup, crate::transport::Layout::Local { gpus: gpus.to_vec(), split }, variant, overlap)
    }

    /// A CUDA run in the slabs of `layout` (in this process, or this process's slab of an
    /// NCCL job: every process builds the whole start and keeps its slab); bit-identical to
    /// [`Heat::new`]'s run of the same variant. `overlap`: write each slab in halves, in
    /// turns, each half's edge exchanged while the other is written (single only; [`parts`]).
    pub fn new_in(
        setup: &HeatSetup,
        layout: crate::transport::Layout,
        variant: HeatVariant,
        overlap: bool,
    ) -> Result<Self> {
        setup.validate()?;
        if variant == HeatVariant::Cpu {
            return Err(Error::InvalidInput("--split and --gpus take a GPU variant, not cpu".into()));
        }
        let engine = parts::PartedHeat::new(layout, variant, setup, overlap)?;
        Ok(Self { engine: Box::new(engine), setup: setup.clone(), steps_done: 0, frame_range: None })
    }

    pub fn step(&mut self, steps: u32) -> Result<()> {
        self.engine.step(steps)?;
        self.steps_done += u64::from(steps);
        Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_is_limited_by_its_z_planes_and_32_bit_cell_counts() {
        assert!(check_part(HeatVariant::Single, [4096, 4096, 4096], "the box").is_ok());
        let e = check_part(HeatVariant::Single, [64, 64, 4097], "slab 2 of 3").unwrap_err().to_string();
        assert!(e.starts_with("slab 2 of 3 has 4097 z planes") && e.contains("--split"), "{e}");
        // 2^32 cells is one more than naive and reuse count.
        assert!(check_part(HeatVariant::Naive, [2048, 2048, 1023], "the box").is_ok());
        let e = check_part(HeatVariant::Reuse, [2048, 2048, 1024], "the box").unwrap_err().to_string();
        assert!(e.contains("4294967296 cells") && e.contains("reuse"), "{e}");
        assert!(check_part(HeatVariant::Fused, [2048, 2048, 1024], "the box").is_ok());
    }

    #[test]
    fn only_a_split_box_goes_past_4096_planes() {
        let mut setup = HeatSetup::cube(16, HeatInit::Blobs);
        setup.n = [16, 16, MAX_Z];
        assert!(setup.validate().is_ok());
        setup.n = [16, 16, MAX_Z + 1];
        let e = setup.validate().unwrap_err().to_string();
        assert!(e.contains("--nz must be between 3 and 65536") && e.contains("--split"), "{e}");
        setup.n = [4097, 16, 16];
        assert!(setup.validate().unwrap_err().to_string().contains("--nx must be between 3 and 4096"));
    }

    #[test]
    fn the_initial_range_spans_the_field_and_the_boundary() {
        let mut setup = HeatSetup::cube(9, HeatInit::Blobs);
        setup.n = [7, 5, 131];
        setup.boundary = -0.5;
        let whole = initial_field(&setup);
        let lo = whole.iter().copied().fold(setup.boundary, f32::min);
        let hi = whole.iter().copied().fold(setup.boundary, f32::max);
        assert_eq!(initial_range(&setup), (lo, hi));
        assert!(lo == -0.5 && hi > 0.0);
    }

    #[test]
    fn slabs_of_the_start_are_the_start() {
        for init in [HeatInit::Blobs, HeatInit::Sine, HeatInit::HotCube] {
            let mut setup = HeatSetup::cube(9, init);
            setup.n = [7, 5, 11];
            let whole = initial_field(&setup);
            let plane = 7 * 5;
            for (z0, z1) in [(0, 4), (3, 11), (5, 6)] {
                assert_eq!(initial_slab(&setup, z0, z1), whole[z0 as usize * plane..z1 as usize * plane]);
            }
        }
    }
}
