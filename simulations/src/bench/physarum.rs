//! `rust-gpu-sim bench physarum`: every Physarum GPU variant in agent-steps per second, and the
//! write-up's tiny case end to end.

use std::{sync::Arc, time::Instant};

use serde::{Deserialize, Serialize};

use super::{Machine, Measurements, Report, time_per_step};
use crate::{
    Device,
    cuda::Gpu,
    error::Result,
    physarum::{
        Physarum, PhysarumEngine, PhysarumSetup, PhysarumVariant,
        cuda::{CudaPhysarum, Deposits, OptimizedSettings},
        initial_agents, initial_trail,
    },
};

/// A Physarum bench run.
pub type PhysarumReport = Report<PhysarumBench>;

/// What `bench physarum` measured.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PhysarumBench {
    pub rows: Vec<PhysarumRow>,
    pub tiny: Vec<PhysarumTiny>,
}

/// One Physarum measurement.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PhysarumRow {
    pub variant: String,
    pub size: u32,
    pub agents: u32,
    pub ms_per_step: f64,
    #[serde(rename = "min_ms_per_step")]
    pub min_ms: f64,
    #[serde(rename = "max_ms_per_step")]
    pub max_ms: f64,
    pub agent_steps_per_s: f64,
    /// 24 B per agent (state read and written) + 8 B per cell (trail read and written) per
    /// step, over the time: the compulsory traffic at the measured rate.
    #[serde(rename = "effective_gb_per_s")]
    pub effective_gbps: f64,
}

/// The write-up's tiny case end to end: wall time from creating the simulation (upload
/// included) to the last step finished.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PhysarumTiny {
    pub variant: String,
    pub seconds: f64,
}

/// Set to time the optimized variant's candidate settings too: all of them, or those listed by label
/// (comma-separated, e.g. `b16e16i,b8e16i`).
pub const CANDIDATES_VAR: &str = "RUST_GPU_SIM_PHYSARUM_CANDIDATES";

/// The optimized variant's candidate settings (see [`OptimizedSettings`]).
const CANDIDATES: &[OptimizedSettings] = &[
    OptimizedSettings { bin_shift: 4, bin_every: 16, deposits: Deposits::InPlace },
    OptimizedSettings { bin_shift: 3, bin_every: 16, deposits: Deposits::InPlace },
    OptimizedSettings { bin_shift: 4, bin_every: 32, deposits: Deposits::Copy },
    OptimizedSettings { bin_shift: 5, bin_every: 16, deposits: Deposits::Copy },
    OptimizedSettings { bin_shift: 5, bin_every: 32, deposits: Deposits::Copy },
    OptimizedSettings { bin_shift: 3, bin_every: 16, deposits: Deposits::Copy },
    OptimizedSettings { bin_shift: 4, bin_every: 16, deposits: Deposits::Counted },
    OptimizedSettings { bin_shift: 3, bin_every: 16, deposits: Deposits::Counted },
    OptimizedSettings { bin_shift: 3, bin_every: 32, deposits: Deposits::Counted },
];

/// The candidate settings [`CANDIDATES_VAR`]'s value asks for: none when it is unset, all for
/// `1` (or nothing), else those whose labels it lists (comma-separated, e.g.
/// `b16e16i,b8e16i`); a label of no candidate is a mistake, named with the labels there are.
fn candidates_chosen(value: Option<&str>) -> Result<Vec<OptimizedSettings>> {
    let Some(value) = value.map(str::trim) else { return Ok(Vec::new()) };
    if value.is_empty() || value == "1" {
        return Ok(CANDIDATES.to_vec());
    }
    value
        .split(',')
        .map(|label| {
            let label = label.trim();
            CANDIDATES.iter().copied().find(|c| c.to_string() == label).ok_or_else(|| {
                let known: Vec<String> = CANDIDATES.iter().map(ToString::to_string).collect();
                crate::error::invalid!(
                    "{CANDIDATES_VAR}: no candidate setting is labelled {label:?} (1 for all, or some of {})",
                    known.join(",")
                )
            })
        })
        .collect()
}

