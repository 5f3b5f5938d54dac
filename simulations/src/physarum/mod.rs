//! Physarum: setup and validation, initial agents and trail, the rendering of the trail, and
//! the simulation value that the CLI, tests, sensitivity analysis and bench drive. The model
//! itself (per-agent and per-cell math) lives in `kernels::physarum`, shared by every backend.

pub mod cpu;
pub mod cuda;
pub mod driven;
pub mod sensitivity;
mod settings;

use std::path::{Path, PathBuf};

pub use kernels::physarum::Params;
use kernels::physarum::{SENSE_BILINEAR, SENSE_NEAREST, TAU, mix32, unit_f32};
use rayon::prelude::*;
pub use settings::{MAX_TRAIL, PhysarumChoices, named_physarum_preset};

use crate::{
    Device,
    checkpoint::{self, Checkpoint, Simulation},
    error::{Error, Result},
    memory,
};

/// The largest grid side.
pub const MAX_SIDE: u32 = 32_768;
/// The most agents (indices and counts stay in `u32`).
pub const MAX_AGENTS: u32 = 1 << 30;

crate::choice! {
    /// How sensors read the trail (`--sensing`).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub enum Sensing {
        /// The cell containing the sensor point (the write-up's Triton kernel).
        #[default]
        Nearest = "nearest",
        /// Bilinear between the four surrounding cells (the write-up's `grid_sample`), periodic.
        Bilinear = "bilinear",
    }
}

crate::choice! {
    /// Where agents start (`--init`).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub enum AgentInit {
        /// Uniform over the grid, random headings (the write-up's).
        #[default]
        Random = "random",
        /// Uniform in a centred disc (radius 0.35 of the shorter side), heading outward.
        Disc = "disc",
        /// On a thin centred ring (radius 0.4 of the shorter side), heading inward.
        Ring = "ring",
    }
}

crate::choice! {
    /// The steps of the optimisation progression (`--variant`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum PhysarumVariant {
        /// The CPU reference (rayon for agents and diffusion, deposits in agent order).
        Cpu = "cpu",
        /// One kernel per PyTorch operation: nine launches per step.
        Unfused = "unfused",
        /// The write-up's Triton kernels: sense+steer+move, atomic deposit, diffuse+decay.
        Fused = "fused",
        /// Struct-of-arrays agents with the deposit counted in the same pass, and one tiled
        /// pass for deposits, diffusion and decay.
        Optimized = "optimized",
    }
}

impl PhysarumVariant {
    pub const GPU: [PhysarumVariant; 3] =
        [PhysarumVariant::Unfused, PhysarumVariant::Fused, PhysarumVariant::Optimized];

    /// The `--variant` name (its [`Choice`](crate::Choice) name).
    pub fn name(self) -> &'static str {
        crate::Choice::name(self)
    }

    /// Device bytes per agent and per cell: agent state and scratch, trail buffers.
    pub fn bytes(self) -> (u64, u64) {
        match self {
            PhysarumVariant::Cpu => (12, 8),
            // pos, heading, dirs, readings, turns; trail and mean.
            PhysarumVariant::Unfused => (12 + 24 + 12 + 4, 8),
            PhysarumVariant::Fused => (12, 8),
            // two copies of (y, x, heading, id) for binning; two trails, two count buffers, and
            // with float deposits two more trails.
            PhysarumVariant::Optimized => (32, 24),
        }
    }
}

/// A named set of model parameters (`--preset`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PhysarumPreset {
    pub name: &'static str,
    pub description: &'static str,
    /// Where the parameters come from.
    pub citation: &'static str,
    pub sensor_dist: f32,
    /// Radians.
    pub sensor_angle: f32,
    /// Radians.
    pub turn_angle: f32,
    pub step_size: f32,
    pub deposit: f32,
    pub diffuse: f32,
    pub decay: f32,
}

