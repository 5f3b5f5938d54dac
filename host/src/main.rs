//! `host`: the command line. Parses options, checks them, and drives the library.

use std::{path::PathBuf, process::ExitCode, time::Instant};

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};
use host::{
    BackendChoice, Device, bench,
    grayscott::cuda::{fused_shape_for, temporal_steps_for},
    grayscott::{self, GrayScott, Init, PRESETS, Rates, Setup, Variant},
    heat::{Heat, HeatInit, HeatSetup, HeatVariant},
    physarum::{
        AgentInit, Physarum, PhysarumSetup, PhysarumVariant, Sensing, ToyModel,
        sensitivity::{self, Perturb},
    },
    render::{self, FrameWriter, Outputs, PALETTES},
};
use indicatif::{ProgressBar, ProgressStyle};

#[derive(Parser)]
#[command(name = "host", version, about = "GPU simulations whose kernels are written in Rust")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Gray-Scott reaction-diffusion, rendered to an animated GIF or PNG frames.
    Grayscott(GrayScottArgs),
    /// 3-D heat diffusion with RK4; renders the middle z-slice.
    Heat(HeatArgs),
    /// Physarum (slime mould) agents and their trail, rendered to a GIF or PNG frames; also
    /// the sensitivity analysis (--sensitivity) and the linear toy model (--toy-model).
    Physarum(Box<PhysarumArgs>),
    /// Time the GPU variants against the measured copy bandwidth.
    Bench {
        #[command(subcommand)]
        what: BenchCommand,
    },
}

#[derive(Args)]
struct HeatArgs {
    /// Grid points per side, faces included (cube); --nx/--ny/--nz override it.
    #[arg(long, default_value_t = 128)]
    size: u32,
    #[arg(long)]
    nx: Option<u32>,
    #[arg(long)]
    ny: Option<u32>,
    #[arg(long)]
    nz: Option<u32>,
    /// RK4 steps.
    #[arg(long, default_value_t = 200)]
    steps: u32,
    /// Diffusivity α.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    alpha: f32,
    /// Grid spacing h.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    h: f32,
    /// Time step (default: 80% of the RK4 stability limit 2.785·h²/(12·α)).
    #[arg(long, allow_negative_numbers = true)]
    dt: Option<f32>,
    /// Value held on the six faces.
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    boundary_value: f32,
    /// Starting field.
    #[arg(long, value_enum, default_value_t = HeatInit::HotCube)]
    init: HeatInit,
    /// Seed of the blob positions.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Step of the progression (default: fused on a GPU, cpu without).
    #[arg(long, value_enum)]
    variant: Option<HeatVariant>,
    /// Where to run.
    #[arg(long, value_enum, default_value_t)]
    backend: BackendChoice,
    /// Write the middle z-slice after the run as a PNG.
    #[arg(long, value_name = "PATH")]
    png: Option<PathBuf>,
    /// Write the middle z-slice over time as a GIF (default name: heat.gif).
    #[arg(long, value_name = "PATH", num_args = 0..=1, default_missing_value = "heat.gif")]
    gif: Option<PathBuf>,
    /// Steps between GIF frames.
    #[arg(long, default_value_t = 10)]
    frame_every: u32,
    /// Colour palette; see `grayscott --list-palettes`.
    #[arg(long, default_value = "magma")]
    palette: String,
    /// GIF frames per second.
    #[arg(long, default_value_t = 20)]
    fps: u32,
}

