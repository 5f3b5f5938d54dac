//! `rust-gpu-sim grayscott`.

mod map;

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use simulations::{
    Choice as _,
    grayscott::{
        self, GrayScott, Init, MAX_RATE, PRESETS, Setup, StartFields, Variant, parts::LaunchSettings,
    },
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
use simulations::driver::{Driver, FrameDefaults as _, Report};

/// Gray-Scott's defaults in the shared groups (the library's).
pub use simulations::grayscott::GrayScottFrames as GrayScottSim;

impl SimulationCommand for GrayScottSim {
    type Variant = Variant;
}

#[derive(Args, Debug)]
pub struct GrayScottArgs {
    /// Grid side (square grid); --width/--height override it.
    #[arg(long, default_value_t = grayscott::DEFAULT_SIZE, allow_hyphen_values = true)]
    size: u32,
    /// Grid width in cells.
    #[arg(long, allow_hyphen_values = true)]
    width: Option<u32>,
    /// Grid height in cells.
    #[arg(long, allow_hyphen_values = true)]
    height: Option<u32>,
    /// Number of time steps (default: the preset's).
    #[arg(long, allow_hyphen_values = true)]
    steps: Option<u32>,
    /// Named pattern: (F, k), start and step count; see --list-presets.
    #[arg(long, default_value = grayscott::DEFAULT_PRESET)]
    preset: String,
    /// Print the presets and exit.
    #[arg(long)]
    list_presets: bool,
    /// Feed rate F (overrides the preset).
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) feed: Option<f32>,
    /// Kill rate k (overrides the preset).
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) kill: Option<f32>,
    /// Diffusion rate of U.
    #[arg(long, allow_hyphen_values = true)]
    du: Option<f32>,
    /// Diffusion rate of V.
    #[arg(long, allow_hyphen_values = true)]
    dv: Option<f32>,
    /// Time step.
    #[arg(long, allow_hyphen_values = true)]
    dt: Option<f32>,
    #[command(flatten)]
    seed: SeedArgs,
    /// Starting pattern (default: the preset's).
    #[arg(long, value_parser = choice::<Init>())]
    init: Option<Init>,
    /// Seed V from an image's luminance instead (any size; it is resized to the grid).
    #[arg(long, value_name = "PATH")]
    init_image: Option<PathBuf>,
    #[command(flatten)]
    output: OutputArgs<GrayScottSim>,
    #[command(flatten)]
    state: StateArgs,
    #[command(flatten)]
    backend: BackendArgs<GrayScottSim>,
    #[command(flatten)]
    parts: PartsArgs,
    /// Use the fixed default launch shape instead of the tuned (and cached) one.
    #[arg(long)]
    no_autotune: bool,
    #[command(flatten)]
    config: ConfigArgs,
    #[command(flatten)]
    map: map::MapArgs,
}

impl GrayScottArgs {
    /// Whether the run may open a GPU (not when it only lists or prints settings).
    pub fn may_use_gpu(&self) -> bool {
        self.backend.may_use_gpu()
            && !(self.list_presets || self.output.list_palettes || self.config.print_config)
    }

    /// The model's choices these options make (the one conversion from the command line).
    fn choices(&self) -> grayscott::Choices {
        grayscott::Choices {
            preset: Some(self.preset.clone()),
            width: Some(self.width.unwrap_or(self.size)),
            height: Some(self.height.unwrap_or(self.size)),
            steps: self.steps,
            feed: self.feed,
            kill: self.kill,
            du: self.du,
            dv: self.dv,
            dt: self.dt,
            init: self.init,
            init_image: self.init_image.clone(),
            seed: Some(Seed(self.seed.seed)),
        }
    }
}

fn list_presets() -> Result<()> {
    say!("{:<10} {:>7} {:>8} {:>6} {:>6}  description", "preset", "F", "k", "init", "steps");
    for p in PRESETS {
        say!(
            "{:<10} {:>7} {:>8} {:>6} {:>6}  {} [{}]",
            p.name,
            p.feed,
            p.kill,
            p.init.name(),
            p.steps,
            p.description,
            p.class
        );
    }
    say!(
        "(all with Du = {}, Dv = {}, dt = {})",
        grayscott::DEFAULT_DU,
        grayscott::DEFAULT_DV,
        grayscott::DEFAULT_DT
    );
    Ok(())
}

/// Checks everything that can be checked before any work; returns the setup and the step
/// count. The simulation's own rules are the library's ([`grayscott::Choices`]).
pub(crate) fn check(args: &GrayScottArgs) -> Result<(Setup, u32)> {
    let choices = args.choices();
    let steps = choices.steps()?;
    check_steps(steps)?;
    let setup = choices.setup()?;
    args.backend.check()?;
    Ok((setup, steps))
}

