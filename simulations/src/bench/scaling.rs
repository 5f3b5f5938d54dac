//! Scaling over several GPUs: `bench grayscott --gpus 1,2,4` and `bench heat --gpus 1,2,4`
//! (the parts in this process), and the same benches under `mpirun -np N` (one part per
//! process, NCCL). Per configuration: time per step, strong- or weak-scaling efficiency
//! against one GPU measured in the same run, the exchange alone, and how much of it the step
//! does not hide.
//!
//! Method: a warm-up run (graph capture, NCCL's connections, peer mappings), then `repeats`
//! timed runs of a fixed number of steps, each between two synchronisations of every part
//! (and, between processes, a barrier before and the slowest rank's time after), median
//! reported. Host clocks around full synchronisations, not device events: the parts run on
//! several GPUs, and a run is long (0.1 s and up) next to a synchronisation.
//! - efficiency: strong `t(1) / (N · t(N))` on the same grid; weak `t(1) / t(N)` with the grid
//!   N times larger (Gray-Scott N times the rows, heat N times the planes);
//! - exchange: the halo exchanges alone (no steps), per step;
//! - exposed: time per step minus the time per step of the same parts stepped with no
//!   exchange at all (what the exchange and its ordering cost the step).

use std::{sync::Arc, time::Instant};

use serde::{Deserialize, Serialize};

use super::median;
use crate::{
    Device,
    cuda::Gpu,
    error::Result,
    grayscott::{self, GrayScott, Variant, parts::LaunchSettings, parts::PartedGrayScott},
    heat::{Heat, HeatInit, HeatSetup, HeatVariant, parts::PartedHeat},
    split::{BandedModel, Layout, Split, nccl::Communicator},
};

/// What to time.
#[derive(Clone, Copy, Debug)]
pub enum Workload {
    /// Gray-Scott on a `size × size` grid (weak: `size × N·size`).
    /// `overlap`: edge rows first, exchanged while the middle is stepped (NCCL ranks only).
    GrayScott { size: u32, variant: Variant, autotune: bool, overlap: bool },
    /// Heat on an `n³` cube (weak: `n × n × N·n`); `overlap` as asked, or `None` for the
    /// default on each GPU count ([`crate::heat::parts::overlap_by_default`]).
    Heat { n: u32, variant: HeatVariant, overlap: Option<bool> },
}

impl Workload {
    fn name(&self) -> String {
        match self {
            Workload::GrayScott { size, variant, overlap, .. } => {
                format!("grayscott {size}² {}{}", variant.name(), if *overlap { " overlap" } else { "" })
            }
            Workload::Heat { n, variant, overlap } => format!(
                "heat {n}³ {}{}",
                variant.name(),
                match overlap {
                    Some(true) => " overlap",
                    Some(false) => " no-overlap",
                    None => "",
                }
            ),
        }
    }

    /// Steps per timed run: a multiple of every halo depth up to 8 (840 = lcm(1..8)) for
    /// Gray-Scott, about 0.2 s on one H200 for heat.
    fn steps(&self) -> u32 {
        match self {
            Workload::GrayScott { size, .. } => {
                let cells = f64::from(*size).powi(2);
                840 * ((2e11 / cells / 840.0).round() as u32).clamp(1, 10)
            }
            Workload::Heat { n, .. } => ((4e10 / f64::from(*n).powi(3)) as u32).clamp(4, 400),
        }
    }

    /// The grid of a run on `gpus` GPUs, as text.
    fn grid(&self, gpus: u32, weak: bool) -> String {
        let k = if weak { gpus } else { 1 };
        match self {
            Workload::GrayScott { size, .. } => format!("{size}x{}", size * k),
            Workload::Heat { n, .. } => format!("{n}x{n}x{}", n * k),
        }
    }
}

