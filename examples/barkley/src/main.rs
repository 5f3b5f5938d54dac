//! `barkley`: a broken wave curls into a spiral; runs on GPU 0 if there is one (else on the
//! CPU, and says so). Its own output is the picture of both fields (`--output`); every other
//! output (`--gif`, `--mp4`, `--png-dir`, `--png`, `--save`, `--checkpoint`, `--resume`) is the
//! simulations library's driver's. Under `mpirun` or `srun` (or `--transport nccl`) each
//! process steps one band on its GPU, NCCL between them, and rank 0 writes every output.
//! `barkley serve` is the live view (`host_cli::serve`) with Barkley registered ([`live`]) before
//! the built-in simulations.

mod live;

use std::{io::Write, path::PathBuf, process::ExitCode};

use barkley::{
    Field, Model,
    driven::{Barkley, BarkleyRun},
};
use clap::{Parser, Subcommand};
use host_cli::{
    cli::{
        StdoutError,
        driver_args::{OutputArgs, StateArgs},
        options::RanksArgs,
    },
    serve::{
        Registry,
        builtin::{GrayScottLive, HeatLive, PhysarumLive},
    },
};
use simulations::{
    driver::{Driver, FrameDefaults, Report, Target, destination, handle_signals},
    render::MadeBy,
    split::decomposition::{LaunchRank, Launcher},
};

/// The result of writing to standard output through `host`'s console helpers (`print` and what
/// writes with it), which report a closed or full stdout as an error instead of panicking; that
/// error stays a [`StdoutError`], which [`main`] ends as `rust-gpu-sim` does.
macro_rules! stdout {
    ($result:expr) => {
        $result.map_err(|e| -> Box<dyn std::error::Error> {
            match e.downcast::<StdoutError>() {
                Ok(stdout) => stdout.into(),
                Err(other) => other.into(),
            }
        })
    };
}

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
    Serve(host_cli::cli::serve::ServeArgs),
}

/// The options of a run.
#[derive(clap::Args)]
struct Args {
    /// Grid width in cells (spacing 0.5).
    #[arg(long, default_value_t = 256, allow_hyphen_values = true, value_parser = clap::value_parser!(u32).range(i64::from(live::MIN_SIDE)..=i64::from(live::MAX_SIDE)))]
    width: u32,
    /// Grid height in cells (spacing 0.5).
    #[arg(long, default_value_t = 256, allow_hyphen_values = true, value_parser = clap::value_parser!(u32).range(i64::from(live::MIN_SIDE)..=i64::from(live::MAX_SIDE)))]
    height: u32,
    /// Time steps of 0.02 in all (a resumed checkpoint's count towards them).
    #[arg(long, default_value_t = 2500, allow_hyphen_values = true)]
    steps: u32,
    /// The picture of the final fields (u yellow, v red) to write.
    #[arg(long, short, default_value = "barkley.png")]
    output: PathBuf,
    /// Run on the CPU even where there is a GPU.
    #[arg(long)]
    cpu: bool,
    /// Split the grid into P bands of rows that exchange halos (bit-identical to one part); on
    /// the GPUs of --gpus, or on the CPU.
    #[arg(long, value_name = "P", allow_hyphen_values = true, value_parser = clap::value_parser!(u32).range(1..))]
    split: Option<u32>,
    /// Spread the parts over the first N GPUs (default 1; --split defaults to one part a GPU).
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = clap::value_parser!(u32).range(1..))]
    gpus: Option<u32>,
    #[command(flatten)]
    ranks: RanksArgs,
    #[command(flatten)]
    frames: OutputArgs<Barkley>,
    #[command(flatten)]
    state: StateArgs,
}

fn main() -> ExitCode {
    // Before any thread starts: threads keep the CPU affinity they start with.
    // Under `ulimit -v`, one allocator arena: others reserve address space the limit counts.
    simulations::memory::one_arena_under_address_limit();
    // The launcher's variables, read once here and passed down.
    let launcher = Launcher::from_env();
    simulations::split::binding::widen_at_start(&launcher);
    // One `error:` line and exit 1 for a bad command line, as `rust-gpu-sim`'s.
    let cli = match host_cli::cli::parse_as::<Cli>(&launcher) {
        Ok(cli) => cli,
        Err(exit) => return exit,
    };
    // Under `ulimit -v`, the worker threads now: the memory checks then count their stacks.
    let workers = simulations::memory::start_workers_under_address_limit();
    let result =
        workers.and_then(|()| launcher.job()).map_err(Into::into).and_then(|job| match cli.command {
            Some(Command::Serve(args)) => serve(args, job),
            None => run(&cli.run, job),
        });
    // A signal being handled ends the process with its own status and line.
    simulations::driver::await_signal_exit();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // Standard output closed or full: ended as `rust-gpu-sim` ends, silently as by SIGPIPE
        // when nobody reads any more, else with one `error:` line.
        Err(e) => match e.downcast::<StdoutError>() {
            Ok(stdout) => host_cli::cli::finish(Err((*stdout).into()), &launcher),
            Err(e) => {
                // Under a launcher, rank 0 reports what every rank finds alike.
                let alike = matches!(
                    e.downcast_ref::<simulations::Error>(),
                    Some(simulations::Error::SameOnEveryRank(_))
                );
                if let Some(line) = host_cli::cli::rank_error(&e.to_string(), alike, &launcher) {
                    // A failing stderr is ignored: there is nowhere left to report it.
                    let _ = writeln!(std::io::stderr().lock(), "barkley: {line}");
                }
                ExitCode::FAILURE
            }
        },
    }
}