impl PhysarumPreset {
    /// `setup` with this preset's model parameters (the rest unchanged).
    pub fn apply(&self, setup: PhysarumSetup) -> PhysarumSetup {
        PhysarumSetup {
            sensor_dist: self.sensor_dist,
            sensor_angle: self.sensor_angle,
            turn_angle: self.turn_angle,
            step_size: self.step_size,
            deposit: self.deposit,
            diffuse: self.diffuse,
            decay: self.decay,
            ..setup
        }
    }
}

/// The named presets; the first is the CLI's default.
pub const PHYSARUM_PRESETS: &[PhysarumPreset] = &[
    PhysarumPreset {
        name: "network",
        description: "the classic network: thin veins joined at junctions around open cells",
        citation: "this project's (issue #16), Jones' model with a longer sensor reach and faster decay",
        sensor_dist: 15.0,
        sensor_angle: 0.5,
        turn_angle: 0.5,
        step_size: 1.0,
        deposit: 5.0,
        diffuse: 0.5,
        decay: 0.1,
    },
    PhysarumPreset {
        name: "jones",
        description: "Jones' agent with equal sensor and turn angles (45°): separate curving strands, few junctions",
        citation: "J. Jones, \"Characteristics of pattern formation and evolution in approximations of \
                   Physarum transport networks\", Artificial Life 16(2), 2010: SO = 9, SS = 1, depT = 5, \
                   3×3 mean diffusion, damping 0.1, here with SA = RA = 45°",
        sensor_dist: 9.0,
        sensor_angle: std::f32::consts::FRAC_PI_4,
        turn_angle: std::f32::consts::FRAC_PI_4,
        step_size: 1.0,
        deposit: 5.0,
        diffuse: 1.0,
        decay: 0.1,
    },
    PhysarumPreset {
        name: "jones-narrow",
        description: "Jones' agent with sensors at ±22.5° turning by 45°: a connected web of long veins",
        citation: "J. Jones, Artificial Life 16(2), 2010, which varies SA and RA apart: here SA = 22.5°, RA = 45°",
        sensor_dist: 9.0,
        sensor_angle: std::f32::consts::FRAC_PI_8,
        turn_angle: std::f32::consts::FRAC_PI_4,
        step_size: 1.0,
        deposit: 5.0,
        diffuse: 1.0,
        decay: 0.1,
    },
    PhysarumPreset {
        name: "writeup",
        description: "the reference write-up's model (the library's PhysarumSetup::default, the benchmarks' model): \
                      short reach and slow decay give thick strands",
        citation: "the reference write-up (PyTorch and Triton versions)",
        sensor_dist: 5.0,
        sensor_angle: std::f32::consts::FRAC_PI_4,
        turn_angle: std::f32::consts::FRAC_PI_4,
        step_size: 1.0,
        deposit: 1.0,
        diffuse: 0.2,
        decay: 0.01,
    },
];

/// The preset called `name`, if any.
pub fn physarum_preset(name: &str) -> Option<&'static PhysarumPreset> {
    PHYSARUM_PRESETS.iter().find(|p| p.name == name)
}

/// A Physarum run's definition. `Default` is the write-up's model (the `writeup` preset) on a
/// 1024² grid with a million agents.
#[derive(Clone, Debug)]
pub struct PhysarumSetup {
    pub width: u32,
    pub height: u32,
    pub agents: u32,
    pub sensor_dist: f32,
    /// Angle between the front sensor and each side sensor, radians.
    pub sensor_angle: f32,
    /// Heading change of a turn, radians.
    pub turn_angle: f32,
    pub step_size: f32,
    pub deposit: f32,
    pub diffuse: f32,
    pub decay: f32,
    /// Largest random heading change per step, radians.
    pub jitter: f32,
    pub sensing: Sensing,
    pub seed: u64,
    pub init: AgentInit,
    /// Seed the trail from this image's luminance times `image_strength`.
    pub init_image: Option<PathBuf>,
    pub image_strength: f32,
}

