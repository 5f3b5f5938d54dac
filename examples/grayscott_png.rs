//! Simulates Gray-Scott "mitosis" through the host library and saves the last frame as a PNG.
//!
//! `cargo run --release -p simulations --example grayscott_png -- [OUT.png]` (`--help` for help)

use std::path::PathBuf;

// The kernel images (simulations/src/cuda/images.rs).
use clap::Parser;
use simulations::{
    grayscott::{self, GrayScott},
    render,
};
use simulations_images as _;

/// Simulates Gray-Scott "mitosis" (384x256, 4000 steps) and saves the last frame as a PNG.
#[derive(Parser)]
struct Args {
    /// The PNG to write.
    #[arg(default_value = "mitosis.png")]
    out: PathBuf,
}

fn main() -> simulations::Result<()> {
    let out = Args::parse().out;
    let (width, height) = (384, 256);
    let preset = grayscott::preset("mitosis").expect("preset exists");
    // The preset's rates and start (scattered small squares), seed 1.
    let setup = preset.setup(width, height);

    // The GPU (fused kernel) if there is one, else the CPU.
    let (device, variant, notice) = grayscott::select(simulations::BackendChoice::Auto, None)?;
    if let Some(notice) = notice {
        eprintln!("note: {notice}");
    }
    let mut sim = GrayScott::new(&setup, &device, variant)?;
    sim.step(4000)?;

    let mut levels = vec![0u8; (width * height) as usize];
    sim.levels(&mut levels)?;
    let palette = render::palette("cyberpunk").expect("palette exists");
    render::write_png(&out, &levels, width, height, palette)?;
    println!(
        "Gray-Scott \"{}\" (F = {}, k = {}), {width}x{height}: {} steps on {} -> {out}",
        preset.name,
        setup.rates.feed,
        setup.rates.kill,
        sim.steps_done(),
        sim.describe(),
        out = out.display()
    );
    Ok(())
}