/// Times every Physarum variant at each (size, agents) with device events (median of
/// `repeats` after a warm-up), then the write-up's tiny case (200 agents, 500 steps, 256²)
/// end to end, for the GPU variants and the CPU.
pub fn run(
    gpu: &Arc<Gpu>,
    sizes: &[u32],
    agent_counts: &[u32],
    variants: &[PhysarumVariant],
    repeats: usize,
) -> Result<PhysarumReport> {
    // With CANDIDATES_VAR set, the optimized variant is also timed with each candidate setting
    // (labelled `optimized:<setting>`), or with those it lists by label.
    let value = std::env::var_os(CANDIDATES_VAR).map(|v| v.to_string_lossy().into_owned());
    let candidates = candidates_chosen(value.as_deref())?;
    let candidates = candidates.as_slice();
    let machine = Machine::measure(gpu)?;
    let device = Device::Cuda(gpu.clone());
    let mut rows = Vec::new();
    for &size in sizes {
        for &agents in agent_counts {
            let setup = PhysarumSetup { width: size, height: size, agents, ..PhysarumSetup::default() };
            let runs = variants.iter().flat_map(|&v| {
                let extra = if v == PhysarumVariant::Optimized { candidates } else { &[] };
                std::iter::once((v, None)).chain(extra.iter().map(move |&c| (v, Some(c))))
            });
            for (variant, candidate) in runs {
                crate::stderr_line!("physarum {} {size}² {agents} agents...", variant.name());
                Physarum::check_memory(&setup, &device, variant, 1)?;
                let mut label = variant.name().to_string();
                let mut sim: Box<dyn PhysarumEngine> = match candidate {
                    None => Physarum::new(&setup, &device, variant)?.into_engine(),
                    Some(settings) => {
                        setup.validate()?;
                        let (agents, trail) = (initial_agents(&setup), initial_trail(&setup)?);
                        let mut sim =
                            CudaPhysarum::new(gpu.clone(), variant, setup.params(), &agents, &trail)?;
                        sim.set_settings(settings)?;
                        label = format!("{label}:{settings}");
                        Box::new(sim)
                    }
                };
                let steps = 20;
                // Warm-up: also lets the network form, so the timed steps see a real trail.
                sim.step(100)?;
                sim.synchronize()?;
                let timing = time_per_step(gpu, repeats, steps, |n| sim.step(n))?;
                let ms = timing.median_ms;
                let bytes = 24.0 * f64::from(agents) + 8.0 * f64::from(size) * f64::from(size);
                rows.push(PhysarumRow {
                    variant: label,
                    size,
                    agents,
                    ms_per_step: ms,
                    min_ms: timing.min_ms,
                    max_ms: timing.max_ms,
                    agent_steps_per_s: f64::from(agents) / (ms * 1e-3),
                    effective_gbps: bytes / ms / 1e6,
                });
            }
        }
    }
    let tiny = PhysarumSetup { width: 256, height: 256, agents: 200, ..PhysarumSetup::default() };
    let mut tiny_rows = Vec::new();
    for variant in variants.iter().copied().chain([PhysarumVariant::Cpu]) {
        let run_device = if variant == PhysarumVariant::Cpu { Device::Cpu } else { device.clone() };
        let mut best = f64::MAX;
        for _ in 0..3 {
            let started = Instant::now();
            let mut sim = Physarum::new(&tiny, &run_device, variant)?;
            sim.step(500)?;
            sim.synchronize()?;
            best = best.min(started.elapsed().as_secs_f64());
        }
        tiny_rows.push(PhysarumTiny { variant: variant.name().into(), seconds: best });
    }
    Ok(Report { machine, measured: PhysarumBench { rows, tiny: tiny_rows } })
}

impl Measurements for PhysarumBench {
    fn table(&self, machine: &Machine) -> String {
        let mut out = machine.header("effective = (24 B/agent + 8 B/cell) per step");
        out += &format!(
            "{:<14} {:>6} {:>10} {:>9} {:>15} {:>13} {:>9} {:>7}\n",
            "variant", "grid", "agents", "ms/step", "(min-max)", "agent-steps/s", "GB/s eff", "% copy"
        );
        for r in &self.rows {
            out += &format!(
                "{:<14} {:>6} {:>10} {:>9.4} {:>15} {:>13.3e} {:>9.0} {:>6.1}%\n",
                r.variant,
                format!("{}²", r.size),
                r.agents,
                r.ms_per_step,
                format!("({:.4}-{:.4})", r.min_ms, r.max_ms),
                r.agent_steps_per_s,
                r.effective_gbps,
                100.0 * r.effective_gbps / machine.copy_gbps,
            );
        }
        if self.rows.iter().any(|r| r.variant.starts_with("optimized:")) {
            out += "optimized:bNeM[d|i]: agents binned by tiles of N² every M steps, float deposits (d: into a copy of the trail, i: in place)\n";
        }
        out += "write-up's tiny case, 200 agents, 500 steps, 256², end to end (best of 3):\n";
        for t in &self.tiny {
            out += &format!("  {:<9} {:>8.1} ms\n", t.variant, t.seconds * 1e3);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_are_chosen_by_label() {
        assert!(candidates_chosen(None).unwrap().is_empty());
        assert_eq!(candidates_chosen(Some("1")).unwrap(), CANDIDATES);
        assert_eq!(candidates_chosen(Some("")).unwrap(), CANDIDATES);
        let message = candidates_chosen(Some("b16e16i,b9e16")).unwrap_err().to_string();
        assert!(message.contains("\"b9e16\"") && message.contains("b8e16i"), "{message}");
        let chosen = candidates_chosen(Some("b16e16i, b8e16i")).unwrap();
        let labels: Vec<String> = chosen.iter().map(ToString::to_string).collect();
        assert_eq!(labels, ["b16e16i", "b8e16i"]);
        assert!(chosen.iter().all(|c| c.deposits == Deposits::InPlace));
    }
}
