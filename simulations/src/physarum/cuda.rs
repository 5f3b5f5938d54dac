//! The CUDA backend of Physarum, and one launcher per kernel of `kernels::physarum` (public,
//! so GPU tests can run each kernel alone against the CPU).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use cudarc::driver::{CudaSlice, LaunchConfig};
use kernels::physarum::{
    OPTIMIZED_BIN_SHIFT, Params, TRAIL_H, TRAIL_TILE, TRAIL_W, physarum_agents, physarum_agents_deposit,
    physarum_agents_move, physarum_argmax, physarum_bin_count, physarum_bin_scan, physarum_bin_scatter,
    physarum_blend, physarum_blur, physarum_decay, physarum_deposit, physarum_deposit_soa,
    physarum_diffuse_decay, physarum_distance, physarum_move, physarum_offsets, physarum_sample,
    physarum_sense_move, physarum_steer, physarum_trail, physarum_trail_deposited, physarum_trail_once,
};

use super::{Agents, PhysarumEngine, PhysarumVariant};
use crate::{
    cuda::{Gpu, grid_1d, grid_2d},
    error::{CudaContext as _, Result},
};

/// Threads per block of the per-agent kernels.
pub const AGENT_BLOCK: u32 = 256;
/// Block of the one-thread-per-cell trail kernels.
pub const CELL_BLOCK: (u32, u32) = (32, 8);

/// Agent state on the device, in the layout of the variant (one per engine, so the size
/// difference between variants does not matter).
#[allow(clippy::large_enum_variant)]
enum DeviceAgents {
    /// The write-up's layout: positions interleaved (y, x), headings apart.
    Interleaved { pos: CudaSlice<f32>, heading: CudaSlice<f32> },
    /// Struct of arrays, with ids, kept binned by tile (optimized); after a binning
    /// `bins[b]` is the end of bin b's slots.
    Binned { now: SoaAgents, spare: SoaAgents, bins: CudaSlice<u32> },
}

/// How the optimized variant bins its agents and deposits (candidates compared by `bench physarum` with
/// `RUST_GPU_SIM_PHYSARUM_CANDIDATES` set).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OptimizedSettings {
    /// log2 of the side of the tiles agents are binned by.
    pub bin_shift: u32,
    /// Steps between binnings.
    pub bin_every: u32,
    /// How the agents' deposits reach the trail.
    pub deposits: Deposits,
}

/// How the optimized variant's agents deposit (all bit-identical to the CPU).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Deposits {
    /// Counted with integer atomics (`physarum_agents`), added by the trail pass
    /// (`physarum_trail`).
    Counted,
    /// Added as floats to a copy of the trail in the agent pass (`physarum_agents_deposit`);
    /// the trail pass (`physarum_trail_deposited`) writes the new trail and that copy.
    Copy,
    /// Added as floats to the trail itself by a pass of their own after the agent pass
    /// (`physarum_agents_move`, `physarum_deposit_soa`); the trail pass (`physarum_trail_once`)
    /// writes the new trail once.
    InPlace,
}

impl Deposits {
    /// The suffix of a setting's label.
    fn label(self) -> &'static str {
        match self {
            Self::Counted => "",
            Self::Copy => "d",
            Self::InPlace => "i",
        }
    }
}

impl OptimizedSettings {
    /// The settings for `agents` agents on `cells` cells: from one agent per cell up, 8×8 bins
    /// and counted deposits; below, 16×16 bins and float deposits, into a copy of the trail,
    /// or in place below [`IN_PLACE_DENSITY`]. (On an H200 at 2048², with 10M agents 8×8 bins
    /// were 1.5-2.6% faster per step than 16×16 in four bench runs and float deposits 31%
    /// slower; with 1M agents 16×16 bins were 2-4% faster and float deposits 6% faster. The
    /// threshold between the two densities measured is a choice. In-place deposits: see
    /// [`IN_PLACE_DENSITY`].)
    pub fn for_density(agents: u32, cells: u64) -> Self {
        let agents = u64::from(agents);
        let dense = agents >= cells;
        let deposits = if dense {
            Deposits::Counted
        } else if agents * IN_PLACE_DENSITY.1 < cells * IN_PLACE_DENSITY.0 {
            Deposits::InPlace
        } else {
            Deposits::Copy
        };
        Self {
            bin_shift: if dense { OPTIMIZED_BIN_SHIFT } else { OPTIMIZED_BIN_SHIFT + 1 },
            bin_every: BIN_EVERY,
            deposits,
        }
    }
}

