//! `rust-gpu-sim bench heat`: every heat GPU variant, ms per RK4 step against the floor of 8 bytes per
//! cell per step (read and write u once) at the measured copy bandwidth.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{Machine, Measurements, Report, time_per_step};
use crate::{
    Device,
    cuda::Gpu,
    error::{Result, human_bytes},
    heat::{Heat, HeatInit, HeatSetup, HeatVariant},
};

/// A heat bench run.
pub type HeatReport = Report<HeatBench>;

/// What `bench heat` measured.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct HeatBench {
    pub rows: Vec<HeatRow>,
}

/// One timed heat variant at one size.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct HeatRow {
    pub variant: String,
    pub n: u32,
    pub steps: u32,
    pub ms_per_step: f64,
    #[serde(rename = "min_ms_per_step")]
    pub min_ms: f64,
    #[serde(rename = "max_ms_per_step")]
    pub max_ms: f64,
    /// 8 B per cell per RK4 step (read and write u once: the floor) over the time.
    #[serde(rename = "effective_gb_per_s")]
    pub effective_gbps: f64,
    /// Time over the floor `8·cells / copy bandwidth`.
    pub times_floor: f64,
    pub device_bytes: u64,
}

/// Times each heat variant at `n³` for each size (RK4 steps between two events, median of
/// `repeats`), against the copy bandwidth measured first.
pub fn run(gpu: &Arc<Gpu>, sizes: &[u32], variants: &[HeatVariant], repeats: usize) -> Result<HeatReport> {
    let machine = Machine::measure(gpu)?;
    let mut rows = Vec::new();
    for &n in sizes {
        let cells = f64::from(n).powi(3);
        let steps = ((2e10 / (cells * 68.0)) as u32).clamp(4, 2000);
        for &variant in variants {
            crate::stderr_line!("heat {} {n}³...", variant.name());
            let setup = HeatSetup::cube(n, HeatInit::Blobs);
            let mut sim = Heat::new(&setup, &Device::Cuda(gpu.clone()), variant)?;
            sim.step(steps)?;
            sim.synchronize()?;
            let timing = time_per_step(gpu, repeats, steps, |n| sim.step(n))?;
            let ms = timing.median_ms;
            let floor_ms = 8.0 * cells / (machine.copy_gbps * 1e6);
            rows.push(HeatRow {
                variant: variant.name().into(),
                n,
                steps,
                ms_per_step: ms,
                min_ms: timing.min_ms,
                max_ms: timing.max_ms,
                effective_gbps: 8.0 * cells / ms / 1e6,
                times_floor: ms / floor_ms,
                device_bytes: variant.bytes_per_cell() * cells as u64,
            });
        }
    }
    Ok(Report { machine, measured: HeatBench { rows } })
}

impl Measurements for HeatBench {
    fn table(&self, machine: &Machine) -> String {
        let mut out = machine.header("floor = 8 B/cell/RK4 step at that rate");
        out += &format!(
            "{:<7} {:>5} {:>6} {:>10} {:>13} {:>9} {:>8} {:>10}\n",
            "variant", "n", "steps", "ms/step", "(min-max)", "GB/s eff", "× floor", "memory"
        );
        for r in &self.rows {
            out += &format!(
                "{:<7} {:>5} {:>6} {:>10.3} {:>13} {:>9.0} {:>8.2} {:>10}\n",
                r.variant,
                r.n,
                r.steps,
                r.ms_per_step,
                format!("{:.3}-{:.3}", r.min_ms, r.max_ms),
                r.effective_gbps,
                r.times_floor,
                human_bytes(r.device_bytes)
            );
        }
        if let Some(naive) = self.rows.iter().find(|r| r.variant == "naive") {
            let best = self
                .rows
                .iter()
                .filter(|r| r.n == naive.n)
                .min_by(|a, b| a.ms_per_step.total_cmp(&b.ms_per_step));
            if let Some(best) = best {
                out += &format!(
                    "best at {}³: {} at {:.2}× the floor, {:.2}× faster than naive\n",
                    best.n,
                    best.variant,
                    best.times_floor,
                    naive.ms_per_step / best.ms_per_step
                );
            }
        }
        out
    }
}

/// `bench heat --split 1,2,4`: each variant at each size in each number of z slabs on this GPU,
/// ms per RK4 step against one part, and the exchange alone (bytes and time per step).
pub fn split_table(
    gpu: &Arc<Gpu>,
    sizes: &[u32],
    variants: &[HeatVariant],
    splits: &[u32],
    repeats: usize,
) -> Result<String> {
    use crate::heat::{HeatEngine as _, parts::PartedHeat};
    let mut out = format!(
        "{:>5} {:>8} {:>5} {:>10} {:>8} {:>12} {:>13}\n",
        "n", "variant", "parts", "ms/step", "vs 1", "exch B/step", "exch ms/step"
    );
    for &n in sizes {
        let cells = f64::from(n).powi(3);
        let steps = ((2e10 / (cells * 68.0)) as u32).clamp(4, 2000);
        let setup = HeatSetup::cube(n, HeatInit::Blobs);
        for &variant in variants {
            let mut base = None;
            for &split in splits {
                crate::stderr_line!("heat {} {n}³ in {split} part(s)...", variant.name());
                let (ms, bytes, exchange_ms) = if split == 1 {
                    let mut sim = Heat::new(&setup, &Device::Cuda(gpu.clone()), variant)?;
                    sim.step(steps)?;
                    sim.synchronize()?;
                    (time_per_step(gpu, repeats, steps, |k| sim.step(k))?.median_ms, 0, 0.0)
                } else {
                    let layout = crate::split::Layout::Local { gpus: vec![gpu.clone()], split };
                    let mut sim = PartedHeat::new(layout, variant, &setup, false)?;
                    sim.step(steps)?;
                    sim.synchronize()?;
                    let t = time_per_step(gpu, repeats, steps, |k| sim.step(k))?.median_ms;
                    let x =
                        time_per_step(gpu, repeats, 20, |k| (0..k).try_for_each(|_| sim.split().exchange()))?
                            .median_ms;
                    (t, sim.split().exchange_bytes(), x)
                };
                let base = *base.get_or_insert(ms);
                out.push_str(&format!(
                    "{n:>5} {:>8} {split:>5} {ms:>10.3} {:>7.1}% {bytes:>12} {exchange_ms:>13.4}\n",
                    variant.name(),
                    100.0 * (ms / base - 1.0)
                ));
            }
        }
    }
    out.push_str("(all slabs on this GPU, sharing its stream; one exchange per RK4 step, not overlapped)\n");
    Ok(out)
}