/// The live view: Barkley first (a session starts with it), then the built-in simulations.
/// One process: refused as one of several of a launcher's job.
fn serve(
    args: host_cli::cli::serve::ServeArgs,
    job: Option<LaunchRank>,
) -> Result<(), Box<dyn std::error::Error>> {
    if let Some(job) = job.filter(|j| j.size > 1) {
        return Err(simulations::Error::SameOnEveryRank(format!(
            "barkley serve is one process, but {} started {}: run it alone",
            job.launcher, job.size
        ))
        .into());
    }
    let mut registry = Registry::new();
    registry.register(live::BarkleyLive).register(GrayScottLive).register(PhysarumLive).register(HeatLive);
    // The whole chain, the OS's reason included (`cannot listen on 127.0.0.1:8080 (--bind,
    // --port): Address already in use`), as `rust-gpu-sim serve` reports it.
    host_cli::serve::run(args, registry).map_err(|e| format!("{e:#}").into())
}

/// Where a run's fields are stepped: this process's part of an NCCL job, or here (on GPU 0,
/// or on the CPU where `None`), in one piece or split.
enum Place {
    Ranked(simulations::split::nccl::Communicator),
    Here(Option<std::sync::Arc<ptxkit_host::Gpu>>),
}

/// A run: in one piece or split in this process, or this process's part of an NCCL job
/// (`job`, the launcher's; or `--transport nccl`), where rank 0 alone writes.
fn run(args: &Args, job: Option<LaunchRank>) -> Result<(), Box<dyn std::error::Error>> {
    if args.frames.list_palettes {
        return stdout!(host_cli::cli::options::list_palettes());
    }
    if args.steps == 0 {
        // Every rank of a job finds it: said once, by rank 0.
        return Err(simulations::Error::SameOnEveryRank("--steps must be at least 1".into()).into());
    }
    let nccl = args.ranks.nccl(job)?;
    if !nccl {
        args.ranks.refuse_id_file()?;
    }
    handle_signals()?;
    let picture = vec![Target::file("--output", &args.output)];
    let driver = Driver::new(&args.frames, &args.state, &["npz", "npy"], picture)?;
    // Writable now (a read-only directory), not only after the run.
    simulations::outfile::probe(&args.output)
        .map_err(|e| simulations::Error::InvalidInput(format!("--output: {e}")))?;
    let model = Model::default();
    let settings = format!("barkley {}x{} {model:?}", args.width, args.height);
    // Where it runs first: rank 0 of an NCCL job alone opens the outputs.
    let place = match nccl {
        true => Place::Ranked(barkley::split::connect(&args.ranks, job, args.cpu, args.split, args.gpus)?),
        false => Place::Here(match args.cpu {
            true => None,
            false => match ptxkit_host::Gpu::open(0, &barkley::IMAGES) {
                Ok(gpu) => Some(gpu),
                Err(ptxkit_host::Error::NoGpu(why)) => {
                    let _ = writeln!(
                        std::io::stderr().lock(),
                        "barkley: no usable CUDA GPU ({why}): running on the CPU"
                    );
                    None
                }
                Err(e) => return Err(e.into()),
            },
        }),
    };
    let root = match &place {
        Place::Ranked(comm) => comm.is_root(),
        Place::Here(_) => true,
    };
    // The outputs open before the memory check, as `rust-gpu-sim`'s do: what their encoders
    // and queues may hold is then promised to it (`simulations::memory::promise`).
    let driver = driver.open((args.width, args.height), root, settings.clone())?;
    // Refused in one line, before the fields are allocated, where this process cannot have
    // the memory (free memory, `ulimit -v`, a control group's limit); under a hard limit with
    // what the outputs, the state's copy and later threads take.
    simulations::memory::check_host_need(
        &format!("a {}x{} grid", args.width, args.height),
        barkley::HOST_BYTES_PER_CELL * u64::from(args.width) * u64::from(args.height),
        "use a smaller --width or --height",
    )?;
    let field = Field::broken_wave(args.width, args.height, &model);
    let mut sim = match place {
        Place::Ranked(comm) => BarkleyRun::ranked(field, model, comm)?,
        Place::Here(gpu) => BarkleyRun::open(field, model, gpu, args.split, args.gpus)?,
    };
    let Report { first, mut written, seconds, .. } = driver.run(&mut sim, args.steps, "steps")?.finish()?;
    if !root {
        return Ok(());
    }
    let text = MadeBy { software: Barkley::SOFTWARE, settings: &settings };
    barkley::write_picture(&args.output, &sim.field, Some(text))?;
    written.insert(0, args.output.clone());
    let resumed = simulations::driver::resumed(first);
    stdout!(host_cli::cli::print(format_args!(
        "{} steps of {}x{}{resumed} on {} in {seconds:.2} s; wrote {}\n",
        args.steps,
        args.width,
        args.height,
        simulations::driver::DrivenSimulation::describe(&sim),
        destination(&written, "--output")
    )))
}