impl Default for PhysarumSetup {
    fn default() -> Self {
        Self {
            width: 1024,
            height: 1024,
            agents: 1 << 20,
            sensor_dist: 5.0,
            sensor_angle: std::f32::consts::FRAC_PI_4,
            turn_angle: std::f32::consts::FRAC_PI_4,
            step_size: 1.0,
            deposit: 1.0,
            diffuse: 0.2,
            decay: 0.01,
            jitter: 0.0,
            sensing: Sensing::Nearest,
            seed: 1,
            init: AgentInit::Random,
            init_image: None,
            image_strength: 3.0,
        }
    }
}

impl PhysarumSetup {
    pub fn cells(&self) -> usize {
        self.width as usize * self.height as usize
    }

    /// Checks sizes and parameters; the error names the option and its valid range.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::InvalidInput(m));
        for (name, side) in [("width", self.width), ("height", self.height)] {
            if side == 0 || side > MAX_SIDE {
                return bad(format!("--{name} must be between 1 and {MAX_SIDE}, got {side}"));
            }
        }
        if self.agents == 0 || self.agents > MAX_AGENTS {
            return bad(format!("--agents must be between 1 and {MAX_AGENTS}, got {}", self.agents));
        }
        let finite = [
            ("sensor-dist", self.sensor_dist),
            ("sensor-angle", self.sensor_angle),
            ("turn-angle", self.turn_angle),
            ("step-size", self.step_size),
            ("deposit", self.deposit),
            ("diffuse", self.diffuse),
            ("decay", self.decay),
            ("jitter", self.jitter),
            ("image-strength", self.image_strength),
        ];
        for (name, value) in finite {
            if !value.is_finite() {
                return bad(format!("--{name} must be a finite number, got {value}"));
            }
        }
        // At most one period, so positions wrap with one compare (`wrap_coord`).
        let limit = self.width.min(self.height) as f32;
        if !(0.0..=limit).contains(&self.sensor_dist) {
            return bad(format!("--sensor-dist must be between 0 and {limit}, got {}", self.sensor_dist));
        }
        if !(0.0..=limit).contains(&self.step_size) {
            return bad(format!("--step-size must be between 0 and {limit}, got {}", self.step_size));
        }
        if self.sensor_angle.abs() > TAU {
            return bad(format!("--sensor-angle must be within ±2π, got {}", self.sensor_angle));
        }
        if self.turn_angle.abs() > TAU {
            return bad(format!("--turn-angle must be within ±2π, got {}", self.turn_angle));
        }
        if self.deposit < 0.0 {
            return bad(format!("--deposit must be 0 or more, got {}", self.deposit));
        }
        if !(0.0..=1.0).contains(&self.diffuse) {
            return bad(format!("--diffuse must be between 0 and 1, got {}", self.diffuse));
        }
        if !(0.0..1.0).contains(&self.decay) {
            return bad(format!("--decay must be at least 0 and below 1, got {}", self.decay));
        }
        if !(0.0..=TAU).contains(&self.jitter) {
            return bad(format!("--jitter must be between 0 and 2π, got {}", self.jitter));
        }
        if self.image_strength < 0.0 {
            return bad(format!("--image-strength must be 0 or more, got {}", self.image_strength));
        }
        Ok(())
    }

    /// The kernels' parameters (the seed folded to 32 bits).
    pub fn params(&self) -> Params {
        Params::new(
            self.width,
            self.height,
            self.sensor_dist,
            self.sensor_angle,
            self.turn_angle,
            self.step_size,
            self.deposit,
            self.diffuse,
            self.decay,
            self.jitter,
            match self.sensing {
                Sensing::Nearest => SENSE_NEAREST,
                Sensing::Bilinear => SENSE_BILINEAR,
            },
            (self.seed ^ (self.seed >> 32)) as u32,
        )
    }
}

/// Agent state, struct of arrays (index = agent id).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Agents {
    pub y: Vec<f32>,
    pub x: Vec<f32>,
    pub heading: Vec<f32>,
}

impl Agents {
    pub fn len(&self) -> usize {
        self.y.len()
    }

    pub fn is_empty(&self) -> bool {
        self.y.is_empty()
    }
}