/// Agents per cell (numerator, denominator) below which deposits are added in place
/// ([`Deposits::InPlace`]): 1/4. On an H100 at 2048² (`bench physarum`, three rounds in one
/// run, 2026-12-07) in-place deposits took 0.0475-0.0481 ms a step with 1M agents against
/// 0.0488-0.0494 for a copy (2.6% less), and 0.1320-0.1324 ms with 4M against 0.1140-0.1143
/// (16% more): they save a 4-byte write a cell in the trail pass and cost a pass over the
/// agents whose float reductions no longer overlap the agents' other work. A line through
/// those two points (modelled) crosses at about 0.29 agents a cell.
pub const IN_PLACE_DENSITY: (u64, u64) = (1, 4);

/// The widest bins the optimized variant takes: tiles of 2¹⁰ = 1024 cells a side.
pub const MAX_BIN_SHIFT: u32 = 10;

impl OptimizedSettings {
    /// Refuses settings the kernels cannot bin by: a side past `1 << MAX_BIN_SHIFT` (a shift of
    /// 32 or more would overflow the kernels' `1 << shift`) or a binning every 0 steps.
    pub fn check(&self) -> Result<()> {
        if self.bin_shift > MAX_BIN_SHIFT || self.bin_every == 0 {
            return Err(crate::error::invalid!(
                "optimized settings: bins of 2^{} cells a side (at most 2^{MAX_BIN_SHIFT}), binned every {} steps (at least 1)",
                self.bin_shift,
                self.bin_every
            ));
        }
        Ok(())
    }
}

impl std::fmt::Display for OptimizedSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "b{}e{}{}", 1 << self.bin_shift, self.bin_every, self.deposits.label())
    }
}

/// One struct-of-arrays copy of the agents.
pub struct SoaAgents {
    pub y: CudaSlice<f32>,
    pub x: CudaSlice<f32>,
    pub heading: CudaSlice<f32>,
    pub ids: CudaSlice<u32>,
}

/// Steps between two binnings of the optimized variant's agents (they move at most
/// `step_size` per step, so they stay near their tile for a while).
pub const BIN_EVERY: u32 = 16;

/// Scratch of the unfused variant: every intermediate of the PyTorch-style step.
struct Unfused {
    dirs: CudaSlice<f32>,
    readings: CudaSlice<f32>,
    turns: CudaSlice<i32>,
}

/// Physarum on a GPU.
pub struct CudaPhysarum {
    gpu: Arc<Gpu>,
    variant: PhysarumVariant,
    params: Params,
    n: u32,
    agents: DeviceAgents,
    trail: CudaSlice<f32>,
    /// The second trail: diffusion's output (fused, optimized) or the blur (unfused).
    scratch: CudaSlice<f32>,
    /// Optimized: deposit counts, used in turn (see `physarum_trail`).
    counts: [CudaSlice<u32>; 2],
    /// Optimized with float deposits into a copy: the trail the agents deposit into (a copy of `trail`
    /// plus this step's deposits), and its partner, which the trail pass fills.
    pending: Option<[CudaSlice<f32>; 2]>,
    /// Optimized: how it bins, and whether the next step must re-bin.
    settings: OptimizedSettings,
    rebin: bool,
    /// Whether a view of the trail was handed out since the last step ([`PhysarumEngine::views`]):
    /// its holder may have written the trail (Python, through DLPack), so with deposits into a
    /// copy the next step first makes the copy the trail again.
    views_out: AtomicBool,
    unfused: Option<Unfused>,
    step: u32,
}