/// One timed configuration.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ScalingRow {
    pub workload: String,
    /// `one GPU`, `local` (parts in one process) or `nccl` (one part per process).
    pub transport: String,
    pub gpus: u32,
    /// `strong` or `weak` (the grid grows with the GPUs).
    pub scaling: String,
    pub grid: String,
    pub steps_per_exchange: u32,
    pub steps: u32,
    pub ms_per_step: f64,
    pub min_ms_per_step: f64,
    pub max_ms_per_step: f64,
    /// Against the one-GPU row of the same workload in this run.
    pub efficiency: Option<f64>,
    pub exchange_ms_per_step: f64,
    pub exposed_ms_per_step: f64,
}

/// Time per step (median, min, max ms), the exchange alone and the exposed time per step.
struct Measured {
    timing: (f64, f64, f64),
    /// Steps between exchanges (0: one part, no exchange).
    halo: u32,
    exchange: f64,
    exposed: f64,
}

impl Measured {
    /// The median, least and most of `times` (ms per step).
    fn timing(mut times: Vec<f64>) -> (f64, f64, f64) {
        let (min, max) =
            (times.iter().copied().fold(f64::MAX, f64::min), times.iter().copied().fold(0.0, f64::max));
        (median(&mut times), min, max)
    }
}

/// Seconds of `run` between two synchronisations of every part of `split`; between
/// processes, after a barrier, the slowest rank's.
fn timed<M: BandedModel>(split: &mut Split<M>, run: impl FnOnce(&mut Split<M>) -> Result<()>) -> Result<f64> {
    split.synchronize()?;
    if let Some(comm) = split.communicator() {
        comm.max_f64(0.0, "the bench's barrier")?;
    }
    let start = Instant::now();
    run(split)?;
    split.synchronize()?;
    let seconds = start.elapsed().as_secs_f64();
    match split.communicator() {
        Some(comm) => comm.max_f64(seconds, "the bench's timing"),
        None => Ok(seconds),
    }
}

/// A split run: `steps` steps after a warm-up, `repeats` times; then the exchanges alone and
/// the parts stepped with none (last: it leaves stale halos in the fields).
fn measure<M: BandedModel>(split: &mut Split<M>, steps: u32, repeats: usize) -> Result<Measured> {
    timed(split, |s| s.step(steps))?;
    let mut times = Vec::with_capacity(repeats);
    for _ in 0..repeats {
        times.push(timed(split, |s| s.step(steps))? * 1e3 / f64::from(steps));
    }
    let timing = Measured::timing(times);
    let halo = if split.halo() == 0 { 0 } else { split.steps_per_exchange() };
    if halo == 0 {
        return Ok(Measured { timing, halo, exchange: 0.0, exposed: 0.0 });
    }
    let rounds = (steps / halo).max(1);
    let exchange =
        timed(split, |s| (0..rounds).try_for_each(|_| s.exchange()))? * 1e3 / f64::from(rounds * halo);
    let compute = timed(split, |s| s.compute_only(steps))? * 1e3 / f64::from(steps);
    Ok(Measured { timing, halo, exchange, exposed: timing.0 - compute })
}

/// The unsplit run on one GPU (no exchange): `run(steps)` steps and synchronises, after a
/// warm-up, `repeats` times.
fn measure_whole(mut run: impl FnMut(u32) -> Result<()>, steps: u32, repeats: usize) -> Result<Measured> {
    run(steps)?;
    let mut times = Vec::with_capacity(repeats);
    for _ in 0..repeats {
        let start = Instant::now();
        run(steps)?;
        times.push(start.elapsed().as_secs_f64() * 1e3 / f64::from(steps));
    }
    Ok(Measured { timing: Measured::timing(times), halo: 0, exchange: 0.0, exposed: 0.0 })
}