/// The starting agents: each from a hash of (seed, agent), so the same on every machine.
pub fn initial_agents(setup: &PhysarumSetup) -> Agents {
    let (w, h) = (setup.width as f32, setup.height as f32);
    let (cy, cx, short) = (h / 2.0, w / 2.0, w.min(h));
    let seed = setup.params().seed;
    let state: Vec<[f32; 3]> = (0..setup.agents)
        .into_par_iter()
        .map(|i| {
            let base = mix32(seed ^ mix32(i ^ 0x5bd1_e995));
            let u = |k: u32| unit_f32(mix32(base.wrapping_add(k.wrapping_mul(0x9e37_79b9))));
            let (a, b, c) = (u(1), u(2), u(3));
            let point = |r: f32, angle: f32| {
                let (y, x) = (cy + r * angle.sin(), cx + r * angle.cos());
                (kernels::physarum::wrap_coord(y, h), kernels::physarum::wrap_coord(x, w))
            };
            match setup.init {
                AgentInit::Random => [a * h, b * w, c * TAU],
                AgentInit::Disc => {
                    let angle = a * TAU;
                    let (y, x) = point(0.35 * short * b.sqrt(), angle);
                    [y, x, angle]
                }
                AgentInit::Ring => {
                    let angle = a * TAU;
                    let (y, x) = point(short * (0.4 + 0.01 * (b - 0.5)), angle);
                    [y, x, kernels::physarum::wrap_angle(angle + std::f32::consts::PI)]
                }
            }
        })
        .collect();
    Agents {
        y: state.iter().map(|s| s[0]).collect(),
        x: state.iter().map(|s| s[1]).collect(),
        heading: state.iter().map(|s| s[2]).collect(),
    }
}

/// The starting trail: zero, or `image_strength` times the image's luminance in [0, 1],
/// resized to the grid (Lanczos, as the write-up).
pub fn initial_trail(setup: &PhysarumSetup) -> Result<Vec<f32>> {
    match &setup.init_image {
        None => Ok(vec![0.0; setup.cells()]),
        Some(path) => {
            let lum = luminance(path, setup.width, setup.height)?;
            Ok(trail_from_luminance(&lum, setup.image_strength))
        }
    }
}

/// An image's luminance in [0, 1], resized to `width × height`.
pub fn luminance(path: &Path, width: u32, height: u32) -> Result<Vec<f32>> {
    let image = crate::input::read_image(path)?;
    let luma =
        image::imageops::resize(&image.to_luma32f(), width, height, image::imageops::FilterType::Lanczos3);
    Ok(luma.into_raw().into_iter().map(|l| l.clamp(0.0, 1.0)).collect())
}

/// `strength · luminance`, cell by cell.
pub fn trail_from_luminance(lum: &[f32], strength: f32) -> Vec<f32> {
    lum.iter().map(|l| strength * l).collect()
}

/// Palette levels of a trail: `t / (t + m)` with `m` the trail's mean, so the mean maps to
/// the middle of the palette and the brightest filaments approach the top, whatever the
/// number of agents. A zero trail is all level 0.
pub fn trail_levels(trail: &[f32]) -> Vec<u8> {
    let mean = (trail.par_iter().map(|&t| f64::from(t)).sum::<f64>() / trail.len().max(1) as f64) as f32;
    if mean <= 0.0 || !mean.is_finite() {
        return vec![0; trail.len()];
    }
    trail.par_iter().map(|&t| (255.0 * (t.max(0.0) / (t.max(0.0) + mean))).round() as u8).collect()
}

