//! `rust-gpu-sim heat`.

use anyhow::Result;
use clap::Args;
use simulations::{
    driver::{Driver, FrameDefaults, Report},
    heat::{self, Heat, HeatChoices, HeatInit, HeatSetup, HeatVariant},
    settings::Seed,
    split::{Layout, decomposition::Launcher},
};

use super::{
    choice::choice,
    options::{
        self, BackendArgs, OutputArgs, PartsArgs, SeedArgs, SimulationCommand, StateArgs, check_steps,
    },
    settings::{ConfigArgs, Given},
};
use crate::{
    say,
    settings_document::{Document, Provenance, RunTable},
};
use options::FramesSettings as _;

/// Heat's defaults in the shared groups (the library's).
pub use simulations::heat::HeatFrames as HeatSim;

impl SimulationCommand for HeatSim {
    type Variant = HeatVariant;
}

#[derive(Args, Debug)]
pub struct HeatArgs {
    /// Grid points per side, faces included (cube); --nx/--ny/--nz override it.
    #[arg(long, default_value_t = heat::DEFAULT_SIZE, allow_hyphen_values = true)]
    size: u32,
    #[arg(long, allow_hyphen_values = true)]
    nx: Option<u32>,
    #[arg(long, allow_hyphen_values = true)]
    ny: Option<u32>,
    #[arg(long, allow_hyphen_values = true)]
    nz: Option<u32>,
    /// RK4 steps.
    #[arg(long, default_value_t = heat::DEFAULT_STEPS, allow_hyphen_values = true)]
    steps: u32,
    /// Diffusivity α.
    #[arg(long, default_value_t = heat::DEFAULT_ALPHA, allow_hyphen_values = true)]
    alpha: f32,
    /// Grid spacing h.
    #[arg(long, default_value_t = heat::DEFAULT_H, allow_hyphen_values = true)]
    h: f32,
    /// Time step (default: 80% of the RK4 stability limit 2.785·h²/(12·α)).
    #[arg(long, allow_hyphen_values = true)]
    dt: Option<f32>,
    /// Value held on the six faces.
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
    boundary_value: f32,
    /// Starting field.
    #[arg(long, value_parser = choice::<HeatInit>(), default_value_t = heat::DEFAULT_INIT)]
    init: HeatInit,
    #[command(flatten)]
    seed: SeedArgs,
    #[command(flatten)]
    output: OutputArgs<HeatSim>,
    #[command(flatten)]
    state: StateArgs,
    #[command(flatten)]
    backend: BackendArgs<HeatSim>,
    #[command(flatten)]
    parts: PartsArgs,
    #[command(flatten)]
    config: ConfigArgs,
}

/// Checks everything that can be checked before any work; returns the setup. The
/// simulation's own rules are the library's ([`HeatChoices`]).
pub(crate) fn check(args: &HeatArgs) -> Result<HeatSetup> {
    check_steps(args.steps)?;
    let setup = args.choices().setup()?;
    args.backend.check()?;
    Ok(setup)
}

impl HeatArgs {
    /// Whether the run may open a GPU (not when it only lists or prints settings).
    pub fn may_use_gpu(&self) -> bool {
        self.backend.may_use_gpu() && !(self.output.list_palettes || self.config.print_config)
    }

    /// The model's choices these options make (the one conversion from the command line).
    fn choices(&self) -> HeatChoices {
        HeatChoices {
            size: Some(self.size),
            nx: self.nx,
            ny: self.ny,
            nz: self.nz,
            steps: Some(self.steps),
            alpha: Some(self.alpha),
            h: Some(self.h),
            dt: self.dt,
            boundary_value: Some(self.boundary_value),
            init: Some(self.init),
            seed: Some(Seed(self.seed.seed)),
        }
    }
}

