//! `barkley`: a broken wave curls into a spiral; runs on GPU 0 if there is one (else on the
//! CPU, and says so). Its own output is the picture of both fields (`--output`); every other
//! output (`--gif`, `--mp4`, `--png-dir`, `--png`, `--save`, `--checkpoint`, `--resume`) is the
//! simulations library's driver's. `barkley serve` is the live view (`host::serve`) with
//! Barkley registered ([`live`]) before the built-in simulations.

mod live;

use std::{path::PathBuf, process::ExitCode};

use barkley::{
    Field, Model,
    driven::{Barkley, BarkleyRun},
};
use clap::{Parser, Subcommand};
use host::{
    cli::driver_args::{OutputArgs, StateArgs},
    serve::{
        Registry,
        builtin::{GrayScottLive, HeatLive, PhysarumLive},
    },
};
use simulations::driver::{Driver, Report, Target, destination, handle_signals};

/// Barkley's spiral waves: a broken wave curls into a rotating spiral. Writes the final
/// (u, v) as a picture; frames, videos, saves and checkpoints as asked. Runs on GPU 0 if
/// there is one, else on the CPU.
#[derive(Parser)]
#[command(args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    run: Args,
}

#[derive(Subcommand)]
enum Command {
    /// Watch and steer Barkley (and the built-in simulations) live in a browser.
    Serve(host::cli::serve::ServeArgs),
}

/// The options of a run.
#[derive(clap::Args)]
struct Args {
    /// Grid width in cells (spacing 0.5).
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(i64::from(live::MIN_SIDE)..=i64::from(live::MAX_SIDE)))]
    width: u32,
    /// Grid height in cells (spacing 0.5).
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(i64::from(live::MIN_SIDE)..=i64::from(live::MAX_SIDE)))]
    height: u32,
    /// Time steps of 0.02 in all (a resumed checkpoint's count towards them).
    #[arg(long, default_value_t = 2500, allow_negative_numbers = true)]
    steps: u32,
    /// The picture of the final fields (u yellow, v red) to write.
    #[arg(long, short, default_value = "barkley.png")]
    output: PathBuf,
    /// Run on the CPU even where there is a GPU.
    #[arg(long)]
    cpu: bool,
    /// Split the grid into P bands of rows that exchange halos (bit-identical to one part); on
    /// the GPUs of --gpus, or on the CPU.
    #[arg(long, value_name = "P", value_parser = clap::value_parser!(u32).range(1..))]
    split: Option<u32>,
    /// Spread the parts over the first N GPUs (default 1; --split defaults to one part a GPU).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    gpus: Option<u32>,
    #[command(flatten)]
    frames: OutputArgs<Barkley>,
    #[command(flatten)]
    state: StateArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Serve(args)) => serve(args),
        None => run(&cli.run),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("barkley: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The live view: Barkley first (a session starts with it), then the built-in simulations.
fn serve(args: host::cli::serve::ServeArgs) -> Result<(), Box<dyn std::error::Error>> {
    let mut registry = Registry::new();
    registry.register(live::BarkleyLive).register(GrayScottLive).register(PhysarumLive).register(HeatLive);
    Ok(host::serve::run(args, registry)?)
}

fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    if args.frames.list_palettes {
        return Ok(host::cli::options::list_palettes()?);
    }
    if args.steps == 0 {
        return Err("--steps must be at least 1".into());
    }
    handle_signals()?;
    let picture = vec![Target::file("--output", &args.output)];
    let driver = Driver::new(&args.frames, &args.state, &["npz", "npy"], picture)?;
    barkley::check_output(&args.output)?;
    let model = Model::default();
    let gpu = match args.cpu {
        true => None,
        false => match ptxkit_host::Gpu::open(0, &barkley::IMAGES) {
            Ok(gpu) => Some(gpu),
            Err(ptxkit_host::Error::NoGpu(why)) => {
                eprintln!("barkley: no usable CUDA GPU ({why}): running on the CPU");
                None
            }
            Err(e) => return Err(e.into()),
        },
    };
    let field = Field::broken_wave(args.width, args.height, &model);
    let mut sim = BarkleyRun::open(field, model, gpu, args.split, args.gpus)?;
    let settings = format!("barkley {}x{} {model:?}", args.width, args.height);
    let driver = driver.open((args.width, args.height), true, settings)?;
    let Report { first, mut written, seconds, .. } = driver.run(&mut sim, args.steps, "steps")?.finish()?;
    barkley::write_output(&args.output, &barkley::encode_png(&sim.field)?)?;
    written.insert(0, args.output.clone());
    let resumed = simulations::driver::resumed(first);
    println!(
        "{} steps of {}x{}{resumed} on {} in {seconds:.2} s; wrote {}",
        args.steps,
        args.width,
        args.height,
        simulations::driver::Simulation::describe(&sim),
        destination(&written, "--output")
    );
    Ok(())
}