/// What a Physarum backend provides.
pub trait PhysarumEngine {
    /// Advances by `steps` steps.
    fn step(&mut self, steps: u32) -> Result<()>;
    /// The trail map.
    fn trail(&mut self) -> Result<Vec<f32>>;
    /// The agents, by id.
    fn agents(&mut self) -> Result<Agents>;
    /// Replaces the agents, the trail and the step counter that seeds the per-step random
    /// numbers (restoring a checkpoint).
    fn set_state(&mut self, agents: &Agents, trail: &[f32], step: u32) -> Result<()>;
    /// Replaces the model parameters the next steps use (same grid; checked by
    /// [`Physarum::set_model`]).
    fn set_params(&mut self, params: Params);
    /// Waits for queued work.
    fn synchronize(&mut self) -> Result<()> {
        Ok(())
    }
    fn describe(&self) -> String;
    /// The CUDA engine, for GPU-side comparisons.
    fn as_cuda(&mut self) -> Option<&mut cuda::CudaPhysarum> {
        None
    }
}

/// A running Physarum simulation.
pub struct Physarum {
    engine: Box<dyn PhysarumEngine>,
    setup: PhysarumSetup,
    steps_done: u64,
    /// Agents moved by [`Physarum::drop_agents`] so far (modulo the agent count).
    dropped: usize,
}

impl Physarum {
    /// Checks the setup, builds the initial state and uploads it.
    pub fn new(setup: &PhysarumSetup, device: &Device, variant: PhysarumVariant) -> Result<Self> {
        setup.validate()?;
        Self::check_memory(setup, device, variant, 1)?;
        let trail = initial_trail(setup)?;
        Self::with_state(setup, device, variant, initial_agents(setup), trail)
    }

    /// Refuses a run whose agents and trail do not fit in the device's (or host's) memory.
    /// `copies` simulations at once (the sensitivity analysis runs two).
    pub fn check_memory(
        setup: &PhysarumSetup,
        device: &Device,
        variant: PhysarumVariant,
        copies: u64,
    ) -> Result<()> {
        let (w, h) = (setup.width, setup.height);
        let (per_agent, per_cell) = variant.bytes();
        let (per_agent, per_cell) = (copies * per_agent, copies * per_cell);
        let host_need = copies * (24 * u64::from(setup.agents) + 12 * setup.cells() as u64);
        memory::check_host(w, h, host_need)?;
        if let (Device::Cuda(gpu), true) = (device, variant != PhysarumVariant::Cpu) {
            let need = per_agent * u64::from(setup.agents) + per_cell * setup.cells() as u64 + (64 << 20);
            let (free, _) = gpu.memory()?;
            memory::require(w, h, need, free, "GPU")?;
        }
        Ok(())
    }

    /// A simulation starting from the given state (the sensitivity analysis perturbs it).
    pub fn with_state(
        setup: &PhysarumSetup,
        device: &Device,
        variant: PhysarumVariant,
        agents: Agents,
        trail: Vec<f32>,
    ) -> Result<Self> {
        setup.validate()?;
        let params = setup.params();
        let engine: Box<dyn PhysarumEngine> = match (device, variant) {
            (_, PhysarumVariant::Cpu) => Box::new(cpu::CpuPhysarum::new(params, agents, trail)),
            (Device::Cuda(gpu), v) => {
                Box::new(cuda::CudaPhysarum::new(gpu.clone(), v, params, &agents, &trail)?)
            }
            (Device::Cpu, v) => {
                return Err(Error::InvalidInput(format!(
                    "the {} variant runs on a CUDA GPU, and this run is on the CPU",
                    v.name()
                )));
            }
        };
        Ok(Self { engine, setup: setup.clone(), steps_done: 0, dropped: 0 })
    }

    /// The engine alone (the bench times engines side by side).
    pub fn into_engine(self) -> Box<dyn PhysarumEngine> {
        self.engine
    }

    pub fn step(&mut self, steps: u32) -> Result<()> {
        self.engine.step(steps)?;
        self.steps_done += u64::from(steps);
        Ok(())
    }

    pub fn trail(&mut self) -> Result<Vec<f32>> {
        self.engine.trail()
    }

    pub fn agents(&mut self) -> Result<Agents> {
        self.engine.agents()
    }

    pub fn synchronize(&mut self) -> Result<()> {
        self.engine.synchronize()
    }

    pub fn steps_done(&self) -> u64 {
        self.steps_done
    }

