//! `rust-gpu-sim physarum`: the simulation, `--sensitivity` and `--toy-model`.

use std::{io::Write, path::PathBuf, time::Instant};

use anyhow::{Result, bail};
use clap::Args;
use simulations::{
    Device,
    physarum::{
        self, AgentInit, MAX_TRAIL, Physarum, PhysarumChoices, PhysarumSetup, PhysarumVariant, Sensing,
        ToyModel,
        sensitivity::{self, Perturb},
    },
    render::output::AtomicFile,
    settings::Seed,
};

use super::{
    choice::choice,
    options::{
        self, BackendArgs, OneGpuArgs, OutputArgs, SeedArgs, SimulationCommand, StateArgs, Target, at_most,
        check_steps,
    },
    settings::{ConfigArgs, Given},
};
use crate::{
    say,
    settings_document::{Document, Provenance, RunTable},
};
use options::FramesSettings as _;
use simulations::driver::{Driver, FrameDefaults as _, Report};
use simulations::physarum::driven::PhysarumRun;

/// Physarum's defaults in the shared groups (the library's).
pub use simulations::physarum::PhysarumFrames as PhysarumSim;

impl SimulationCommand for PhysarumSim {
    type Variant = PhysarumVariant;
}

/// The toy model's rates stay below this, so the 2×2 eigenvalue arithmetic stays finite.
const MAX_TOY_RATE: f64 = 1e100;

#[derive(Args, Debug)]
pub struct PhysarumArgs {
    /// Grid side (square grid); --width/--height override it.
    #[arg(long, default_value_t = physarum::DEFAULT_SIZE, allow_hyphen_values = true)]
    size: u32,
    #[arg(long, allow_hyphen_values = true)]
    width: Option<u32>,
    #[arg(long, allow_hyphen_values = true)]
    height: Option<u32>,
    /// Number of agents.
    #[arg(long, default_value_t = physarum::DEFAULT_AGENTS, allow_hyphen_values = true)]
    agents: u32,
    /// Number of steps.
    #[arg(long, default_value_t = physarum::DEFAULT_STEPS, allow_hyphen_values = true)]
    steps: u32,
    /// Named model parameters (network, jones, jones-narrow, writeup); the options below
    /// override them one by one.
    #[arg(long, default_value = physarum::DEFAULT_PRESET)]
    preset: String,
    /// Sensor distance, cells (default: the preset's).
    #[arg(long, allow_hyphen_values = true)]
    sensor_dist: Option<f32>,
    /// Angle of the side sensors, radians (default: the preset's).
    #[arg(long, allow_hyphen_values = true)]
    sensor_angle: Option<f32>,
    /// Heading change of a turn, radians (default: the preset's).
    #[arg(long, allow_hyphen_values = true)]
    turn_angle: Option<f32>,
    /// Distance moved per step, cells (default: the preset's).
    #[arg(long, allow_hyphen_values = true)]
    step_size: Option<f32>,
    /// Trail deposited per agent per step (default: the preset's).
    #[arg(long, allow_hyphen_values = true)]
    deposit: Option<f32>,
    /// Blend weight of the 3×3 mean: t ← (1−s)·t + s·blur(t) (default: the preset's).
    #[arg(long, allow_hyphen_values = true)]
    diffuse: Option<f32>,
    /// Fraction of the trail lost per step, in [0, 1) (default: the preset's).
    #[arg(long, allow_hyphen_values = true)]
    decay: Option<f32>,
    /// Largest random heading change per step, radians (0: none).
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
    jitter: f32,
    /// How sensors read the trail.
    #[arg(long, value_parser = choice::<Sensing>(), default_value_t)]
    sensing: Sensing,
    #[command(flatten)]
    seed: SeedArgs,
    /// Where agents start.
    #[arg(long, value_parser = choice::<AgentInit>(), default_value_t)]
    init: AgentInit,
    /// Seed the trail from this image's luminance (agents random).
    #[arg(long, value_name = "PATH")]
    init_image: Option<PathBuf>,
    /// Trail = luminance in [0, 1] times this, for --init-image.
    #[arg(long, default_value_t = 3.0, allow_hyphen_values = true)]
    image_strength: f32,
    #[command(flatten)]
    output: OutputArgs<PhysarumSim>,
    #[command(flatten)]
    state: StateArgs,
    /// --save: also write the agents (agent_y, agent_x, agent_heading in radians, by agent
    /// id; .npz or .npy).
    #[arg(long)]
    save_agents: bool,
    #[command(flatten)]
    backend: BackendArgs<PhysarumSim>,
    #[command(flatten)]
    one_gpu: OneGpuArgs,
    #[command(flatten)]
    config: ConfigArgs,
    /// Run a reference and a perturbed simulation side by side and fit the largest Lyapunov
    /// exponent of ‖Δtrail‖₂.
    #[arg(long)]
    sensitivity: bool,
    /// What --sensitivity perturbs.
    #[arg(long, value_parser = choice::<Perturb>(), default_value_t)]
    perturb: Perturb,
    /// Size of the perturbation (radians for heading, trail units for trail).
    #[arg(long, default_value_t = 1e-3, allow_hyphen_values = true)]
    epsilon: f32,
    /// --sensitivity: the log‖Δ‖ chart (PNG).
    #[arg(long, value_name = "PATH")]
    plot: Option<PathBuf>,
    /// --sensitivity: the distances as `step<TAB>distance` lines.
    #[arg(long, value_name = "PATH")]
    data: Option<PathBuf>,
    /// Analyse the write-up's linear toy model x ← A·x, A = [[1−β, α], [γ, 1−κ]], and exit.
    #[arg(long)]
    toy_model: bool,
    /// Toy model: pheromone deposition by agents (> 0).
    #[arg(long, default_value_t = 0.2, allow_hyphen_values = true)]
    alpha: f64,
    /// Toy model: pheromone decay, in (0, 1).
    #[arg(long, default_value_t = 0.1, allow_hyphen_values = true)]
    beta: f64,
    /// Toy model: agent response to pheromone (> 0).
    #[arg(long, default_value_t = 0.3, allow_hyphen_values = true)]
    gamma: f64,
    /// Toy model: agent damping, in (0, 1).
    #[arg(long, default_value_t = 0.2, allow_hyphen_values = true)]
    kappa: f64,
}