impl CudaPhysarum {
    pub fn new(
        gpu: Arc<Gpu>,
        variant: PhysarumVariant,
        params: Params,
        agents: &Agents,
        trail: &[f32],
    ) -> Result<Self> {
        // The kernels index the agents and the trail by the agent count and the grid.
        super::engine::check_state(agents, trail, agents.len(), &params)?;
        let stream = gpu.stream().clone();
        let n = agents.len();
        let cells = trail.len();
        let upload = |v: &[f32]| stream.clone_htod(v).context(|| "uploading the agents".into());
        let zeros_f32 = |len: usize| stream.alloc_zeros::<f32>(len).context(|| "allocating scratch".into());
        let zeros_u32 = |len: usize| stream.alloc_zeros::<u32>(len).context(|| "allocating counts".into());
        let ids: Vec<u32> = (0..n as u32).collect();
        let soa = || -> Result<SoaAgents> {
            Ok(SoaAgents {
                y: upload(&agents.y)?,
                x: upload(&agents.x)?,
                heading: upload(&agents.heading)?,
                ids: stream.clone_htod(&ids).context(|| "uploading the agents".into())?,
            })
        };
        let settings = OptimizedSettings::for_density(n as u32, cells as u64);
        let device_agents = match variant {
            PhysarumVariant::Optimized => DeviceAgents::Binned {
                now: soa()?,
                spare: soa()?,
                bins: zeros_u32(kernels::physarum::bin_count(&params, settings.bin_shift) as usize)?,
            },
            _ => {
                let pos: Vec<f32> = agents.y.iter().zip(&agents.x).flat_map(|(&y, &x)| [y, x]).collect();
                DeviceAgents::Interleaved { pos: upload(&pos)?, heading: upload(&agents.heading)? }
            }
        };
        let optimized = variant == PhysarumVariant::Optimized;
        let unfused = if variant == PhysarumVariant::Unfused {
            Some(Unfused {
                dirs: zeros_f32(6 * n)?,
                readings: zeros_f32(3 * n)?,
                turns: stream.alloc_zeros::<i32>(n).context(|| "allocating turns".into())?,
            })
        } else {
            None
        };
        let mut engine = Self {
            variant,
            params,
            n: n as u32,
            agents: device_agents,
            trail: stream.clone_htod(trail).context(|| "uploading the trail".into())?,
            scratch: zeros_f32(cells)?,
            counts: [
                zeros_u32(if optimized { cells } else { 1 })?,
                zeros_u32(if optimized { cells } else { 1 })?,
            ],
            unfused,
            settings,
            pending: None,
            rebin: true,
            views_out: AtomicBool::new(false),
            step: 0,
            gpu,
        };
        engine.reset_deposits()?;
        Ok(engine)
    }

    fn step_once(&mut self) -> Result<()> {
        let (g, p, n, step) = (&self.gpu, self.params, self.n, self.step);
        match (&mut self.agents, self.variant) {
            (DeviceAgents::Interleaved { pos, heading }, PhysarumVariant::Fused) => {
                launch_sense_move(g, pos, heading, &self.trail, n, step, p)?;
                launch_deposit(g, pos, &mut self.trail, n, p)?;
                launch_diffuse_decay(g, &self.trail, &mut self.scratch, p)?;
                std::mem::swap(&mut self.trail, &mut self.scratch);
            }
            (DeviceAgents::Interleaved { pos, heading }, PhysarumVariant::Unfused) => {
                let s = self.unfused.as_mut().expect("unfused scratch");
                launch_offsets(g, heading, &mut s.dirs, n, p)?;
                launch_sample(g, pos, &s.dirs, &self.trail, &mut s.readings, n, p)?;
                launch_argmax(g, &s.readings, &mut s.turns, n, step, p)?;
                launch_steer(g, heading, &s.turns, n, step, p)?;
                launch_move(g, pos, &s.dirs, &s.turns, heading, n, p)?;
                launch_deposit(g, pos, &mut self.trail, n, p)?;
                launch_blur(g, &self.trail, &mut self.scratch, p)?;
                launch_blend(g, &mut self.trail, &self.scratch, p)?;
                launch_decay(g, &mut self.trail, p)?;
            }
            (DeviceAgents::Binned { now: agents, spare, bins }, PhysarumVariant::Optimized) => {
                let settings = self.settings;
                if self.rebin || step % settings.bin_every == 0 {
                    bin_agents(g, agents, spare, bins, n, p, settings.bin_shift)?;
                    std::mem::swap(agents, spare);
                    self.rebin = false;
                }
                let [now, last] = &mut self.counts;
                if step % 2 == 1 {
                    std::mem::swap(now, last);
                }
                let SoaAgents { y, x, heading, ids } = agents;
                match settings.deposits {
                    Deposits::Copy => {
                        let [pending, next] =
                            self.pending.as_mut().expect("reset_deposits allocates the pending trails");
                        launch_agents_deposit(g, y, x, heading, ids, &self.trail, pending, n, step, p)?;
                        launch_trail_deposited(g, pending, &mut self.scratch, next, p)?;
                        std::mem::swap(pending, next);
                    }
                    Deposits::InPlace => {
                        launch_agents_move(g, y, x, heading, ids, &self.trail, n, step, p)?;
                        launch_deposit_soa(g, y, x, &mut self.trail, n, p)?;
                        launch_trail_once(g, &self.trail, &mut self.scratch, p)?;
                    }
                    Deposits::Counted => {
                        launch_agents(g, y, x, heading, ids, &self.trail, now, n, step, p)?;
                        launch_trail(g, &self.trail, now, last, &mut self.scratch, p)?;
                    }
                }
                if step % 2 == 1 {
                    std::mem::swap(now, last);
                }
                std::mem::swap(&mut self.trail, &mut self.scratch);
            }
            _ => unreachable!("agent layout chosen by variant in new()"),
        }
        self.step = self.step.wrapping_add(1);
        Ok(())
    }