/// Where the parts of a configuration live.
pub enum Placement<'a> {
    /// The first `n` of these GPUs, in this process.
    Local(&'a [Arc<Gpu>]),
    /// One part per process (this rank's communicator, taken and given back).
    Ranks(&'a mut Option<Communicator>),
}

/// Builds and times `workload` on `gpus` GPUs (`weak`: the grid `gpus` times larger).
fn run_one(
    workload: Workload,
    placement: &mut Placement,
    gpus: u32,
    weak: bool,
    repeats: usize,
) -> Result<(Measured, u32)> {
    let factor = if weak { gpus } else { 1 };
    let steps = workload.steps();
    let layout = match placement {
        Placement::Local(list) => Layout::Local { gpus: list[..gpus as usize].to_vec(), split: gpus },
        Placement::Ranks(comm) => Layout::Ranks(comm.take().expect("the communicator is given back")),
    };
    let first = layout.first_gpu().expect("the bench's parts are on GPUs").clone();
    let measured = match workload {
        Workload::GrayScott { size, variant, autotune, overlap } => {
            let (w, h) = (size, size * factor);
            let overlap = overlap && matches!(layout, Layout::Ranks(_));
            let settings = LaunchSettings::for_layout(&layout, variant, w, h, autotune, overlap)?;
            let mut setup = grayscott::Setup::new(w, h, grayscott::preset("coral").expect("preset").rates());
            setup.init = grayscott::Init::Spots;
            let (u, v) = grayscott::initial_fields(setup.init, w, h, setup.seed);
            if gpus == 1 && matches!(placement, Placement::Local(_)) {
                let mut sim = GrayScott::with_settings(&setup, &Device::Cuda(first), variant, &settings)?;
                measure_whole(|n| sim.step(n).and_then(|()| sim.synchronize()), steps, repeats)?
            } else {
                let mut sim = PartedGrayScott::new(layout, variant, w, h, setup.rates, settings, &u, &v)?;
                drop((u, v));
                crate::stderr_line!("  {}", grayscott::Engine::describe(&sim));
                let m = measure(sim.split(), steps, repeats)?;
                give_back(placement, sim.into_communicator());
                m
            }
        }
        Workload::Heat { n, variant, overlap } => {
            let mut setup = HeatSetup::cube(n, HeatInit::Blobs);
            setup.n[2] = n * factor;
            if gpus == 1 && matches!(placement, Placement::Local(_)) {
                let mut sim = Heat::new(&setup, &Device::Cuda(first), variant)?;
                measure_whole(|n| sim.step(n).and_then(|()| sim.synchronize()), steps, repeats)?
            } else {
                let overlap =
                    overlap.unwrap_or(crate::heat::parts::overlap_by_default(variant, gpus as usize));
                let mut sim = PartedHeat::new(layout, variant, &setup, overlap)?;
                crate::stderr_line!("  {}", crate::heat::HeatEngine::describe(&sim));
                let m = measure(sim.split(), steps, repeats)?;
                give_back(placement, sim.into_communicator());
                m
            }
        }
    };
    Ok((measured, steps))
}

fn give_back(placement: &mut Placement, comm: Option<Communicator>) {
    if let (Placement::Ranks(slot), Some(comm)) = (placement, comm) {
        **slot = Some(comm);
    }
}

/// `bench ... --gpus 1,2,4` in one process: each workload on the first N of `gpus` for each
/// N of `counts` (strong), and with `weak` also on grids N times larger.
pub fn run_local(
    gpus: &[Arc<Gpu>],
    workloads: &[Workload],
    counts: &[u32],
    weak: bool,
    repeats: usize,
) -> Result<Vec<ScalingRow>> {
    let mut rows = Vec::new();
    for &workload in workloads {
        let mut base = None;
        for &n in counts {
            for weak_run in [false, true] {
                if weak_run && (!weak || n == 1) {
                    continue;
                }
                crate::stderr_line!(
                    "{} on {n} GPU(s){}...",
                    workload.name(),
                    if weak_run { ", weak" } else { "" }
                );
                let (m, steps) = run_one(workload, &mut Placement::Local(gpus), n, weak_run, repeats)?;
                if n == 1 {
                    base = Some(m.timing.0);
                }
                rows.push(row(
                    workload,
                    if n == 1 { "one GPU" } else { "local" },
                    n,
                    weak_run,
                    steps,
                    &m,
                    base,
                ));
            }
        }
    }
    Ok(rows)
}

/// The same bench as one of `size` processes (this one holding `comm`): rank 0 first times
/// one GPU alone (the others wait), then all time the workload together. Rows on rank 0
/// only.
pub fn run_ranks(
    mut comm: Communicator,
    workloads: &[Workload],
    weak: bool,
    repeats: usize,
) -> Result<Vec<ScalingRow>> {
    let (rank, size) = (comm.rank(), comm.size() as u32);
    let gpu = comm.gpu().clone();
    let mut rows = Vec::new();
    for &workload in workloads {
        let mut base = None;
        if rank == 0 {
            crate::stderr_line!("{} on one GPU (the other ranks wait)...", workload.name());
            let (m, steps) =
                run_one(workload, &mut Placement::Local(std::slice::from_ref(&gpu)), 1, false, repeats)?;
            base = Some(m.timing.0);
            rows.push(row(workload, "one GPU", 1, false, steps, &m, base));
        }
        comm.max_f64(0.0, "waiting for rank 0's one-GPU run")?;
        for weak_run in [false, true] {
            if weak_run && !weak {
                continue;
            }
            if rank == 0 {
                crate::stderr_line!(
                    "{} on {size} ranks{}...",
                    workload.name(),
                    if weak_run { ", weak" } else { "" }
                );
            }
            let mut slot = Some(comm);
            let (m, steps) = run_one(workload, &mut Placement::Ranks(&mut slot), size, weak_run, repeats)?;
            comm = slot.expect("the communicator came back");
            rows.push(row(workload, "nccl", size, weak_run, steps, &m, base));
        }
    }
    Ok(if rank == 0 { rows } else { Vec::new() })
}

fn row(
    workload: Workload,
    transport: &str,
    gpus: u32,
    weak: bool,
    steps: u32,
    m: &Measured,
    base: Option<f64>,
) -> ScalingRow {
    let ms = m.timing.0;
    let efficiency = base.map(|b| if weak { b / ms } else { b / (f64::from(gpus) * ms) });
    ScalingRow {
        workload: workload.name(),
        transport: transport.into(),
        gpus,
        scaling: if weak { "weak" } else { "strong" }.into(),
        grid: workload.grid(gpus, weak),
        steps_per_exchange: m.halo,
        steps,
        ms_per_step: ms,
        min_ms_per_step: m.timing.1,
        max_ms_per_step: m.timing.2,
        efficiency,
        exchange_ms_per_step: m.exchange,
        exposed_ms_per_step: m.exposed,
    }
}

/// The rows as a table.
pub fn table(rows: &[ScalingRow]) -> String {
    let mut out = format!(
        "{:<34} {:<8} {:>4} {:<6} {:>16} {:>10} {:>15} {:>7} {:>10} {:>10}\n",
        "workload", "how", "GPUs", "scale", "grid", "ms/step", "(min-max)", "eff.", "exch ms", "exposed ms"
    );
    for r in rows {
        out += &format!(
            "{:<34} {:<8} {:>4} {:<6} {:>16} {:>10.4} {:>15} {:>7} {:>10.4} {:>10.4}\n",
            r.workload,
            r.transport,
            r.gpus,
            r.scaling,
            r.grid,
            r.ms_per_step,
            format!("{:.4}-{:.4}", r.min_ms_per_step, r.max_ms_per_step),
            r.efficiency.map_or("-".into(), |e| format!("{:.1}%", 100.0 * e)),
            r.exchange_ms_per_step,
            r.exposed_ms_per_step,
        );
    }
    out += "(eff.: strong t1/(N·tN) on the same grid, weak t1/tN on an N times larger grid, against the one-GPU \
            row of this run; exch: the halo exchanges alone, per step; exposed: the step's time minus the same \
            parts stepped with no exchange)\n";
    out
}