    /// `trail` of shape `[height, width]`; with `agents`, also `agent_y`, `agent_x` and
    /// `agent_heading` (radians), shape `[agents]`, by agent id; for `--save`.
    pub fn export_fields(&mut self, agents: bool) -> Result<crate::export::Fields> {
        use crate::export::{Array, Fields};
        let (w, h) = (self.setup().width, self.setup().height);
        let mut arrays = vec![Array::new("trail", &[u64::from(h), u64::from(w)], self.trail()?)];
        if agents {
            let a = self.agents()?;
            let n = [a.len() as u64];
            arrays.push(Array::new("agent_y", &n, a.y));
            arrays.push(Array::new("agent_x", &n, a.x));
            arrays.push(Array::new("agent_heading", &n, a.heading));
        }
        Ok(Fields { grid: [w, h, 1], spacing: 1.0, arrays })
    }

    pub fn setup(&self) -> &PhysarumSetup {
        &self.setup
    }

    pub fn describe(&self) -> String {
        self.engine.describe()
    }

    /// Changes the model (sensors, turns, deposit, diffusion, decay, jitter, sensing) from the
    /// next step on; the agents, trail and step count stay. Refuses a setup that
    /// [`PhysarumSetup::validate`] refuses, or one with another grid, agent count or seed
    /// (those need a new simulation).
    pub fn set_model(&mut self, setup: &PhysarumSetup) -> Result<()> {
        setup.validate()?;
        let old = &self.setup;
        if (setup.width, setup.height, setup.agents, setup.seed)
            != (old.width, old.height, old.agents, old.seed)
        {
            return Err(Error::InvalidInput(
                "the grid, the agent count and the seed are fixed for a simulation; start a new one to change them"
                    .into(),
            ));
        }
        self.engine.set_params(setup.params());
        self.setup = setup.clone();
        Ok(())
    }

    /// Moves `count` agents (at most all) into a disc of `radius` cells around (`x`, `y`),
    /// with random headings (the brush of `serve`): the agents moved are the next ones after
    /// those the previous call moved, so repeated drops cycle through all of them. Copies the
    /// agents and the trail out and back in.
    pub fn drop_agents(&mut self, x: f32, y: f32, radius: f32, count: u32) -> Result<()> {
        if !(x.is_finite() && y.is_finite() && radius.is_finite() && radius >= 0.0) {
            return Err(Error::InvalidInput(format!(
                "a brush needs a finite centre and radius, got ({x}, {y}) and {radius}"
            )));
        }
        let (w, h) = (self.setup.width as f32, self.setup.height as f32);
        let mut agents = self.agents()?;
        let trail = self.trail()?;
        let n = agents.len();
        let count = (count as usize).min(n);
        let salt = mix32(self.steps_done as u32 ^ 0x2c1b_3c6d);
        for k in 0..count {
            let i = (self.dropped + k) % n;
            let base = mix32(salt ^ mix32(i as u32));
            let u = |j: u32| unit_f32(mix32(base.wrapping_add(j.wrapping_mul(0x9e37_79b9))));
            let (r, angle) = (radius * u(1).sqrt(), u(2) * TAU);
            agents.y[i] = kernels::physarum::wrap_coord(y + r * angle.sin(), h);
            agents.x[i] = kernels::physarum::wrap_coord(x + r * angle.cos(), w);
            agents.heading[i] = u(3) * TAU;
        }
        self.dropped = (self.dropped + count) % n.max(1);
        self.engine.set_state(&agents, &trail, self.steps_done as u32)
    }

    pub fn engine(&mut self) -> &mut dyn PhysarumEngine {
        self.engine.as_mut()
    }