impl PhysarumArgs {
    /// Whether the run may open a GPU (not the toy model, nor when it only lists or prints
    /// settings).
    pub fn may_use_gpu(&self) -> bool {
        self.backend.may_use_gpu()
            && !(self.toy_model || self.output.list_palettes || self.config.print_config)
    }

    /// The model's choices these options make (the one conversion from the command line).
    fn choices(&self) -> PhysarumChoices {
        PhysarumChoices {
            preset: Some(self.preset.clone()),
            width: Some(self.width.unwrap_or(self.size)),
            height: Some(self.height.unwrap_or(self.size)),
            agents: Some(self.agents),
            steps: Some(self.steps),
            sensor_dist: self.sensor_dist,
            sensor_angle: self.sensor_angle,
            turn_angle: self.turn_angle,
            step_size: self.step_size,
            deposit: self.deposit,
            diffuse: self.diffuse,
            decay: self.decay,
            jitter: Some(self.jitter),
            sensing: Some(self.sensing),
            init: Some(self.init),
            init_image: self.init_image.clone(),
            image_strength: Some(self.image_strength),
            seed: Some(Seed(self.seed.seed)),
        }
    }
}

fn run_toy_model(args: &PhysarumArgs) -> Result<()> {
    let model = ToyModel { alpha: args.alpha, beta: args.beta, gamma: args.gamma, kappa: args.kappa };
    for (name, value, ok, range) in [
        ("alpha", model.alpha, model.alpha > 0.0 && model.alpha <= MAX_TOY_RATE, "above 0 and at most 1e100"),
        ("beta", model.beta, model.beta > 0.0 && model.beta < 1.0, "in (0, 1)"),
        ("gamma", model.gamma, model.gamma > 0.0 && model.gamma <= MAX_TOY_RATE, "above 0 and at most 1e100"),
        ("kappa", model.kappa, model.kappa > 0.0 && model.kappa < 1.0, "in (0, 1)"),
    ] {
        if !(value.is_finite() && ok) {
            bail!("--{name} must be {range}, got {value}");
        }
    }
    let a = model.analyse();
    let show =
        |(re, im): (f64, f64)| if im == 0.0 { format!("{re:.6}") } else { format!("{re:.6} {im:+.6}i") };
    say!(
        "A = [[{:.4}, {:.4}], [{:.4}, {:.4}]]",
        1.0 - model.beta,
        model.alpha,
        model.gamma,
        1.0 - model.kappa
    );
    say!("eigenvalues: {}, {}", show(a.eigenvalues[0]), show(a.eigenvalues[1]));
    say!("spectral radius ρ(A) = {:.6}", a.spectral_radius);
    say!("Lyapunov exponent log ρ(A) = {:.6} per step", a.lyapunov);
    say!(
        "αγ = {:.6} {} βκ = {:.6}: {}",
        model.alpha * model.gamma,
        if a.feedback_wins { ">" } else { "≤" },
        model.beta * model.kappa,
        if a.feedback_wins {
            "the feedback loop wins, perturbations grow exponentially"
        } else {
            "damping wins, perturbations die out"
        }
    );
    Ok(())
}