#[derive(Args)]
struct PhysarumArgs {
    /// Grid side (square grid); --width/--height override it.
    #[arg(long, default_value_t = 1024)]
    size: u32,
    #[arg(long)]
    width: Option<u32>,
    #[arg(long)]
    height: Option<u32>,
    /// Number of agents.
    #[arg(long, default_value_t = 1_500_000)]
    agents: u32,
    /// Number of steps.
    #[arg(long, default_value_t = 600)]
    steps: u32,
    /// Steps between frames.
    #[arg(long, default_value_t = 10)]
    frame_every: u32,
    /// Named model parameters (network, jones, jones-narrow, writeup); the options below
    /// override them one by one.
    #[arg(long, default_value = "network")]
    preset: String,
    /// Sensor distance, cells (default: the preset's).
    #[arg(long, allow_negative_numbers = true)]
    sensor_dist: Option<f32>,
    /// Angle of the side sensors, radians (default: the preset's).
    #[arg(long, allow_negative_numbers = true)]
    sensor_angle: Option<f32>,
    /// Heading change of a turn, radians (default: the preset's).
    #[arg(long, allow_negative_numbers = true)]
    turn_angle: Option<f32>,
    /// Distance moved per step, cells (default: the preset's).
    #[arg(long, allow_negative_numbers = true)]
    step_size: Option<f32>,
    /// Trail deposited per agent per step (default: the preset's).
    #[arg(long, allow_negative_numbers = true)]
    deposit: Option<f32>,
    /// Blend weight of the 3×3 mean: t ← (1−s)·t + s·blur(t) (default: the preset's).
    #[arg(long, allow_negative_numbers = true)]
    diffuse: Option<f32>,
    /// Fraction of the trail lost per step, in [0, 1) (default: the preset's).
    #[arg(long, allow_negative_numbers = true)]
    decay: Option<f32>,
    /// Largest random heading change per step, radians (0: none).
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    jitter: f32,
    /// How sensors read the trail.
    #[arg(long, value_enum, default_value_t)]
    sensing: Sensing,
    /// Seed of the agents and of the device's counter-based random numbers.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where agents start.
    #[arg(long, value_enum, default_value_t)]
    init: AgentInit,
    /// Seed the trail from this image's luminance (agents random).
    #[arg(long, value_name = "PATH")]
    init_image: Option<PathBuf>,
    /// Trail = luminance in [0, 1] times this, for --init-image.
    #[arg(long, default_value_t = 3.0, allow_negative_numbers = true)]
    image_strength: f32,
    /// Colour palette (terrain, cave and islands are discrete); see --list-palettes.
    #[arg(long, default_value = "slime")]
    palette: String,
    /// Print the palettes and exit.
    #[arg(long)]
    list_palettes: bool,
    /// Write an animated GIF (default name: physarum.gif).
    #[arg(long, value_name = "PATH", num_args = 0..=1, default_missing_value = "physarum.gif")]
    gif: Option<PathBuf>,
    /// Write numbered PNG frames into this directory.
    #[arg(long, value_name = "DIR")]
    png_dir: Option<PathBuf>,
    /// GIF frames per second (1 to 100).
    #[arg(long, default_value_t = 25)]
    fps: u32,
    /// Where to run.
    #[arg(long, value_enum, default_value_t)]
    backend: BackendChoice,
    /// Step of the optimisation progression (default: optimized on a GPU, cpu without).
    #[arg(long, value_enum)]
    variant: Option<PhysarumVariant>,
    /// Run a reference and a perturbed simulation side by side and fit the largest Lyapunov
    /// exponent of ‖Δtrail‖₂.
    #[arg(long)]
    sensitivity: bool,
    /// What --sensitivity perturbs.
    #[arg(long, value_enum, default_value_t)]
    perturb: Perturb,
    /// Size of the perturbation (radians for heading, trail units for trail).
    #[arg(long, default_value_t = 1e-3, allow_negative_numbers = true)]
    epsilon: f32,
    /// --sensitivity: the log‖Δ‖ chart (PNG; needs fontconfig).
    #[arg(long, value_name = "PATH")]
    plot: Option<PathBuf>,
    /// --sensitivity: the distances as `step<TAB>distance` lines.
    #[arg(long, value_name = "PATH")]
    data: Option<PathBuf>,
    /// Analyse the write-up's linear toy model x ← A·x, A = [[1−β, α], [γ, 1−κ]], and exit.
    #[arg(long)]
    toy_model: bool,
    /// Toy model: pheromone deposition by agents (> 0).
    #[arg(long, default_value_t = 0.2, allow_negative_numbers = true)]
    alpha: f64,
    /// Toy model: pheromone decay, in (0, 1).
    #[arg(long, default_value_t = 0.1, allow_negative_numbers = true)]
    beta: f64,
    /// Toy model: agent response to pheromone (> 0).
    #[arg(long, default_value_t = 0.3, allow_negative_numbers = true)]
    gamma: f64,
    /// Toy model: agent damping, in (0, 1).
    #[arg(long, default_value_t = 0.2, allow_negative_numbers = true)]
    kappa: f64,
}

#[derive(Subcommand)]
enum BenchCommand {
    /// Every Gray-Scott GPU variant at several sizes, plus the default GIF job end to end.
    Grayscott(BenchArgs),
    /// Every heat GPU variant: ms per RK4 step against the 8 B/cell floor.
    Heat(HeatBenchArgs),
    /// Every Physarum GPU variant: agent-steps per second, and the write-up's tiny case.
    Physarum(PhysarumBenchArgs),
    /// Draw the chart of a saved report (`bench grayscott --json`), on any machine.
    Plot {
        /// The JSON report.
        #[arg(long, value_name = "PATH")]
        json: PathBuf,
        /// The PNG to write.
        #[arg(long, value_name = "PATH")]
        out: PathBuf,
    },
}