    /// The parameters a checkpoint must share with the run it resumes: the model's, the
    /// agent count and the seed (which seeds every step's random numbers); the starting
    /// layout and image do not matter once the state is restored.
    fn checkpoint_params(&self) -> Vec<(String, String)> {
        let s = &self.setup;
        let mut params: Vec<(String, String)> = [
            ("sensor-dist", s.sensor_dist),
            ("sensor-angle", s.sensor_angle),
            ("step-size", s.step_size),
            ("deposit", s.deposit),
            ("diffuse", s.diffuse),
            ("decay", s.decay),
            ("jitter", s.jitter),
        ]
        .map(|(name, value)| checkpoint::param(name, value))
        .to_vec();
        params.push(checkpoint::param("agents", s.agents));
        params.push(checkpoint::param("sensing", s.sensing));
        params.push(checkpoint::param("seed", s.seed));
        params
    }

    /// The whole state (agents by id, trail, step count and the random-number step counter)
    /// as a checkpoint.
    pub fn checkpoint(&mut self) -> Result<Checkpoint> {
        let (w, h) = (self.setup.width, self.setup.height);
        let agents = self.agents()?;
        let mut c =
            Checkpoint::new(Simulation::Physarum, [w, h, 1], self.steps_done, self.checkpoint_params());
        // Both backends count their random-number step from 0 with every step.
        c.counters = vec![("rng-step".into(), u64::from(self.steps_done as u32))];
        c.arrays = vec![
            ("trail".into(), self.trail()?),
            ("agent-y".into(), agents.y),
            ("agent-x".into(), agents.x),
            ("agent-heading".into(), agents.heading),
        ];
        Ok(c)
    }

    /// Writes [`Physarum::checkpoint`] to `path` (replacing the file there only once the new
    /// one is complete).
    pub fn save_checkpoint(&mut self, path: &Path) -> Result<PathBuf> {
        self.checkpoint()?.write(path)
    }

    /// Continues from `checkpoint`: refuses one of another simulation, grid or parameter
    /// set, else replaces agents, trail, step count and random-number counter.
    pub fn restore(&mut self, mut checkpoint: Checkpoint) -> Result<()> {
        let (w, h) = (self.setup.width, self.setup.height);
        checkpoint.check(Simulation::Physarum, [w, h, 1], &self.checkpoint_params())?;
        let n = self.setup.agents as usize;
        let trail = checkpoint.take_array("trail", self.setup.cells())?;
        let agents = Agents {
            y: checkpoint.take_array("agent-y", n)?,
            x: checkpoint.take_array("agent-x", n)?,
            heading: checkpoint.take_array("agent-heading", n)?,
        };
        let step = checkpoint.counter("rng-step")?;
        self.engine.set_state(&agents, &trail, step as u32)?;
        self.steps_done = checkpoint.steps;
        Ok(())
    }

    /// Reads the checkpoint at `path` and [`restore`](Physarum::restore)s it.
    pub fn resume_from(&mut self, path: &Path) -> Result<()> {
        self.restore(Checkpoint::read(path)?)
    }
}

/// The write-up's linear toy model `x ← A·x`, `A = [[1−β, α], [γ, 1−κ]]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ToyModel {
    pub alpha: f64,
    pub beta: f64,
    pub gamma: f64,
    pub kappa: f64,
}

/// What the toy model says about sensitivity.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ToyAnalysis {
    /// The eigenvalues (re, im), larger real part first.
    pub eigenvalues: [(f64, f64); 2],
    /// Spectral radius ρ(A).
    pub spectral_radius: f64,
    /// log ρ(A): the Lyapunov exponent per step.
    pub lyapunov: f64,
    /// αγ > βκ: the feedback loop beats the damping.
    pub feedback_wins: bool,
}

