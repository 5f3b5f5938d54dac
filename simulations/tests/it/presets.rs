//! Every Gray-Scott preset grows its pattern from its own start: each runs at 128² on the CPU
//! and the final V field must be a pattern (spread out, not uniform), and for the spot
//! presets hold a plausible number of spots.
//!
//! The presets run in parallel, each on one thread (the simulations crate is built with
//! optimisations in test builds for this: see `[profile.dev.package.simulations]` in Cargo.toml).

use rayon::prelude::*;
use simulations::grayscott::{Engine, PRESETS, Preset, cpu::CpuGrayScott, initial_fields};

const SIDE: u32 = 128;
/// Steps at 128²: patterns form within a few thousand steps; the presets' own (larger)
/// counts fill a 512² grid.
const MAX_STEPS: u32 = 5_000;

/// What a run ends with.
#[derive(Debug)]
struct Summary {
    /// Spatial variance of V.
    variance: f32,
    /// max V − min V.
    range: f32,
    /// Connected regions (4-neighbour, periodic) where V is above mid-range.
    components: usize,
    /// Fraction of cells above mid-range.
    covered: f32,
}

fn summarise(v: &[f32], w: usize, h: usize) -> Summary {
    let n = v.len() as f32;
    let mean = v.iter().sum::<f32>() / n;
    let variance = v.iter().map(|x| (x - mean).powi(2)).sum::<f32>() / n;
    let (lo, hi) = v.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), &x| (a.min(x), b.max(x)));
    let mid = 0.5 * (lo + hi);
    let on: Vec<bool> = v.iter().map(|&x| x > mid).collect();
    let mut seen = vec![false; v.len()];
    let mut components = 0;
    for start in 0..v.len() {
        if !on[start] || seen[start] {
            continue;
        }
        components += 1;
        seen[start] = true;
        let mut stack = vec![start];
        while let Some(c) = stack.pop() {
            let (x, y) = (c % w, c / w);
            for (nx, ny) in [((x + 1) % w, y), ((x + w - 1) % w, y), (x, (y + 1) % h), (x, (y + h - 1) % h)] {
                let k = ny * w + nx;
                if on[k] && !seen[k] {
                    seen[k] = true;
                    stack.push(k);
                }
            }
        }
    }
    let covered = on.iter().filter(|&&o| o).count() as f32 / n;
    Summary { variance, range: hi - lo, components, covered }
}

fn run(preset: &Preset) -> Summary {
    let setup = preset.setup(SIDE, SIDE);
    let (u, v) = initial_fields(setup.init, SIDE, SIDE, setup.seed);
    let mut sim = CpuGrayScott::new(SIDE, SIDE, setup.rates, u, v);
    for _ in 0..preset.steps.min(MAX_STEPS) {
        sim.step_once();
    }
    let (_, v) = sim.fields().unwrap();
    summarise(&v, SIDE as usize, SIDE as usize)
}

#[test]
fn the_summary_counts_spots_across_the_edges() {
    // Two spots, one wrapping around the corner; a flat field has none.
    let (w, h) = (16usize, 12usize);
    let mut v = vec![0.0f32; w * h];
    for (x, y) in [(5, 5), (6, 5), (5, 6), (0, 0), (15, 0), (0, 11), (15, 11)] {
        v[y * w + x] = 0.3;
    }
    let s = summarise(&v, w, h);
    assert_eq!(s.components, 2);
    assert!((s.covered - 7.0 / 192.0).abs() < 1e-6 && s.range == 0.3 && s.variance > 0.0);
}

#[test]
fn every_preset_grows_its_pattern() {
    let started = std::time::Instant::now();
    let results: Vec<(&Preset, Summary)> = PRESETS.par_iter().with_max_len(1).map(|p| (p, run(p))).collect();
    let mut failures = Vec::new();
    for (p, s) in &results {
        eprintln!("{:<10} {s:?}", p.name);
        // A pattern: V spread over a good part of its range, neither dead nor uniform.
        if !(s.variance > 2e-4 && s.range > 0.15 && s.covered > 0.005 && s.covered < 0.99) {
            failures.push(format!("{}: no pattern ({s:?})", p.name));
        }
        // Spot presets: isolated spots in a plausible number (4 seeds at 128²).
        let spots = match p.name {
            "solitons" => Some(3..=8),   // one stable spot per seed, none dividing
            "mitosis" => Some(15..=200), // dividing: many more spots than seeds
            "spots" => Some(30..=200),   // replicating until they tile the plane
            _ => None,
        };
        if let Some(range) = spots
            && !range.contains(&s.components)
        {
            failures.push(format!("{}: {} spots, expected {range:?}", p.name, s.components));
        }
    }
    eprintln!("{} presets in {:.1} s", results.len(), started.elapsed().as_secs_f32());
    assert!(failures.is_empty(), "{failures:#?}");
}