#[derive(Args)]
struct PhysarumBenchArgs {
    /// Grid sides (square grids), comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = [2048])]
    sizes: Vec<u32>,
    /// Agent counts, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = [1_000_000, 10_000_000])]
    agents: Vec<u32>,
    /// Variants to time, comma-separated (GPU variants only).
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = PhysarumVariant::GPU)]
    variants: Vec<PhysarumVariant>,
    /// Timed repeats per measurement (the median is reported).
    #[arg(long, default_value_t = 7)]
    repeats: usize,
}

#[derive(Args)]
struct HeatBenchArgs {
    /// Grid sides (cubes), comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = [600])]
    sizes: Vec<u32>,
    /// Variants to time, comma-separated (GPU variants only).
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [HeatVariant::Naive, HeatVariant::Reuse, HeatVariant::Fused, HeatVariant::Tiled, HeatVariant::Single])]
    variants: Vec<HeatVariant>,
    /// Timed repeats per measurement (the median is reported).
    #[arg(long, default_value_t = 5)]
    repeats: usize,
}

#[derive(Args)]
struct BenchArgs {
    /// Grid sides to time (square grids), comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = [512, 2048, 4096])]
    sizes: Vec<u32>,
    /// Variants to time, comma-separated (GPU variants only).
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [Variant::V0, Variant::V1, Variant::Fused, Variant::Tiled, Variant::Temporal])]
    variants: Vec<Variant>,
    /// Timed repeats per measurement (the median is reported).
    #[arg(long, default_value_t = 7)]
    repeats: usize,
    /// Use the fixed default launch shapes instead of tuned ones.
    #[arg(long)]
    no_autotune: bool,
    /// Skip the end-to-end GIF job.
    #[arg(long)]
    no_end_to_end: bool,
    /// Also write every figure as JSON.
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
    /// Also draw effective bandwidth per variant against the copy bandwidth (PNG).
    #[arg(long, value_name = "PATH")]
    plot: Option<PathBuf>,
}

