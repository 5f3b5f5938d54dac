//! The command line itself: the program's name, the subcommands ([`Cli`], [`Command`]), the
//! parsing ([`parse`]) with its one-line errors, and the refusal to run a command that does
//! not split over processes under a launcher ([`one_process_only`]).

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand, error::ErrorKind as ClapErrorKind};
use simulations::split::decomposition::Launcher;

use super::{StdoutError, bench, console::error_line, finish, grayscott, heat, physarum, serve, settings};

/// The command's name, as a shell runs it.
pub const PROGRAM: &str = "rust-gpu-sim";

#[derive(Parser)]
#[command(name = PROGRAM, version, about = "GPU simulations whose kernels are written in Rust")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Gray-Scott reaction-diffusion, rendered to an animated GIF or PNG frames.
    Grayscott(Box<grayscott::GrayScottArgs>),
    /// 3-D heat diffusion with RK4; renders the middle z-slice.
    Heat(Box<heat::HeatArgs>),
    /// Physarum (slime mould) agents and their trail, rendered to a GIF or PNG frames; also
    /// the sensitivity analysis (--sensitivity) and the linear toy model (--toy-model).
    Physarum(Box<physarum::PhysarumArgs>),
    /// Time the GPU variants against the measured copy bandwidth.
    Bench {
        #[command(subcommand)]
        what: bench::BenchCommand,
    },
    /// Watch and steer simulations from a browser: serves a page on 127.0.0.1:8080 (a token
    /// is required on any other address).
    Serve(Box<serve::ServeArgs>),
}

impl Command {
    /// Whether the command may open a GPU: a simulation run whose backend is not the CPU
    /// (`main` starts opening it while the command checks its options and prepares).
    pub fn may_use_gpu(&self) -> bool {
        match self {
            Self::Grayscott(args) => args.may_use_gpu(),
            Self::Heat(args) => args.may_use_gpu(),
            Self::Physarum(args) => args.may_use_gpu(),
            Self::Bench { .. } => false,
            Self::Serve(args) => args.backend != simulations::BackendChoice::Cpu,
        }
    }
}

/// Parses the command line, and tells which options it gave (for layering it over a settings
/// file). Help and version are printed (exit 0); any other parser error is one `error:` line
/// and exit 1.
pub fn parse(launcher: &Launcher) -> Result<(Cli, settings::Given), ExitCode> {
    let parsed = Cli::command().try_get_matches().and_then(|matches| {
        let given = settings::Given::new(matches.subcommand().map(|(_, m)| m));
        Cli::from_arg_matches(&matches).map(|cli| (cli, given))
    });
    parsed.map_err(|e| parser_exit(&e, launcher))
}

/// Parses the command line of a model's own program (`barkley`) as [`parse`] parses this
/// one's: help and version printed (exit 0), any other parser error one `error:` line and
/// exit 1.
pub fn parse_as<C: Parser>(launcher: &Launcher) -> Result<C, ExitCode> {
    C::command()
        .try_get_matches()
        .and_then(|matches| C::from_arg_matches(&matches))
        .map_err(|e| parser_exit(&e, launcher))
}

/// Ends a parse: help or version printed (exit 0), or the error as one line (exit 1).
fn parser_exit(e: &clap::Error, launcher: &Launcher) -> ExitCode {
    if matches!(e.kind(), ClapErrorKind::DisplayHelp | ClapErrorKind::DisplayVersion) {
        return match e.print() {
            Ok(()) => ExitCode::SUCCESS,
            Err(io) => finish(Err(StdoutError(io).into()), launcher),
        };
    }
    error_line(&parser_error(e));
    ExitCode::FAILURE
}

/// A parser error as one line: clap's first line, its tip if any, and where to look.
fn parser_error(e: &clap::Error) -> String {
    if e.kind() == ClapErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        return "a subcommand is missing; see --help".into();
    }
    let text = e.render().to_string();
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("invalid arguments");
    let mut line = first.strip_prefix("error: ").unwrap_or(first).to_owned();
    for tip in text.lines().map(str::trim).filter_map(|l| l.strip_prefix("tip: ")) {
        line += &format!(" ({tip})");
    }
    line + "; see --help"
}

/// Refuses to run a command other than grayscott and heat (and their benches) as one of
/// several processes of a launcher (`mpirun -np 2`, `srun -n 2`): only those split their grid
/// over processes (NCCL);
/// several processes of another command would each run the whole job and write the same
/// outputs. A launcher job of one process runs as usual.
pub fn one_process_only(command: &Command, launcher: &Launcher) -> anyhow::Result<()> {
    if matches!(
        command,
        Command::Grayscott(_)
            | Command::Heat(_)
            | Command::Bench { what: bench::BenchCommand::Grayscott(_) | bench::BenchCommand::Heat(_) }
    ) {
        return Ok(());
    }
    if let Some(job) = launcher.job()?
        && job.size > 1
    {
        return Err(simulations::Error::SameOnEveryRank(format!(
            "started by {} as one of {} processes: only grayscott and heat (and bench grayscott and bench heat) run \
             as one process per GPU (NCCL); run this command as one process",
            job.launcher, job.size
        ))
        .into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parser_errors_are_one_line() {
        for args in [
            &["rust-gpu-sim", "grayscott", "--nope"][..],
            &["rust-gpu-sim", "grayscott", "--steps", "x"],
            &["rust-gpu-sim", "heat", "--fp", "3"],
            &["rust-gpu-sim"],
            &["rust-gpu-sim", "bench"],
            &["rust-gpu-sim", "physarum", "--sensing", "far"],
        ] {
            let Err(e) = Cli::try_parse_from(args) else { panic!("{args:?} parsed") };
            let line = parser_error(&e);
            assert!(!line.contains('\n') && line.ends_with("; see --help"), "{args:?}: {line}");
        }
        let Err(e) = Cli::try_parse_from(["rust-gpu-sim", "heat", "--fp", "3"]) else { panic!() };
        assert!(parser_error(&e).contains("'--fps'"), "{}", parser_error(&e));
    }

    #[test]
    fn negative_numbers_are_values() {
        let Ok(cli) = Cli::try_parse_from(["rust-gpu-sim", "grayscott", "--feed", "-inf", "--kill", "-0.5"])
        else {
            panic!("not parsed")
        };
        let Command::Grayscott(args) = cli.command else { panic!() };
        assert_eq!(args.feed, Some(f32::NEG_INFINITY));
        assert_eq!(args.kill, Some(-0.5));
    }
}