    /// Overwrites agents, trail and step counter (restoring a checkpoint). The optimized
    /// variant's agents go back in id order (they are re-binned at the next binning step; the
    /// results do not depend on where an agent is stored) and both deposit-count buffers are
    /// cleared, as they are between steps for the one the next step counts into. A state of
    /// another size is refused before anything is copied.
    pub fn upload_state(&mut self, agents: &Agents, trail: &[f32], step: u32) -> Result<()> {
        super::engine::check_state(agents, trail, self.n as usize, &self.params)?;
        let stream = self.gpu.stream().clone();
        let up = |what: &'static str| move || format!("uploading the {what}");
        stream.memcpy_htod(trail, &mut self.trail).context(up("trail"))?;
        match &mut self.agents {
            DeviceAgents::Binned { now, .. } => {
                let ids: Vec<u32> = (0..self.n).collect();
                stream.memcpy_htod(&agents.y, &mut now.y).context(up("agents"))?;
                stream.memcpy_htod(&agents.x, &mut now.x).context(up("agents"))?;
                stream.memcpy_htod(&agents.heading, &mut now.heading).context(up("agents"))?;
                stream.memcpy_htod(&ids, &mut now.ids).context(up("agents"))?;
                self.reset_deposits()?;
                // The host slices are borrowed: the copies must be done before returning.
                self.gpu.synchronize()?;
            }
            DeviceAgents::Interleaved { pos, heading } => {
                let interleaved: Vec<f32> =
                    agents.y.iter().zip(&agents.x).flat_map(|(&y, &x)| [y, x]).collect();
                stream.memcpy_htod(&interleaved, pos).context(up("agents"))?;
                stream.memcpy_htod(&agents.heading, heading).context(up("agents"))?;
                self.gpu.synchronize()?;
            }
        }
        self.step = step;
        Ok(())
    }

    /// The optimized variant's settings (replaced for comparisons: `bench physarum`).
    pub fn settings(&self) -> OptimizedSettings {
        self.settings
    }

    /// Replaces the optimized variant's settings; the next step re-bins the agents. Refuses
    /// bins wider than [`MAX_BIN_SHIFT`] allows and a binning every 0 steps.
    pub fn set_settings(&mut self, settings: OptimizedSettings) -> Result<()> {
        settings.check()?;
        if let DeviceAgents::Binned { bins, .. } = &mut self.agents {
            let count = kernels::physarum::bin_count(&self.params, settings.bin_shift) as usize;
            *bins = self.gpu.stream().alloc_zeros::<u32>(count).context(|| "allocating the bins".into())?;
        }
        self.settings = settings;
        self.rebin = true;
        self.reset_deposits()
    }

    /// Between steps, no deposit is outstanding: both count buffers zero and, with deposits
    /// into a copy ([`Deposits::Copy`]), the pending trail a copy of the trail (allocated on
    /// first use).
    fn reset_deposits(&mut self) -> Result<()> {
        if self.variant != PhysarumVariant::Optimized {
            return Ok(());
        }
        let stream = self.gpu.stream().clone();
        for counts in &mut self.counts {
            stream.memset_zeros(counts).context(|| "clearing the counts".into())?;
        }
        if self.settings.deposits == Deposits::Copy && self.pending.is_none() {
            let alloc =
                || stream.alloc_zeros::<f32>(self.trail.len()).context(|| "allocating a trail".into());
            self.pending = Some([alloc()?, alloc()?]);
        }
        self.refresh_pending()
    }

