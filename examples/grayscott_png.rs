//! Simulates Gray-Scott "mitosis" through the host library and saves the last frame as a PNG.
//!
//! `cargo run --release -p host --example grayscott_png -- [OUT.png]`

use host::{
    grayscott::{self, GrayScott, Init, Setup},
    render,
};

fn main() -> host::Result<()> {
    let out = std::env::args().nth(1).unwrap_or_else(|| "mitosis.png".into());
    let (width, height) = (384, 256);
    let mut setup = Setup::new(width, height, grayscott::preset("mitosis").expect("preset exists").rates());
    setup.init = Init::Spots;

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
    println!("{} after {} steps on {} -> {out}", setup.rates.feed, sim.steps_done(), sim.describe());
    Ok(())
}