impl ToyModel {
    /// Eigenvalues from the quadratic formula: (2 − β − κ ± √((β − κ)² + 4αγ)) / 2.
    pub fn analyse(&self) -> ToyAnalysis {
        let mean = (2.0 - self.beta - self.kappa) / 2.0;
        let disc = (self.beta - self.kappa).powi(2) + 4.0 * self.alpha * self.gamma;
        let eigenvalues = if disc >= 0.0 {
            let r = disc.sqrt() / 2.0;
            [(mean + r, 0.0), (mean - r, 0.0)]
        } else {
            let r = (-disc).sqrt() / 2.0;
            [(mean, r), (mean, -r)]
        };
        let spectral_radius = eigenvalues.iter().map(|(re, im)| re.hypot(*im)).fold(0.0, f64::max);
        ToyAnalysis {
            eigenvalues,
            spectral_radius,
            lyapunov: spectral_radius.ln(),
            feedback_wins: self.alpha * self.gamma > self.beta * self.kappa,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toy_model_matches_a_hand_computed_case() {
        // A = [[0.9, 0.2], [0.3, 0.8]]: trace 1.7, det 0.66, λ = (1.7 ± √(2.89 − 2.64))/2 = 1.1, 0.6.
        let a = ToyModel { alpha: 0.2, beta: 0.1, gamma: 0.3, kappa: 0.2 }.analyse();
        assert!((a.eigenvalues[0].0 - 1.1).abs() < 1e-12 && (a.eigenvalues[1].0 - 0.6).abs() < 1e-12);
        assert!((a.spectral_radius - 1.1).abs() < 1e-12);
        assert!((a.lyapunov - 1.1f64.ln()).abs() < 1e-12);
        assert!(a.feedback_wins); // 0.06 > 0.02
        // Damped: αγ = 0.01 < βκ = 0.25 and ρ < 1.
        let d = ToyModel { alpha: 0.1, beta: 0.5, gamma: 0.1, kappa: 0.5 }.analyse();
        assert!(!d.feedback_wins && d.spectral_radius < 1.0 && d.lyapunov < 0.0);
        assert!((d.spectral_radius - 0.6).abs() < 1e-12); // 0.5 ± 0.1
    }

    #[test]
    fn presets_are_valid_and_writeup_is_the_default_model() {
        for p in PHYSARUM_PRESETS {
            p.apply(PhysarumSetup::default()).validate().unwrap();
        }
        let writeup = physarum_preset("writeup").unwrap().apply(PhysarumSetup::default());
        assert_eq!(writeup.params(), PhysarumSetup::default().params());
        assert_eq!(PHYSARUM_PRESETS[0].name, "network");
        assert!(
            physarum_preset("jones-narrow").unwrap().turn_angle
                > physarum_preset("jones-narrow").unwrap().sensor_angle
        );
    }

    #[test]
    fn agents_turn_by_the_turn_angle_not_the_sensor_angle() {
        // Trail only under the left sensor: the agent turns left by 0.2 and moves that way.
        let setup = PhysarumSetup {
            width: 64,
            height: 64,
            agents: 1,
            sensor_angle: 0.5,
            turn_angle: 0.2,
            ..Default::default()
        };
        let p = setup.params();
        let (y, x, heading) = (32.0f32, 32.0f32, 0.0f32);
        let left = kernels::physarum::sensor_dirs(heading, &p)[1];
        let (ly, lx) = kernels::physarum::ahead(y, x, left, p.sensor_dist, &p);
        let mut trail = vec![0.0f32; 64 * 64];
        trail[kernels::physarum::cell_of(ly, lx, &p)] = 1.0;
        let (ny, nx, nh) = kernels::physarum::agent_step(&|c: usize| trail[c], y, x, heading, 0, 0, &p);
        assert!((nh - 0.2).abs() < 1e-6, "heading {nh}");
        assert!(
            (ny - (y + 0.2f32.sin())).abs() < 1e-5 && (nx - (x + 0.2f32.cos())).abs() < 1e-5,
            "({ny}, {nx})"
        );
    }

    #[test]
    fn trail_levels_put_the_mean_in_the_middle() {
        let levels = trail_levels(&[0.0, 1.0, 3.0]); // mean 4/3
        assert_eq!(levels[0], 0);
        assert_eq!(levels[1], (255.0f32 * (1.0 / (1.0 + 4.0 / 3.0))).round() as u8);
        assert!(levels[2] > 128);
        assert_eq!(trail_levels(&[0.0; 4]), vec![0; 4]);
    }
}