    /// With deposits into a copy, makes the copy the trail (as it is between steps).
    fn refresh_pending(&mut self) -> Result<()> {
        if let (Deposits::Copy, Some([pending, _])) = (self.settings.deposits, &mut self.pending) {
            let stream = self.gpu.stream();
            stream.memcpy_dtod(&self.trail, pending).context(|| "copying the trail".into())?;
        }
        Ok(())
    }

    /// The device trail (for GPU-side comparisons).
    pub fn device_trail(&self) -> &CudaSlice<f32> {
        &self.trail
    }

    pub fn gpu(&self) -> &Arc<Gpu> {
        &self.gpu
    }
}

impl PhysarumEngine for CudaPhysarum {
    fn views(&self) -> Result<Vec<crate::view::FieldView>> {
        let shape = vec![self.params.height as usize, self.params.width as usize];
        self.views_out.store(true, Ordering::Relaxed);
        Ok(vec![crate::view::FieldView::cuda("trail", shape, &self.trail, &self.gpu)])
    }

    fn step(&mut self, steps: u32) -> Result<()> {
        if steps > 0 && self.views_out.swap(false, Ordering::Relaxed) {
            self.refresh_pending()?;
        }
        for _ in 0..steps {
            self.step_once()?;
        }
        Ok(())
    }

    fn trail(&mut self) -> Result<Vec<f32>> {
        let t = self.gpu.stream().clone_dtoh(&self.trail).context(|| "downloading the trail".into())?;
        self.gpu.synchronize()?;
        Ok(t)
    }

    fn agents(&mut self) -> Result<Agents> {
        let stream = self.gpu.stream().clone();
        let down = |s: &CudaSlice<f32>| stream.clone_dtoh(s).context(|| "downloading the agents".into());
        let agents = match &self.agents {
            DeviceAgents::Binned { now, .. } => {
                // Stored in bin order: put each agent back at its id.
                let (y, x, heading) = (down(&now.y)?, down(&now.x)?, down(&now.heading)?);
                let ids = stream.clone_dtoh(&now.ids).context(|| "downloading the agents".into())?;
                self.gpu.synchronize()?;
                let mut agents =
                    Agents { y: vec![0.0; y.len()], x: vec![0.0; y.len()], heading: vec![0.0; y.len()] };
                for (slot, &id) in ids.iter().enumerate() {
                    let id = id as usize;
                    (agents.y[id], agents.x[id], agents.heading[id]) = (y[slot], x[slot], heading[slot]);
                }
                agents
            }
            DeviceAgents::Interleaved { pos, heading } => {
                let pos = down(pos)?;
                Agents {
                    y: pos.iter().step_by(2).copied().collect(),
                    x: pos.iter().skip(1).step_by(2).copied().collect(),
                    heading: down(heading)?,
                }
            }
        };
        self.gpu.synchronize()?;
        Ok(agents)
    }

    fn set_state(&mut self, agents: &Agents, trail: &[f32], step: u32) -> Result<()> {
        self.upload_state(agents, trail, step)
    }

    /// The launches take the parameters by value at each step; the grid, which sizes the
    /// trail, the counts and the bins, must stay.
    fn set_params(&mut self, params: Params) -> Result<()> {
        super::engine::check_same_grid(&self.params, &params)?;
        self.params = params;
        Ok(())
    }

    fn synchronize(&mut self) -> Result<()> {
        Ok(self.gpu.synchronize()?)
    }

    fn describe(&self) -> String {
        format!("cuda {} ({})", self.variant.name(), self.gpu.name())
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

fn agent_grid(n: u32) -> LaunchConfig {
    grid_1d(n, AGENT_BLOCK)
}

/// Blocks of 32 × 8 threads, one per 32 × 32 tile, for the optimized trail passes.
fn trail_grid(p: &Params) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (p.width.div_ceil(TRAIL_TILE), p.height.div_ceil(TRAIL_TILE), 1),
        block_dim: (TRAIL_W, TRAIL_H, 1),
        shared_mem_bytes: 0,
    }
}

