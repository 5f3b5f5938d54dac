//! Simulates Gray-Scott "mitosis" through the host library and saves the last frame as a PNG.
//!
//! `cargo run --release -p host --example grayscott_png -- [OUT.png]`

use host::{
    grayscott::{self, GrayScott},
    render,
};

fn main() -> host::Result<()> {
    let out = std::env::args().nth(1).unwrap_or_else(|| "mitosis.png".into());
    let (width, height) = (384, 256);
    let preset = grayscott::preset("mitosis").expect("preset exists");
    // The preset's rates and start (scattered small squares), seed 1.
    let setup = preset.setup(width, height);

    // The GPU (fused kernel) if there is one, else the CPU.
    let (device, variant, notice) = grayscott::select(host::BackendChoice::Auto, None)?;
    if let Some(notice) = notice {
        eprintln!("note: {notice}");
    }
    let mut sim = GrayScott::new(&setup, &device, variant)?;
    sim.step(4000)?;

    let mut levels = vec![0u8; (width * height) as usize];
    sim.levels(&mut levels)?;
    let palette = render::palette("cyberpunk").expect("palette exists");
    render::write_png(out.as_ref(), &levels, width, height, palette)?;
    println!(
        "Gray-Scott \"{}\" (F = {}, k = {}), {width}x{height}: {} steps on {} -> {out}",
        preset.name,
        setup.rates.feed,
        setup.rates.kill,
        sim.steps_done(),
        sim.describe()
    );
    Ok(())
}
