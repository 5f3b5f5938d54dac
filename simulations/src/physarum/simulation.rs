//! A running Physarum simulation ([`Physarum`]): built, stepped, read, exported, steered
//! (model changes, dropped agents), checkpointed and restored.

use std::path::{Path, PathBuf};

use kernels::physarum::{TAU, mix32, unit_f32};

use super::{
    Agents, PhysarumEngine, PhysarumSetup, PhysarumVariant, cpu, cuda, initial_agents, initial_trail,
};
use crate::{
    Device,
    checkpoint::{self, Checkpoint, Simulation},
    error::{Error, Result},
    memory,
};

/// A running Physarum simulation.
pub struct Physarum {
    engine: Box<dyn PhysarumEngine>,
    pub(super) setup: PhysarumSetup,
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
        let (agents, cells) = (setup.agents, setup.cells() as u64);
        let host_agents = copies * 24 * u64::from(agents);
        memory::check_host_agents(w, h, agents, host_agents, copies * 12 * cells)?;
        if let (Device::Cuda(gpu), true) = (device, variant != PhysarumVariant::Cpu) {
            let (free, _) = gpu.memory()?;
            let grid = per_cell * cells + (64 << 20);
            memory::require_agents(w, h, agents, per_agent * u64::from(agents), grid, free, "GPU")?;
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

    /// Where the current trail map is, for zero-copy access (valid until the next step; see
    /// [`crate::view`]).
    pub fn views(&self) -> Result<Vec<crate::view::FieldView>> {
        self.engine.views()
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
        self.engine.set_params(setup.params())?;
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
            ("turn-angle", s.turn_angle),
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
        // Agents inside the grid (their cells are read and written by index), a trail of
        // non-negative deposits.
        let trail = checkpoint.take_array_where("trail", self.setup.cells(), "below 0", |t| t >= 0.0)?;
        let inside = |side: u32| move |p: f32| (0.0..side as f32).contains(&p);
        let agents = Agents {
            y: checkpoint.take_array_where("agent-y", n, &format!("outside [0, {h})"), inside(h))?,
            x: checkpoint.take_array_where("agent-x", n, &format!("outside [0, {w})"), inside(w))?,
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