/// Checks everything that can be checked before any work; returns the setup. The
/// simulation's own rules are the library's ([`PhysarumChoices`]).
pub(crate) fn check(args: &PhysarumArgs) -> Result<PhysarumSetup> {
    check_steps(args.steps)?;
    let setup = args.choices().setup(args.steps)?;
    if args.sensitivity {
        let max = match args.perturb {
            Perturb::Heading => std::f64::consts::TAU,
            Perturb::Trail => MAX_TRAIL,
        };
        at_most(
            "--epsilon",
            f64::from(args.epsilon),
            max,
            "a heading turns by at most a full circle, a trail cell stays inside float32",
        )?;
    }
    args.backend.check()?;
    Ok(setup)
}

pub fn run(mut args: PhysarumArgs, given: &Given) -> Result<()> {
    args.one_gpu.check()?;
    if args.toy_model {
        if args.config.config.is_some() || args.config.print_config {
            bail!("--config and --print-config hold a simulation's settings; --toy-model has none");
        }
        return run_toy_model(&args);
    }
    if args.output.list_palettes {
        return options::list_palettes();
    }
    if let Some(document) = args.config.read(PhysarumSim::NAME)? {
        apply(&mut args, document, given)?;
    }
    let _palette = args.output.options().check()?;
    let setup = check(&args)?;
    if args.config.print_config {
        let run = args.backend.table();
        return super::settings::print(
            &document(&args, &setup, run, Provenance::of_this_run(None)),
            PhysarumSim::NAME,
        );
    }
    if args.sensitivity {
        return run_sensitivity(&args, &setup);
    }
    if args.plot.is_some() || args.data.is_some() {
        bail!("--plot and --data belong to --sensitivity");
    }
    if args.save_agents && args.state.save.is_none() {
        bail!("--save-agents needs --save PATH");
    }
    let driver = Driver::new(&args.output, &args.state, &["npz", "npy"], Vec::new())?;
    if let Some(path) = &setup.init_image {
        // Fail on an unreadable image before anything else starts.
        simulations::physarum::luminance(path, 1, 1)?;
    }

    let (device, variant) = args.backend.select()?;
    // Open outputs before simulating, so an unwritable path fails now; they record the settings.
    let text = {
        let run = RunTable::ran(&device, variant);
        document(&args, &setup, run, Provenance::of_this_run(Some(&device))).to_toml(PhysarumSim::NAME)
    };
    let driver = driver.open((setup.width, setup.height), true, text)?;
    let mut run =
        PhysarumRun { sim: Physarum::new(&setup, &device, variant)?, save_agents: args.save_agents };
    let steps = args.steps;
    let finishing = driver.run(&mut run, steps, "steps")?;
    let described = run.sim.describe();
    let Report { first, frames, written, seconds } = finishing.finish_while(|| drop((run, device)))?;
    say!(
        "physarum {}x{}, {} agents: {} steps{}, {frames} frames on {} in {seconds:.2} s ({:.3e} agent-steps/s) -> {}",
        setup.width,
        setup.height,
        setup.agents,
        steps,
        options::resumed(first),
        described,
        (u64::from(steps) - first) as f64 * f64::from(setup.agents) / seconds,
        super::destination(&written, "--gif, --mp4, --png, --png-dir or --save"),
    );
    Ok(())
}

