//! Runs every Gray-Scott preset from its own start for its own number of steps on the CPU and
//! tiles the last frames into one PNG, in `--list-presets` order, left to right and top to
//! bottom (the README's docs/presets.png).
//!
//! `cargo run --release -p simulations --example preset_montage -- [OUT.png] [SIDE]` (`--help` for help)

use std::{path::PathBuf, time::Instant};

// The kernel images (simulations/src/cuda/images.rs).
use clap::Parser;
use rayon::prelude::*;
use simulations::{
    Device,
    grayscott::{GrayScott, PRESETS, Variant},
    render,
};
use simulations_images as _;

const COLUMNS: usize = 3;
const GAP: usize = 4;

/// Tiles the last frame of every Gray-Scott preset (each from its own start, for its own
/// steps, on the CPU) into one PNG.
#[derive(Parser)]
struct Args {
    /// The PNG to write.
    #[arg(default_value = "presets.png")]
    out: PathBuf,
    /// Cells along each side of a preset's tile, 8 to 4096.
    #[arg(default_value_t = 256, value_parser = clap::value_parser!(u32).range(8..=4096))]
    side: u32,
}

fn main() -> simulations::Result<()> {
    let Args { out, side } = Args::parse();
    let started = Instant::now();
    let tiles = PRESETS
        .par_iter()
        .map(|p| {
            let mut sim = GrayScott::new(&p.setup(side, side), &Device::Cpu, Variant::Cpu)?;
            sim.step(p.steps)?;
            let mut levels = vec![0u8; (side * side) as usize];
            sim.levels(&mut levels)?;
            Ok(levels)
        })
        .collect::<simulations::Result<Vec<_>>>()?;

    let s = side as usize;
    let rows = PRESETS.len().div_ceil(COLUMNS);
    let (width, height) = (COLUMNS * s + (COLUMNS - 1) * GAP, rows * s + (rows - 1) * GAP);
    let mut montage = vec![0u8; width * height];
    for (i, tile) in tiles.iter().enumerate() {
        let (x0, y0) = ((i % COLUMNS) * (s + GAP), (i / COLUMNS) * (s + GAP));
        for (y, row) in tile.chunks(s).enumerate() {
            montage[(y0 + y) * width + x0..][..s].copy_from_slice(row);
        }
    }
    let palette = render::palette("cyberpunk").expect("palette exists");
    render::write_png(&out, &montage, width as u32, height as u32, palette)?;
    let names: Vec<_> = PRESETS.iter().map(|p| p.name).collect();
    println!(
        "{} presets at {side}x{side} ({}) on the CPU ({} threads) in {:.1} s -> {out}",
        PRESETS.len(),
        names.join(", "),
        rayon::current_num_threads(),
        started.elapsed().as_secs_f32(),
        out = out.display()
    );
    Ok(())
}
