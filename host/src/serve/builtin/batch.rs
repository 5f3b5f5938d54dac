//! The built-in models' batch equivalents: the `grayscott`, `physarum` or `heat` command line
//! of a session's settings, and the `--config` document the CLI records for it (made by the
//! CLI's own settings module from that command line), so a run found in the browser is one
//! command away from a batch run. Only documents go through the CLI's parser; the simulations
//! are checked and built by the library ([`super`]).

use clap::Parser;
use simulations::Device;

use crate::cli::{
    Cli, Command, PROGRAM,
    settings::{Provenance, command_line},
};

/// The arguments (without the program's name) that run `simulation` with `options` (name
/// without `--`, value) and the two settings every model has, for `steps` steps.
pub(super) fn arguments(
    simulation: &str,
    options: &[(&str, String)],
    palette: &str,
    steps_per_frame: u32,
    steps: u32,
) -> Vec<String> {
    let mut arguments = vec![simulation.to_owned()];
    let common = [
        ("palette", palette.to_owned()),
        ("frame-every", steps_per_frame.to_string()),
        ("steps", steps.max(1).to_string()),
    ];
    for (name, value) in options.iter().cloned().chain(common) {
        arguments.push(format!("--{name}"));
        arguments.push(value);
    }
    arguments
}

/// `arguments` as one command line for a POSIX shell, writing a GIF.
pub(super) fn command(arguments: &[String]) -> String {
    let words = std::iter::once(PROGRAM.to_owned()).chain(arguments.iter().cloned()).chain(["--gif".into()]);
    command_line(words.map(Into::into))
}

/// `arguments` parsed as the CLI parses them, for its settings documents.
pub(super) fn parse(arguments: &[String]) -> Result<Command, String> {
    let program = std::iter::once(PROGRAM.to_owned());
    Cli::try_parse_from(program.chain(arguments.iter().cloned())).map(|cli| cli.command).map_err(|e| {
        let text = e.render().to_string();
        let first = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("invalid settings");
        first.strip_prefix("error: ").unwrap_or(first).to_owned()
    })
}

/// Who made a document of `arguments` run on `device`: this program, the command, the GPU.
pub(super) fn provenance(arguments: &[String], device: &Device) -> Provenance {
    Provenance {
        version: Some(env!("CARGO_PKG_VERSION").into()),
        command: Some(command(arguments)),
        gpu: match device {
            Device::Cuda(gpu) => Some(gpu.name().to_owned()),
            Device::Cpu => None,
        },
    }
}

/// An error of the CLI's checks, as one line for the page.
pub(super) fn message(e: anyhow::Error) -> String {
    format!("{e:#}")
}