pub fn run(mut args: GrayScottArgs, given: &Given, launcher: &Launcher) -> Result<()> {
    if args.list_presets {
        return list_presets();
    }
    if args.output.list_palettes {
        return options::list_palettes();
    }
    if let Some(document) = args.config.read(GrayScottSim::NAME)? {
        apply(&mut args, document, given)?;
    }
    if args.map.any() {
        return map::run(&args);
    }
    args.output.options().check()?;
    let (setup, steps) = check(&args)?;
    if args.config.print_config {
        let run = args.backend.table();
        return super::settings::print(
            &document(&args, &setup, steps, run, Provenance::of_this_run(None)),
            GrayScottSim::NAME,
        );
    }
    let driver = Driver::new(&args.output, &args.state, &["npz", "npy"], Vec::new())?;
    if let Some(path) = &setup.init_image {
        // Fail on an unreadable image before anything else starts.
        simulations::input::check_image(path)?;
    }

    simulations::timeline::mark("options checked");
    // A split run's start is built while the GPUs open (and NCCL connects).
    let mut start =
        if args.parts.may_split(launcher.job_if_read()) { Some(StartFields::begin(&setup)?) } else { None };
    let (device, variant) = args.backend.select()?;
    let parted = args.parts.open(&device, None, launcher)?;
    let root = parted.as_ref().is_none_or(Layout::is_root);
    simulations::timeline::mark("device open");
    // Open outputs before simulating, so an unwritable path fails now; they record the settings.
    // Only rank 0 of an NCCL job writes; the other ranks send it their bands.
    let text = {
        let run = RunTable::ran(&device, variant);
        document(&args, &setup, steps, run, Provenance::of_this_run(Some(&device)))
            .to_toml(GrayScottSim::NAME)
    };
    let driver = driver.open((setup.width, setup.height), root, text)?;
    simulations::timeline::mark("outputs open");
    let mut sim = match parted {
        Some(layout) => {
            let start = match start.take() {
                Some(start) => start,
                None => StartFields::begin(&setup)?,
            };
            GrayScott::new_in(&setup, layout, variant, start, |layout| {
                let job = launcher.job()?;
                let overlap = matches!(layout, Layout::Ranks(_))
                    && args.parts.gray_scott_overlap(super::options::over_network(job));
                let autotune = !args.no_autotune;
                LaunchSettings::for_layout(layout, variant, setup.width, setup.height, autotune, overlap)
            })?
        }
        None => GrayScott::new_tuned(&setup, &device, variant, !args.no_autotune)?,
    };
    simulations::timeline::mark("simulation set up");
    simulations::timeline::mark("launch settings chosen");
    let finishing = driver
        .run_with(&mut sim, steps, "steps", |done| simulations::faults::inject_if_asked(&device, done))?;
    let described = sim.describe();
    let Report { first, frames, written, seconds } = finishing.finish_while(|| {
        drop((sim, device));
        simulations::timeline::mark("simulation and device released");
    })?;
    if !root {
        return Ok(());
    }
    say!(
        "grayscott {}x{}: {} steps{}, {frames} frames on {} in {seconds:.2} s ({} steps/s) -> {}",
        setup.width,
        setup.height,
        steps,
        options::resumed(first),
        described,
        super::rate((steps as u64 - first) as f64 / seconds),
        super::destination(&written, "--gif, --mp4, --png, --png-dir or --save"),
    );
    Ok(())
}

/// Takes the options the command line did not give from a settings file. A `--preset` on the
/// command line brings its own rates, start and steps; `--size` its width and height; `--init`
/// replaces the file's `init_image`.
fn apply(args: &mut GrayScottArgs, document: Document, given: &Given) -> Result<()> {
    args.output.apply(document.frames, given);
    args.backend.apply(document.run, given)?;
    let Some(table) = document.grayscott else { return Ok(()) };
    // A start on the command line replaces the file's image too.
    if args.init.is_none() {
        args.init_image = args.init_image.take().or(table.init_image);
    }
    if !given.has("preset") {
        if let Some(preset) = table.preset {
            args.preset = preset;
        }
        args.steps = args.steps.or(table.steps);
        args.feed = args.feed.or(table.feed);
        args.kill = args.kill.or(table.kill);
        args.du = args.du.or(table.du);
        args.dv = args.dv.or(table.dv);
        args.dt = args.dt.or(table.dt);
        args.init = args.init.or(table.init);
    }
    if !given.has("size") {
        args.width = args.width.or(table.width);
        args.height = args.height.or(table.height);
    }
    given.fill("seed", &mut args.seed.seed, table.seed.map(|s| s.0));
    Ok(())
}

/// The resolved settings of a run.
pub(crate) fn document(
    args: &GrayScottArgs,
    setup: &Setup,
    steps: u32,
    run: RunTable,
    provenance: Provenance,
) -> Document {
    let table = grayscott::Choices::resolved(&args.preset, setup, steps);
    Document::of_run(table, run, args.output.table(), provenance)
}
