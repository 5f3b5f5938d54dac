//! `rust-gpu-sim grayscott --map`: the (F, k) parameter map.

use std::{path::PathBuf, time::Instant};

use anyhow::{Result, bail};
use clap::Args;
use simulations::{
    Device,
    grayscott::{
        DEFAULT_DT, DEFAULT_DU, DEFAULT_DV, Init,
        map::{DEFAULT_FEED, DEFAULT_KILL, MapSetup, ParameterMap},
    },
    render::output::AtomicFile,
};

use super::{GrayScottArgs, MAX_RATE};
use crate::{
    cli::options::{self, Target, at_most, check_steps},
    say,
};

/// Default map on a GPU: 64 × 64 tiles of 128², 10,000 steps.
const GPU_DEFAULT: (u32, u32, u32) = (64, 128, 10_000);
/// Default map on the CPU, smaller: 24 × 24 tiles of 64², 5,000 steps.
const CPU_DEFAULT: (u32, u32, u32) = (24, 64, 5_000);

#[derive(Args, Debug)]
pub struct MapArgs {
    /// Draw the (F, k) parameter map instead of one simulation: a grid of small simulations,
    /// each with its own feed and kill rates, as one PNG (default grayscott-map.png); --steps
    /// defaults to 10000 on a GPU, 5000 on the CPU.
    #[arg(
        long,
        value_name = "PATH",
        num_args = 0..=1,
        default_missing_value = "grayscott-map.png",
        conflicts_with_all = [
            "size", "width", "height", "feed", "kill", "preset", "init_image", "gif", "mp4", "png_dir", "save",
            "save_every", "checkpoint", "checkpoint_every", "resume",
            "frame_every", "fps", "variant", "no_autotune", "gpus", "split",
        ]
    )]
    pub map: Option<PathBuf>,
    /// --map: tiles per side (default 64 on a GPU, 24 on the CPU).
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    map_tiles: Option<u32>,
    /// --map: cells per tile side (default 128 on a GPU, 64 on the CPU).
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    map_tile_size: Option<u32>,
    /// --map: feed rates spanned, bottom to top (default 0.01,0.09).
    #[arg(long, value_name = "LO,HI", value_parser = range, allow_hyphen_values = true)]
    feed_range: Option<(f32, f32)>,
    /// --map: kill rates spanned, left to right (default 0.03,0.07).
    #[arg(long, value_name = "LO,HI", value_parser = range, allow_hyphen_values = true)]
    kill_range: Option<(f32, f32)>,
}

impl MapArgs {
    /// Whether the map, or any of its options, was asked for.
    pub fn any(&self) -> bool {
        self.map.is_some()
            || self.map_tiles.is_some()
            || self.map_tile_size.is_some()
            || self.feed_range.is_some()
            || self.kill_range.is_some()
    }
}

/// `LO,HI`: two numbers.
fn range(text: &str) -> std::result::Result<(f32, f32), String> {
    let parts: Vec<&str> = text.split(',').collect();
    let number = |s: &str| s.trim().parse::<f32>().map_err(|_| format!("'{s}' is not a number"));
    match parts[..] {
        [lo, hi] => Ok((number(lo)?, number(hi)?)),
        _ => Err("expected LO,HI: two numbers separated by a comma".into()),
    }
}

/// Checks everything, opens the device, steps the map and draws it.
pub fn run(args: &GrayScottArgs) -> Result<()> {
    let map = &args.map;
    let Some(path) = map.map.clone() else {
        bail!("--map-tiles, --map-tile-size, --feed-range and --kill-range belong to --map");
    };
    let palette = options::palette(&args.output.palette)?;
    let steps = args.steps;
    if let Some(steps) = steps {
        check_steps(steps)?;
    }
    let mut setup = MapSetup {
        tiles: map.map_tiles.unwrap_or(GPU_DEFAULT.0),
        side: map.map_tile_size.unwrap_or(GPU_DEFAULT.1),
        feed: map.feed_range.unwrap_or(DEFAULT_FEED),
        kill: map.kill_range.unwrap_or(DEFAULT_KILL),
        du: args.du.unwrap_or(DEFAULT_DU),
        dv: args.dv.unwrap_or(DEFAULT_DV),
        dt: args.dt.unwrap_or(DEFAULT_DT),
        init: args.init.unwrap_or(Init::Spots),
        seed: args.seed.seed,
    };
    setup.validate()?;
    let (f, k) = (setup.feed, setup.kill);
    for (option, value) in [
        ("--du", setup.du),
        ("--dv", setup.dv),
        ("--dt", setup.dt),
        ("--feed-range", f.1),
        ("--kill-range", k.1),
    ] {
        at_most(option, f64::from(value), MAX_RATE, "beyond it the update can overflow float32")?;
    }
    args.backend.check()?;
    options::check_targets(&[Target::file("--map", &path)])?;
    // Fail on an unwritable target now, not after the run.
    drop(AtomicFile::create(&path)?);

    let (device, _) = args.backend.select()?;
    let defaults = if matches!(device, Device::Cpu) { CPU_DEFAULT } else { GPU_DEFAULT };
    setup.tiles = map.map_tiles.unwrap_or(defaults.0);
    setup.side = map.map_tile_size.unwrap_or(defaults.1);
    let steps = steps.unwrap_or(defaults.2);

    let started = Instant::now();
    let mut sim = ParameterMap::new(&setup, &device)?;
    let progress = crate::cli::progress_bar(steps, "steps");
    let mut remaining = steps;
    while remaining > 0 {
        let chunk = remaining.min(100);
        sim.step(chunk)?;
        sim.synchronize()?;
        remaining -= chunk;
        progress.inc(u64::from(chunk));
    }
    progress.finish_and_clear();
    let simulated = started.elapsed().as_secs_f64();
    sim.render(palette, &path)?;
    let seconds = started.elapsed().as_secs_f64();
    say!(
        "grayscott map {n}x{n} tiles of {s}x{s} (F {}-{}, k {}-{}): {steps} steps on {} in {seconds:.2} s \
         (simulate {simulated:.2} s, {:.0}M cell-steps/s) -> {}",
        f.0,
        f.1,
        k.0,
        k.1,
        sim.describe(),
        setup.tile_count() as f64 * setup.tile_cells() as f64 * f64::from(steps) / simulated / 1e6,
        path.display(),
        n = setup.tiles,
        s = setup.side,
    );
    Ok(())
}