#[derive(Args)]
struct GrayScottArgs {
    /// Grid side (square grid); --width/--height override it.
    #[arg(long, default_value_t = 512)]
    size: u32,
    /// Grid width in cells.
    #[arg(long)]
    width: Option<u32>,
    /// Grid height in cells.
    #[arg(long)]
    height: Option<u32>,
    /// Number of time steps (default: the preset's).
    #[arg(long)]
    steps: Option<u32>,
    /// Steps between frames.
    #[arg(long, default_value_t = 50)]
    frame_every: u32,
    /// Named (F, k) pair; see --list-presets.
    #[arg(long, default_value = "coral")]
    preset: String,
    /// Print the presets and exit.
    #[arg(long)]
    list_presets: bool,
    /// Feed rate F (overrides the preset).
    #[arg(long, allow_negative_numbers = true)]
    feed: Option<f32>,
    /// Kill rate k (overrides the preset).
    #[arg(long, allow_negative_numbers = true)]
    kill: Option<f32>,
    /// Diffusion rate of U.
    #[arg(long, allow_negative_numbers = true)]
    du: Option<f32>,
    /// Diffusion rate of V.
    #[arg(long, allow_negative_numbers = true)]
    dv: Option<f32>,
    /// Time step.
    #[arg(long, allow_negative_numbers = true)]
    dt: Option<f32>,
    /// Seed of the initial noise and random spots.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Starting pattern (default: the preset's).
    #[arg(long, value_enum)]
    init: Option<Init>,
    /// Seed V from an image's luminance instead (any size; it is resized to the grid).
    #[arg(long, value_name = "PATH")]
    init_image: Option<PathBuf>,
    /// Write an animated GIF (default name: grayscott.gif).
    #[arg(long, value_name = "PATH", num_args = 0..=1, default_missing_value = "grayscott.gif")]
    gif: Option<PathBuf>,
    /// Write numbered PNG frames into this directory (created if its parent exists).
    #[arg(long, value_name = "DIR")]
    png_dir: Option<PathBuf>,
    /// Colour palette; see --list-palettes.
    #[arg(long, default_value = "cyberpunk")]
    palette: String,
    /// Print the palettes and exit.
    #[arg(long)]
    list_palettes: bool,
    /// GIF frames per second (1 to 100).
    #[arg(long, default_value_t = 25)]
    fps: u32,
    /// Where to run.
    #[arg(long, value_enum, default_value_t)]
    backend: BackendChoice,
    /// Step of the optimisation progression to run (default: fused on a GPU, cpu without).
    #[arg(long, value_enum)]
    variant: Option<Variant>,
    /// Use the fixed default launch shape instead of the tuned (and cached) one.
    #[arg(long)]
    no_autotune: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Grayscott(args) => run_grayscott(args),
        Command::Heat(args) => run_heat(args),
        Command::Physarum(args) => run_physarum(*args),
        Command::Bench { what: BenchCommand::Grayscott(args) } => run_bench(args),
        Command::Bench { what: BenchCommand::Heat(args) } => run_bench_heat(args),
        Command::Bench { what: BenchCommand::Physarum(args) } => run_bench_physarum(args),
        Command::Bench { what: BenchCommand::Plot { json, out } } => plot_saved(&json, &out),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run_grayscott(args: GrayScottArgs) -> Result<()> {
    if args.list_presets {
        println!("{:<10} {:>7} {:>8} {:>6} {:>6}  description", "preset", "F", "k", "init", "steps");
        for p in PRESETS {
            let init = clap::ValueEnum::to_possible_value(&p.init).expect("named");
            println!(
                "{:<10} {:>7} {:>8} {:>6} {:>6}  {} [{}]",
                p.name,
                p.feed,
                p.kill,
                init.get_name(),
                p.steps,
                p.description,
                p.class
            );
        }
        println!(
            "(all with Du = {}, Dv = {}, dt = {})",
            grayscott::DEFAULT_DU,
            grayscott::DEFAULT_DV,
            grayscott::DEFAULT_DT
        );
        return Ok(());
    }
    if args.list_palettes {
        for p in PALETTES {
            println!("{:<10} {}", p.name, p.description);
        }
        return Ok(());
    }

    let preset = grayscott::preset(&args.preset).with_context(|| {
        let names: Vec<_> = PRESETS.iter().map(|p| p.name).collect();
        format!("unknown preset '{}'; valid presets: {}", args.preset, names.join(", "))
    })?;
    let palette = render::palette(&args.palette).with_context(|| {
        format!("unknown palette '{}'; valid palettes: {}", args.palette, render::palette::palette_names())
    })?;
    let steps = args.steps.unwrap_or(preset.steps);
    if steps == 0 {
        bail!("--steps must be at least 1");
    }
    if args.frame_every == 0 {
        bail!("--frame-every must be at least 1");
    }
    if !(1..=100).contains(&args.fps) {
        bail!("--fps must be between 1 and 100, got {}", args.fps);
    }
    let base = preset.rates();
    let setup = Setup {
        width: args.width.unwrap_or(args.size),
        height: args.height.unwrap_or(args.size),
        rates: Rates {
            du: args.du.unwrap_or(base.du),
            dv: args.dv.unwrap_or(base.dv),
            feed: args.feed.unwrap_or(base.feed),
            kill: args.kill.unwrap_or(base.kill),
            dt: args.dt.unwrap_or(base.dt),
        },
        init: args.init.unwrap_or(preset.init),
        init_image: args.init_image.clone(),
        seed: args.seed,
    };
    setup.validate()?;
    if let Some(path) = &setup.init_image {
        // Fail on an unreadable image before anything else starts.
        image::ImageReader::open(path)
            .and_then(|r| r.with_guessed_format())
            .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
    }

    // Open outputs before simulating, so an unwritable path fails now.
    let outputs = Outputs { gif: args.gif.clone(), png_dir: args.png_dir.clone(), fps: args.fps };
    let mut writer = if outputs.any() {
        Some(FrameWriter::create(&outputs, setup.width, setup.height, palette)?)
    } else {
        None
    };

    let (device, variant, notice) = grayscott::select(args.backend, args.variant)?;
    if let Some(notice) = notice {
        eprintln!("note: {notice}");
    }
    let started = Instant::now();
    let mut sim = GrayScott::new(&setup, &device, variant)?;
    // Tuned launch settings (timed once per GPU and size, then cached).
    match (&device, variant) {
        (Device::Cuda(gpu), Variant::Fused) => {
            let (shape, _) = fused_shape_for(gpu, setup.width, setup.height, !args.no_autotune)?;
            sim.cuda_engine().expect("a CUDA run").set_fused_shape(shape);
        }
        (Device::Cuda(gpu), Variant::Temporal) => {
            let (steps, _) = temporal_steps_for(gpu, setup.width, setup.height, !args.no_autotune)?;
            sim.cuda_engine().expect("a CUDA run").set_temporal_steps(steps);
        }
        _ => {}
    }

    let progress = progress_bar(steps, "steps");
    let mut frames = 0u32;
    let mut remaining = steps;
    while remaining > 0 {
        let chunk = remaining.min(args.frame_every);
        sim.step(chunk)?;
        remaining -= chunk;
        match &mut writer {
            Some(writer) => {
                // Frames come back while the simulation goes on; hand each to the encoder.
                sim.snapshot()?;
                for frame in sim.collect(false)? {
                    writer.push(frame)?;
                    frames += 1;
                }
            }
            None => sim.synchronize()?,
        }
        progress.inc(u64::from(chunk));
    }
    if let Some(writer) = &mut writer {
        for frame in sim.collect(true)? {
            writer.push(frame)?;
            frames += 1;
        }
    }
    progress.finish_and_clear();
    let written = match writer {
        Some(writer) => writer.finish()?,
        None => Vec::new(),
    };
    let seconds = started.elapsed().as_secs_f64();
    let destination = if written.is_empty() {
        "no output (use --gif or --png-dir)".to_string()
    } else {
        written.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
    };
    println!(
        "grayscott {}x{}: {} steps, {frames} frames on {} in {seconds:.2} s ({:.0} steps/s) -> {destination}",
        setup.width,
        setup.height,
        steps,
        sim.describe(),
        f64::from(steps) / seconds,
    );
    Ok(())
}

fn run_bench(args: BenchArgs) -> Result<()> {
    if args.sizes.is_empty() || args.sizes.iter().any(|&s| s == 0 || s > 32_768) {
        bail!("--sizes must list grid sides between 1 and 32768");
    }
    check_repeats(args.repeats)?;
    if let Some(v) = args.variants.iter().find(|v| !v.is_gpu()) {
        bail!("bench times GPU variants; drop {} from --variants", v.name());
    }
    let json = match &args.json {
        Some(path) => Some(host::render::output::AtomicFile::create(path)?),
        None => None,
    };
    if let Some(path) = &args.plot {
        // Fail now, not after the measurements.
        if !bench::can_plot() {
            bail!(
                "--plot needs the fontconfig library (libfontconfig.so.1) to draw text, and this machine \
                 has none; drop --plot, keep --json, and draw it elsewhere with `host bench plot`"
            );
        }
        drop(host::render::output::AtomicFile::create(path)?);
    }
    let gpu = host::cuda::Gpu::open().context("bench needs a CUDA GPU")?;
    let options = bench::Options {
        sizes: args.sizes,
        repeats: args.repeats,
        autotune: !args.no_autotune,
        variants: args.variants,
        end_to_end: !args.no_end_to_end,
    };
    let report = bench::run(&gpu, &options)?;
    print!("{}", report.table());
    if let Some(mut file) = json {
        use std::io::Write;
        file.write_all(report.json().as_bytes()).context("writing the JSON report")?;
        let path = file.commit()?;
        println!("-> {}", path.display());
    }
    if let Some(path) = &args.plot {
        bench::plot(&report, path)?;
        println!("-> {}", path.display());
    }
    Ok(())
}

fn plot_saved(json: &std::path::Path, out: &std::path::Path) -> Result<()> {
    let text = std::fs::read_to_string(json).with_context(|| format!("cannot read {}", json.display()))?;
    let report = bench::Report::from_json(&text).with_context(|| {
        format!("{} is not a report written by `host bench grayscott --json`", json.display())
    })?;
    if !bench::can_plot() {
        bail!("drawing text needs the fontconfig library (libfontconfig.so.1), and this machine has none");
    }
    bench::plot(&report, out)?;
    println!("-> {}", out.display());
    Ok(())
}

fn run_heat(args: HeatArgs) -> Result<()> {
    let palette = host::render::palette(&args.palette).with_context(|| {
        format!(
            "unknown palette '{}'; valid palettes: {}",
            args.palette,
            host::render::palette::palette_names()
        )
    })?;
    if args.steps == 0 {
        bail!("--steps must be at least 1");
    }
    if args.frame_every == 0 {
        bail!("--frame-every must be at least 1");
    }
    let n = [args.nx.unwrap_or(args.size), args.ny.unwrap_or(args.size), args.nz.unwrap_or(args.size)];
    let mut setup = HeatSetup {
        n,
        alpha: args.alpha,
        h: args.h,
        dt: 0.0,
        boundary: args.boundary_value,
        init: args.init,
        seed: args.seed,
    };
    setup.dt = args.dt.unwrap_or(0.8 * setup.dt_limit());
    setup.validate()?;

    let (width, height) = (n[0], n[1]);
    let gif_outputs = Outputs { gif: args.gif.clone(), png_dir: None, fps: args.fps };
    let mut writer = if gif_outputs.any() {
        Some(FrameWriter::create(&gif_outputs, width, height, palette)?)
    } else {
        None
    };
    let png = match &args.png {
        Some(path) => Some(host::render::output::AtomicFile::create(path)?),
        None => None,
    };
    drop(png); // checked writable; written at the end

    let (device, notice) = Device::select(match (args.backend, args.variant) {
        (BackendChoice::Auto, Some(v)) if v != HeatVariant::Cpu => BackendChoice::Cuda,
        (_, Some(HeatVariant::Cpu)) if args.backend != BackendChoice::Cuda => BackendChoice::Cpu,
        (choice, _) => choice,
    })?;
    if let Some(notice) = notice {
        eprintln!("note: {notice}");
    }
    let variant = args.variant.unwrap_or(if matches!(device, Device::Cpu) {
        HeatVariant::Cpu
    } else {
        HeatVariant::Fused
    });
    let started = Instant::now();
    let mut sim = Heat::new(&setup, &device, variant)?;
    // Colours span the initial range (and the boundary value), fixed over the run.
    let initial = host::heat::initial_field(&setup);
    let lo = initial.iter().copied().fold(setup.boundary, f32::min);
    let hi = initial.iter().copied().fold(setup.boundary, f32::max);
    let to_levels = |slice: &[f32]| -> Vec<u8> {
        let span = (hi - lo).max(f32::MIN_POSITIVE);
        slice.iter().map(|&x| (((x - lo) / span).clamp(0.0, 1.0) * 255.0) as u8).collect()
    };

    let progress = progress_bar(args.steps, "RK4 steps");
    let mut frames = 0u32;
    let mut remaining = args.steps;
    while remaining > 0 {
        let chunk = remaining.min(args.frame_every);
        sim.step(chunk)?;
        remaining -= chunk;
        match &mut writer {
            Some(writer) => {
                writer.push(to_levels(&sim.middle_slice()?))?;
                frames += 1;
            }
            None => sim.synchronize()?,
        }
        progress.inc(u64::from(chunk));
    }
    progress.finish_and_clear();
    let mut written: Vec<String> = Vec::new();
    if let Some(writer) = writer {
        written.extend(writer.finish()?.iter().map(|p| p.display().to_string()));
    }
    if let Some(path) = &args.png {
        host::render::write_png(path, &to_levels(&sim.middle_slice()?), width, height, palette)?;
        written.push(path.display().to_string());
    }
    let seconds = started.elapsed().as_secs_f64();
    let error = match host::heat::sine_error(&setup, &sim.field()?, sim.time()) {
        Some((abs, rel)) => format!(", error against the exact solution {abs:.3e} ({rel:.3e} relative)"),
        None => String::new(),
    };
    let destination =
        if written.is_empty() { "no output (use --png or --gif)".to_string() } else { written.join(", ") };
    println!(
        "heat {}x{}x{}: {} RK4 steps (dt {:.4e}, t = {:.4e}), {frames} frames on {} in {seconds:.2} s{error} -> {destination}",
        n[0],
        n[1],
        n[2],
        args.steps,
        setup.dt,
        sim.time(),
        sim.describe(),
    );
    Ok(())
}

fn run_bench_heat(args: HeatBenchArgs) -> Result<()> {
    if args.sizes.is_empty() || args.sizes.iter().any(|&s| !(3..=host::heat::MAX_SIDE).contains(&s)) {
        bail!("--sizes must list grid sides between 3 and {}", host::heat::MAX_SIDE);
    }
    check_repeats(args.repeats)?;
    if let Some(v) = args.variants.iter().find(|v| **v == HeatVariant::Cpu) {
        bail!("bench times GPU variants; drop {} from --variants", v.name());
    }
    let gpu = host::cuda::Gpu::open().context("bench needs a CUDA GPU")?;
    let (copy, rows) = bench::run_heat(&gpu, &args.sizes, &args.variants, args.repeats)?;
    print!("{}", bench::heat_table(&gpu, copy, &rows));
    Ok(())
}

/// A progress bar on stderr counting `unit`, with the rate and the time left.
fn progress_bar(len: u32, unit: &str) -> ProgressBar {
    let template = format!("{{spinner}} [{{bar:40}}] {{pos}}/{{len}} {unit}  {{per_sec}}  eta {{eta}}");
    ProgressBar::new(u64::from(len))
        .with_style(ProgressStyle::with_template(&template).expect("valid template").progress_chars("=> "))
}

fn check_repeats(repeats: usize) -> Result<()> {
    if repeats < 3 {
        bail!("--repeats must be at least 3 (the median of fewer says little)");
    }
    Ok(())
}

fn run_toy_model(args: &PhysarumArgs) -> Result<()> {
    let model = ToyModel { alpha: args.alpha, beta: args.beta, gamma: args.gamma, kappa: args.kappa };
    for (name, value, ok, range) in [
        ("alpha", model.alpha, model.alpha > 0.0, "above 0"),
        ("beta", model.beta, model.beta > 0.0 && model.beta < 1.0, "in (0, 1)"),
        ("gamma", model.gamma, model.gamma > 0.0, "above 0"),
        ("kappa", model.kappa, model.kappa > 0.0 && model.kappa < 1.0, "in (0, 1)"),
    ] {
        if !(value.is_finite() && ok) {
            bail!("--{name} must be {range}, got {value}");
        }
    }
    let a = model.analyse();
    let show =
        |(re, im): (f64, f64)| if im == 0.0 { format!("{re:.6}") } else { format!("{re:.6} {im:+.6}i") };
    println!(
        "A = [[{:.4}, {:.4}], [{:.4}, {:.4}]]",
        1.0 - model.beta,
        model.alpha,
        model.gamma,
        1.0 - model.kappa
    );
    println!("eigenvalues: {}, {}", show(a.eigenvalues[0]), show(a.eigenvalues[1]));
    println!("spectral radius ρ(A) = {:.6}", a.spectral_radius);
    println!("Lyapunov exponent log ρ(A) = {:.6} per step", a.lyapunov);
    println!(
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

fn run_physarum(args: PhysarumArgs) -> Result<()> {
    if args.toy_model {
        return run_toy_model(&args);
    }
    if args.list_palettes {
        for p in PALETTES {
            println!("{:<10} {}", p.name, p.description);
        }
        return Ok(());
    }
    let palette = render::palette(&args.palette).with_context(|| {
        format!("unknown palette '{}'; valid palettes: {}", args.palette, render::palette::palette_names())
    })?;
    if args.steps == 0 {
        bail!("--steps must be at least 1");
    }
    if args.frame_every == 0 {
        bail!("--frame-every must be at least 1");
    }
    if !(1..=100).contains(&args.fps) {
        bail!("--fps must be between 1 and 100, got {}", args.fps);
    }
    let preset = host::physarum::physarum_preset(&args.preset).with_context(|| {
        let names: Vec<_> = host::physarum::PHYSARUM_PRESETS.iter().map(|p| p.name).collect();
        format!("unknown preset '{}'; valid presets: {}", args.preset, names.join(", "))
    })?;
    let setup = PhysarumSetup {
        width: args.width.unwrap_or(args.size),
        height: args.height.unwrap_or(args.size),
        agents: args.agents,
        sensor_dist: args.sensor_dist.unwrap_or(preset.sensor_dist),
        sensor_angle: args.sensor_angle.unwrap_or(preset.sensor_angle),
        turn_angle: args.turn_angle.unwrap_or(preset.turn_angle),
        step_size: args.step_size.unwrap_or(preset.step_size),
        deposit: args.deposit.unwrap_or(preset.deposit),
        diffuse: args.diffuse.unwrap_or(preset.diffuse),
        decay: args.decay.unwrap_or(preset.decay),
        jitter: args.jitter,
        sensing: args.sensing,
        seed: args.seed,
        init: args.init,
        init_image: args.init_image.clone(),
        image_strength: args.image_strength,
    };
    setup.validate()?;
    if let Some(path) = &setup.init_image {
        // Fail on an unreadable image before anything else starts.
        host::physarum::luminance(path, 1, 1)?;
    }
    if args.sensitivity {
        return run_sensitivity(&args, &setup);
    }
    if args.plot.is_some() || args.data.is_some() {
        bail!("--plot and --data belong to --sensitivity");
    }

    // Open outputs before simulating, so an unwritable path fails now.
    let outputs = Outputs { gif: args.gif.clone(), png_dir: args.png_dir.clone(), fps: args.fps };
    let mut writer = if outputs.any() {
        Some(FrameWriter::create(&outputs, setup.width, setup.height, palette)?)
    } else {
        None
    };
    let (device, variant) = physarum_device(args.backend, args.variant)?;
    let started = Instant::now();
    let mut sim = Physarum::new(&setup, &device, variant)?;
    let progress = progress_bar(args.steps, "steps");
    let mut frames = 0u32;
    let mut remaining = args.steps;
    while remaining > 0 {
        let chunk = remaining.min(args.frame_every);
        sim.step(chunk)?;
        remaining -= chunk;
        match &mut writer {
            Some(writer) => {
                writer.push(host::physarum::trail_levels(&sim.trail()?))?;
                frames += 1;
            }
            None => sim.synchronize()?,
        }
        progress.inc(u64::from(chunk));
    }
    progress.finish_and_clear();
    let written = match writer {
        Some(writer) => writer.finish()?,
        None => Vec::new(),
    };
    let seconds = started.elapsed().as_secs_f64();
    let destination = if written.is_empty() {
        "no output (use --gif or --png-dir)".to_string()
    } else {
        written.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
    };
    println!(
        "physarum {}x{}, {} agents: {} steps, {frames} frames on {} in {seconds:.2} s ({:.3e} agent-steps/s) -> {destination}",
        setup.width,
        setup.height,
        setup.agents,
        args.steps,
        sim.describe(),
        f64::from(args.steps) * f64::from(setup.agents) / seconds,
    );
    Ok(())
}

/// The device and variant of a Physarum run: a GPU variant asks for the GPU, `cpu` for the
/// CPU; without `--variant`, the best of the chosen backend.
fn physarum_device(
    backend: BackendChoice,
    variant: Option<PhysarumVariant>,
) -> Result<(Device, PhysarumVariant)> {
    let choice = match (backend, variant) {
        (BackendChoice::Auto, Some(v)) if v != PhysarumVariant::Cpu => BackendChoice::Cuda,
        (BackendChoice::Auto, Some(PhysarumVariant::Cpu)) => BackendChoice::Cpu,
        (BackendChoice::Cpu, Some(v)) if v != PhysarumVariant::Cpu => {
            bail!("--variant {} runs on a CUDA GPU; drop --backend cpu or pick --variant cpu", v.name())
        }
        (choice, _) => choice,
    };
    let (device, notice) = Device::select(choice)?;
    if let Some(notice) = notice {
        eprintln!("note: {notice}");
    }
    let variant = variant.unwrap_or(match device {
        Device::Cpu => PhysarumVariant::Cpu,
        Device::Cuda(_) => PhysarumVariant::Optimized,
    });
    Ok((device, variant))
}

fn run_sensitivity(args: &PhysarumArgs, setup: &PhysarumSetup) -> Result<()> {
    if args.gif.is_some() || args.png_dir.is_some() {
        bail!(
            "--sensitivity draws a chart (--plot) and writes data (--data), not frames; drop --gif/--png-dir"
        );
    }
    if args.plot.is_some() && !bench::can_plot() {
        bail!(
            "--plot needs the fontconfig library (libfontconfig.so.1) to draw text, and this machine has none; \
             keep --data and draw the chart elsewhere"
        );
    }
    // Check both outputs are writable before the run.
    for path in [&args.plot, &args.data].into_iter().flatten() {
        drop(host::render::output::AtomicFile::create(path)?);
    }
    let (device, variant) = physarum_device(args.backend, args.variant)?;
    let started = Instant::now();
    let progress = progress_bar(args.steps, "step pairs");
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
    println!(
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
        Some(f) if f.slope > 0.0 => println!(
            "largest Lyapunov exponent ≈ {:.5} per step (growth ×{:.3} per step, R² {:.3}), fitted over steps {}..{}: \
             from the lowest ln||Δ|| before the curve first comes within ln 10 of its maximum, to that step",
            f.slope,
            f.slope.exp(),
            f.r_squared,
            f.start,
            f.end
        ),
        Some(f) => println!(
            "no exponential growth: over steps {}..{} (the lowest ln||Δ|| before the curve first comes within \
             ln 10 of its maximum, to that step) the fitted slope is {:.5} per step (R² {:.3})",
            f.start, f.end, f.slope, f.r_squared
        ),
        None => println!(
            "no growth phase of at least {} steps: the perturbation never grew (or the run is too short)",
            sensitivity::MIN_FIT_POINTS
        ),
    }
    if let Some(path) = &args.data {
        let mut file = host::render::output::AtomicFile::create(path)?;
        use std::io::Write;
        file.write_all(result.tsv().as_bytes()).context("writing the distances")?;
        println!("-> {}", file.commit()?.display());
    }
    if let Some(path) = &args.plot {
        let title =
            format!("Physarum {}x{}, {} agents: perturbed {what}", setup.width, setup.height, setup.agents);
        result.plot(&title, path)?;
        println!("-> {}", path.display());
    }
    Ok(())
}

fn run_bench_physarum(args: PhysarumBenchArgs) -> Result<()> {
    if args.sizes.is_empty() || args.sizes.iter().any(|&s| s == 0 || s > host::physarum::MAX_SIDE) {
        bail!("--sizes must list grid sides between 1 and {}", host::physarum::MAX_SIDE);
    }
    if args.agents.is_empty() || args.agents.iter().any(|&a| a == 0 || a > host::physarum::MAX_AGENTS) {
        bail!("--agents must list counts between 1 and {}", host::physarum::MAX_AGENTS);
    }
    check_repeats(args.repeats)?;
    if args.variants.contains(&PhysarumVariant::Cpu) {
        bail!("bench times GPU variants; drop cpu from --variants");
    }
    let gpu = host::cuda::Gpu::open().context("bench needs a CUDA GPU")?;
    let (copy, rows, tiny) =
        bench::run_physarum(&gpu, &args.sizes, &args.agents, &args.variants, args.repeats)?;
    print!("{}", bench::physarum_table(&gpu, copy, &rows, &tiny));
    Ok(())
}