pub fn run(mut args: HeatArgs, given: &Given, launcher: &Launcher) -> Result<()> {
    if args.output.list_palettes {
        return options::list_palettes();
    }
    if let Some(document) = args.config.read(HeatSim::NAME)? {
        apply(&mut args, document, given)?;
    }
    args.output.options().check()?;
    let setup = check(&args)?;
    if args.config.print_config {
        let run = args.backend.table();
        return super::settings::print(
            &document(&args, &setup, run, Provenance::of_this_run(None)),
            HeatSim::NAME,
        );
    }
    let driver = Driver::new(&args.output, &args.state, &["npz", "npy", "vti"], Vec::new())?;

    let [nx, ny, nz] = setup.n;
    let (device, variant) = args.backend.select()?;
    let parted = args.parts.open(&device, Some(variant), launcher)?;
    if args.parts.overlap && parted.is_none() {
        anyhow::bail!(
            "--overlap overlaps the exchange between slabs: it needs a split run (--gpus, --split or mpirun)"
        );
    }
    // Only rank 0 of an NCCL job writes; the other ranks send it their slabs.
    let root = parted.as_ref().is_none_or(Layout::is_root);
    // Every output records the settings.
    let run = RunTable::ran(&device, variant);
    let text = document(&args, &setup, run, Provenance::of_this_run(Some(&device))).to_toml(HeatSim::NAME);
    let driver = driver.open((nx, ny), root, text)?;
    let mut sim = match parted {
        Some(layout) => {
            let overlap = args.parts.heat_overlap(variant, layout.gpus());
            Heat::new_in(&setup, layout, variant, overlap)?
        }
        None => Heat::new(&setup, &device, variant)?,
    };
    let Report { first, frames, written, seconds } =
        driver.run(&mut sim, args.steps, "RK4 steps")?.finish()?;
    if !root {
        // The gather rank 0 makes below.
        if simulations::heat::has_exact_solution(&setup) {
            sim.field()?;
        }
        return Ok(());
    }
    // Gathering the field is for the comparison with the exact solution only.
    let exact = simulations::heat::has_exact_solution(&setup);
    let error = match exact.then(|| sim.field()).transpose()? {
        Some(u) => match simulations::heat::sine_error(&setup, &u, sim.time()) {
            Some((abs, rel)) => format!(", error against the exact solution {abs:.3e} ({rel:.3e} relative)"),
            None => String::new(),
        },
        None => String::new(),
    };
    say!(
        "heat {nx}x{ny}x{nz}: {} RK4 steps{} (dt {:.4e}, t = {:.4e}), {frames} frames on {} in {seconds:.2} s{error} -> {}",
        args.steps,
        options::resumed(first),
        setup.dt,
        sim.time(),
        sim.describe(),
        super::destination(&written, "--png, --gif, --mp4, --png-dir or --save"),
    );
    simulations::cuda::let_go((sim, device));
    Ok(())
}

/// Takes the options the command line did not give from a settings file. `--size` on the
/// command line replaces the file's nx, ny and nz; `--alpha` or `--h` its time step (the
/// default is recomputed).
fn apply(args: &mut HeatArgs, document: Document, given: &Given) -> Result<()> {
    args.output.apply(document.frames, given);
    args.backend.apply(document.run, given)?;
    let Some(table) = document.heat else { return Ok(()) };
    if !given.has("size") {
        given.fill("size", &mut args.size, table.size);
        args.nx = args.nx.or(table.nx);
        args.ny = args.ny.or(table.ny);
        args.nz = args.nz.or(table.nz);
    }
    if !given.has("alpha") && !given.has("h") {
        args.dt = args.dt.or(table.dt);
    }
    given.fill("steps", &mut args.steps, table.steps);
    given.fill("alpha", &mut args.alpha, table.alpha);
    given.fill("h", &mut args.h, table.h);
    given.fill("boundary_value", &mut args.boundary_value, table.boundary_value);
    given.fill("init", &mut args.init, table.init);
    given.fill("seed", &mut args.seed.seed, table.seed.map(|s| s.0));
    Ok(())
}

/// The resolved settings of a run.
pub(crate) fn document(
    args: &HeatArgs,
    setup: &HeatSetup,
    run: RunTable,
    provenance: Provenance,
) -> Document {
    Document::of_run(HeatChoices::resolved(setup, args.steps), run, args.output.table(), provenance)
}