fn cell_grid(p: &Params) -> LaunchConfig {
    grid_2d(p.width, p.height, CELL_BLOCK)
}

fn cells(p: &Params) -> u32 {
    p.width * p.height
}

/// `physarum_offsets`: the three sensing directions of each agent.
pub fn launch_offsets(
    gpu: &Gpu,
    heading: &CudaSlice<f32>,
    dirs: &mut CudaSlice<f32>,
    n: u32,
    p: Params,
) -> Result<()> {
    Ok(gpu.launch(physarum_offsets, agent_grid(n), (heading, dirs, n, p))?)
}

/// `physarum_sample`: the three readings of each agent.
pub fn launch_sample(
    gpu: &Gpu,
    pos: &CudaSlice<f32>,
    dirs: &CudaSlice<f32>,
    trail: &CudaSlice<f32>,
    readings: &mut CudaSlice<f32>,
    n: u32,
    p: Params,
) -> Result<()> {
    Ok(gpu.launch(physarum_sample, agent_grid(n), (pos, dirs, trail, readings, n, p))?)
}

/// `physarum_argmax`: the turn of each agent.
pub fn launch_argmax(
    gpu: &Gpu,
    readings: &CudaSlice<f32>,
    turns: &mut CudaSlice<i32>,
    n: u32,
    step: u32,
    p: Params,
) -> Result<()> {
    Ok(gpu.launch(physarum_argmax, agent_grid(n), (readings, turns, n, step, p))?)
}

/// `physarum_steer`: the new headings.
pub fn launch_steer(
    gpu: &Gpu,
    heading: &mut CudaSlice<f32>,
    turns: &CudaSlice<i32>,
    n: u32,
    step: u32,
    p: Params,
) -> Result<()> {
    Ok(gpu.launch(physarum_steer, agent_grid(n), (heading, turns, n, step, p))?)
}

/// `physarum_move`: the new positions.
pub fn launch_move(
    gpu: &Gpu,
    pos: &mut CudaSlice<f32>,
    dirs: &CudaSlice<f32>,
    turns: &CudaSlice<i32>,
    heading: &CudaSlice<f32>,
    n: u32,
    p: Params,
) -> Result<()> {
    Ok(gpu.launch(physarum_move, agent_grid(n), (pos, dirs, turns, heading, n, p))?)
}

/// `physarum_deposit`: float atomics onto the trail.
pub fn launch_deposit(
    gpu: &Gpu,
    pos: &CudaSlice<f32>,
    trail: &mut CudaSlice<f32>,
    n: u32,
    p: Params,
) -> Result<()> {
    Ok(gpu.launch(physarum_deposit, agent_grid(n), (pos, trail, n, p))?)
}

/// `physarum_blur`: the 3×3 mean.
pub fn launch_blur(gpu: &Gpu, trail: &CudaSlice<f32>, mean: &mut CudaSlice<f32>, p: Params) -> Result<()> {
    Ok(gpu.launch(physarum_blur, cell_grid(&p), (trail, mean, p))?)
}

/// `physarum_blend`: `t ← (1−s)·t + s·mean`.
pub fn launch_blend(gpu: &Gpu, trail: &mut CudaSlice<f32>, mean: &CudaSlice<f32>, p: Params) -> Result<()> {
    let cells = cells(&p);
    Ok(gpu.launch(physarum_blend, grid_1d(cells, 256), (trail, mean, cells, p))?)
}

/// `physarum_decay`: `t ← t·(1−decay)`.
pub fn launch_decay(gpu: &Gpu, trail: &mut CudaSlice<f32>, p: Params) -> Result<()> {
    let cells = cells(&p);
    Ok(gpu.launch(physarum_decay, grid_1d(cells, 256), (trail, cells, p))?)
}

/// `physarum_sense_move`: sense, steer and move.
pub fn launch_sense_move(
    gpu: &Gpu,
    pos: &mut CudaSlice<f32>,
    heading: &mut CudaSlice<f32>,
    trail: &CudaSlice<f32>,
    n: u32,
    step: u32,
    p: Params,
) -> Result<()> {
    Ok(gpu.launch(physarum_sense_move, agent_grid(n), (pos, heading, trail, n, step, p))?)
}