fn run_sensitivity(args: &PhysarumArgs, setup: &PhysarumSetup) -> Result<()> {
    if args.output.options().any() {
        bail!(
            "--sensitivity draws a chart (--plot) and writes data (--data), not frames; drop --gif/--mp4/--png-dir"
        );
    }
    if !args.state.options().targets().is_empty() || args.state.resume.is_some() {
        bail!("--sensitivity runs two simulations from the start; drop --save/--checkpoint/--resume");
    }
    let targets: Vec<Target> = [("--plot", &args.plot), ("--data", &args.data)]
        .into_iter()
        .filter_map(|(option, path)| path.as_deref().map(|p| Target::file(option, p)))
        .collect();
    options::check_targets(&targets)?;
    if let Some(path) = &setup.init_image {
        simulations::physarum::luminance(path, 1, 1)?;
    }
    // Both outputs writable before the run.
    for target in &targets {
        drop(AtomicFile::create(&target.path)?);
    }
    let (device, variant) = args.backend.select()?;
    let started = Instant::now();
    let progress = super::progress_bar(args.steps, "step pairs");
    let result = sensitivity::run(setup, &device, variant, args.perturb, args.epsilon, args.steps, || {
        progress.inc(1)
    })?;
    progress.finish_and_clear();
    let seconds = started.elapsed().as_secs_f64();
    let what = match args.perturb {
        Perturb::Heading => format!("agent 0's heading + {:e} rad", args.epsilon),
        Perturb::Trail => format!("centre trail cell + {:e}", args.epsilon),
    };
    let last = result.distances.last().copied().unwrap_or(0.0);
    say!(
        "sensitivity, physarum {}x{}, {} agents, {} steps on {} variant {} ({seconds:.2} s): perturbed {what}; final ||Δtrail||₂ = {last:.4e}",
        setup.width,
        setup.height,
        setup.agents,
        args.steps,
        match &device {
            Device::Cpu => "cpu".to_string(),
            Device::Cuda(gpu) => gpu.name().to_string(),
        },
        variant.name(),
    );
    match result.fit {
        Some(f) if f.slope > 0.0 => say!(
            "largest Lyapunov exponent ≈ {:.5} per step (growth ×{:.3} per step, R² {:.3}), fitted over steps {}..{}: \
             from the lowest ln||Δ|| before the curve first comes within ln 10 of its maximum, to that step",
            f.slope,
            f.slope.exp(),
            f.r_squared,
            f.start,
            f.end
        ),
        Some(f) => say!(
            "no exponential growth: over steps {}..{} (the lowest ln||Δ|| before the curve first comes within \
             ln 10 of its maximum, to that step) the fitted slope is {:.5} per step (R² {:.3})",
            f.start,
            f.end,
            f.slope,
            f.r_squared
        ),
        None => say!(
            "no growth phase of at least {} steps: the perturbation never grew (or the run is too short)",
            sensitivity::MIN_FIT_POINTS
        ),
    }
    if let Some(path) = &args.data {
        let mut file = AtomicFile::create(path)?;
        file.write_all(result.tsv().as_bytes()).map_err(|e| {
            anyhow::anyhow!(
                "cannot write {}: {}",
                path.display(),
                simulations::render::output::describe_io(&e)
            )
        })?;
        say!("-> {}", file.commit()?.display());
    }
    if let Some(path) = &args.plot {
        let title =
            format!("Physarum {}x{}, {} agents: perturbed {what}", setup.width, setup.height, setup.agents);
        result.plot(&title, path)?;
        say!("-> {}", path.display());
    }
    Ok(())
}

/// Takes the options the command line did not give from a settings file. A `--preset` on the
/// command line brings its own model parameters; `--size` its width and height; `--init`
/// replaces the file's `init_image`.
fn apply(args: &mut PhysarumArgs, document: Document, given: &Given) -> Result<()> {
    args.output.apply(document.frames, given);
    args.backend.apply(document.run, given)?;
    let Some(table) = document.physarum else { return Ok(()) };
    if !given.has("preset") {
        if let Some(preset) = table.preset {
            args.preset = preset;
        }
        args.sensor_dist = args.sensor_dist.or(table.sensor_dist);
        args.sensor_angle = args.sensor_angle.or(table.sensor_angle);
        args.turn_angle = args.turn_angle.or(table.turn_angle);
        args.step_size = args.step_size.or(table.step_size);
        args.deposit = args.deposit.or(table.deposit);
        args.diffuse = args.diffuse.or(table.diffuse);
        args.decay = args.decay.or(table.decay);
    }
    if !given.has("size") {
        args.width = args.width.or(table.width);
        args.height = args.height.or(table.height);
    }
    if !given.has("init") {
        // A start on the command line replaces the file's image too.
        args.init_image = args.init_image.take().or(table.init_image);
    }
    given.fill("agents", &mut args.agents, table.agents);
    given.fill("steps", &mut args.steps, table.steps);
    given.fill("jitter", &mut args.jitter, table.jitter);
    given.fill("sensing", &mut args.sensing, table.sensing);
    given.fill("init", &mut args.init, table.init);
    given.fill("image_strength", &mut args.image_strength, table.image_strength);
    given.fill("seed", &mut args.seed.seed, table.seed.map(|s| s.0));
    Ok(())
}

/// The resolved settings of a run.
pub(crate) fn document(
    args: &PhysarumArgs,
    setup: &PhysarumSetup,
    run: RunTable,
    provenance: Provenance,
) -> Document {
    let table = PhysarumChoices::resolved(&args.preset, setup, args.steps);
    Document::of_run(table, run, args.output.table(), provenance)
}