/// `physarum_diffuse_decay`: `dst = decay(blend(src))`.
pub fn launch_diffuse_decay(
    gpu: &Gpu,
    src: &CudaSlice<f32>,
    dst: &mut CudaSlice<f32>,
    p: Params,
) -> Result<()> {
    Ok(gpu.launch(physarum_diffuse_decay, cell_grid(&p), (src, dst, p))?)
}

/// `physarum_agents`: sense, steer, move and count deposits (struct of arrays).
#[allow(clippy::too_many_arguments)]
pub fn launch_agents(
    gpu: &Gpu,
    y: &mut CudaSlice<f32>,
    x: &mut CudaSlice<f32>,
    heading: &mut CudaSlice<f32>,
    ids: &CudaSlice<u32>,
    trail: &CudaSlice<f32>,
    counts: &mut CudaSlice<u32>,
    n: u32,
    step: u32,
    p: Params,
) -> Result<()> {
    Ok(gpu.launch(physarum_agents, agent_grid(n), (y, x, heading, ids, trail, counts, n, step, p))?)
}

/// Bins `from`'s agents by tiles of side `1 << shift` into `to` (`physarum_bin_count`,
/// `_scan`, `_scatter`); `bins` ends up holding the end of each bin's slots.
pub fn bin_agents(
    gpu: &Gpu,
    from: &SoaAgents,
    to: &mut SoaAgents,
    bins: &mut CudaSlice<u32>,
    n: u32,
    p: Params,
    shift: u32,
) -> Result<()> {
    gpu.stream().memset_zeros(bins).context(|| "clearing the bins".into())?;
    gpu.launch(physarum_bin_count, agent_grid(n), (&from.y, &from.x, &mut *bins, n, p, shift))?;
    let count = kernels::physarum::bin_count(&p, shift);
    let one_block = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (kernels::physarum::SCAN_THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    gpu.launch(physarum_bin_scan, one_block, (&mut *bins, count))?;
    let SoaAgents { y, x, heading, ids } = to;
    let args = (&from.y, &from.x, &from.heading, &from.ids, &mut *bins, y, x, heading, ids, n, p, shift);
    Ok(gpu.launch(physarum_bin_scatter, agent_grid(n), args)?)
}

/// `physarum_agents_deposit`: `physarum_agents` adding float deposits to `deposited`.
#[allow(clippy::too_many_arguments)]
pub fn launch_agents_deposit(
    gpu: &Gpu,
    y: &mut CudaSlice<f32>,
    x: &mut CudaSlice<f32>,
    heading: &mut CudaSlice<f32>,
    ids: &CudaSlice<u32>,
    trail: &CudaSlice<f32>,
    deposited: &mut CudaSlice<f32>,
    n: u32,
    step: u32,
    p: Params,
) -> Result<()> {
    Ok(gpu.launch(
        physarum_agents_deposit,
        agent_grid(n),
        (y, x, heading, ids, trail, deposited, n, step, p),
    )?)
}

/// `physarum_agents_move`: `physarum_agents` without a deposit.
#[allow(clippy::too_many_arguments)]
pub fn launch_agents_move(
    gpu: &Gpu,
    y: &mut CudaSlice<f32>,
    x: &mut CudaSlice<f32>,
    heading: &mut CudaSlice<f32>,
    ids: &CudaSlice<u32>,
    trail: &CudaSlice<f32>,
    n: u32,
    step: u32,
    p: Params,
) -> Result<()> {
    Ok(gpu.launch(physarum_agents_move, agent_grid(n), (y, x, heading, ids, trail, n, step, p))?)
}

/// `physarum_deposit_soa`: every agent's deposit added to `trail` in place.
pub fn launch_deposit_soa(
    gpu: &Gpu,
    y: &CudaSlice<f32>,
    x: &CudaSlice<f32>,
    trail: &mut CudaSlice<f32>,
    n: u32,
    p: Params,
) -> Result<()> {
    Ok(gpu.launch(physarum_deposit_soa, agent_grid(n), (y, x, trail, n, p))?)
}

/// `physarum_trail_once`: diffusion and decay of `src` (deposits included) into `dst`.
pub fn launch_trail_once(gpu: &Gpu, src: &CudaSlice<f32>, dst: &mut CudaSlice<f32>, p: Params) -> Result<()> {
    Ok(gpu.launch(physarum_trail_once, trail_grid(&p), (src, dst, p))?)
}

/// `physarum_trail_deposited`: diffusion and decay of `src` (deposits included) into `dst`
/// and `copy`.
pub fn launch_trail_deposited(
    gpu: &Gpu,
    src: &CudaSlice<f32>,
    dst: &mut CudaSlice<f32>,
    copy: &mut CudaSlice<f32>,
    p: Params,
) -> Result<()> {
    Ok(gpu.launch(physarum_trail_deposited, trail_grid(&p), (src, dst, copy, p))?)
}

/// `physarum_trail`: deposits, diffusion and decay on 32 × 32 tiles; clears `clear`.
pub fn launch_trail(
    gpu: &Gpu,
    src: &CudaSlice<f32>,
    counts: &CudaSlice<u32>,
    clear: &mut CudaSlice<u32>,
    dst: &mut CudaSlice<f32>,
    p: Params,
) -> Result<()> {
    Ok(gpu.launch(physarum_trail, trail_grid(&p), (src, counts, clear, dst, p))?)
}

/// Blocks of `physarum_distance`'s grid-stride loop (enough to fill any current GPU).
pub const DISTANCE_BLOCKS: u32 = 1024;

/// `physarum_distance`: adds Σ(a − b)² to `out[0]`.
pub fn launch_distance(
    gpu: &Gpu,
    a: &CudaSlice<f32>,
    b: &CudaSlice<f32>,
    out: &mut cudarc::driver::CudaViewMut<f32>,
) -> Result<()> {
    let cells = a.len().min(b.len()) as u32;
    let cfg = LaunchConfig {
        grid_dim: (cells.div_ceil(kernels::physarum::DISTANCE_BLOCK).clamp(1, DISTANCE_BLOCKS), 1, 1),
        block_dim: (kernels::physarum::DISTANCE_BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    Ok(gpu.launch(physarum_distance, cfg, (a, b, cells, out))?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 8×8 bins and counts from one agent per cell up, 16×16 bins and float deposits below
    /// (into a copy down to a quarter of an agent per cell, in place below), binned every 16
    /// steps.
    #[test]
    fn bins_follow_the_density() {
        let cells = 2048 * 2048;
        assert_eq!(OptimizedSettings::for_density(10_000_000, cells).bin_shift, 3);
        assert_eq!(OptimizedSettings::for_density(1_000_000, cells).bin_shift, 4);
        assert_eq!(OptimizedSettings::for_density(4_194_304, cells).bin_shift, 3);
        assert_eq!(OptimizedSettings::for_density(4_194_303, cells).bin_shift, 4);
        assert_eq!(OptimizedSettings::for_density(0, 0).bin_shift, 3);
        assert_eq!(OptimizedSettings::for_density(5, 9).bin_every, BIN_EVERY);
        assert_eq!(OptimizedSettings::for_density(1_000_000, cells).deposits, Deposits::InPlace);
        assert_eq!(OptimizedSettings::for_density(1_048_575, cells).deposits, Deposits::InPlace);
        assert_eq!(OptimizedSettings::for_density(1_048_576, cells).deposits, Deposits::Copy);
        assert_eq!(OptimizedSettings::for_density(4_000_000, cells).deposits, Deposits::Copy);
        assert_eq!(OptimizedSettings::for_density(10_000_000, cells).deposits, Deposits::Counted);
    }

    /// Settings the kernels cannot bin by are refused; the densities' own and the widest pass.
    #[test]
    fn settings_past_the_kernels_are_refused() {
        for agents in [0, 1_000_000, 4_000_000, 10_000_000] {
            assert!(OptimizedSettings::for_density(agents, 2048 * 2048).check().is_ok());
        }
        let widest = OptimizedSettings { bin_shift: MAX_BIN_SHIFT, bin_every: 1, deposits: Deposits::Copy };
        assert!(widest.check().is_ok());
        for (bin_shift, bin_every) in [(MAX_BIN_SHIFT + 1, 16), (32, 16), (4, 0)] {
            let settings = OptimizedSettings { bin_shift, bin_every, deposits: Deposits::InPlace };
            let error = settings.check().unwrap_err().to_string();
            assert!(error.contains(&format!("2^{bin_shift} cells a side")), "{error}");
        }
    }
}
