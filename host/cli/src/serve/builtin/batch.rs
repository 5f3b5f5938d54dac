//! The built-in models' batch equivalents: the `grayscott`, `physarum` or `heat` command line
//! of a session's settings, so a run found in the browser is one command away from a batch run,
//! and the parts of the settings document ([`crate::settings_document`]) every model records
//! alike. The documents are filled from the session's values (nothing is parsed); they are
//! the ones the CLI records for that command line.

use simulations::{Device, driver::FrameDefaults};

use crate::{
    cli::PROGRAM,
    settings_document::{FramesTable, Provenance, command_line},
};

/// The arguments (without the program's name) that run `simulation` with `options` (name
/// without `--`, value) and the two settings every model has, for `steps` steps (at least 1,
/// as the command line needs).
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
        ("steps", batch_steps(steps).to_string()),
    ];
    for (name, value) in options.iter().cloned().chain(common) {
        arguments.push(format!("--{name}"));
        arguments.push(value);
    }
    arguments
}

/// The step count of the batch run of a session that has done `steps` (the command line
/// refuses 0).
pub(super) fn batch_steps(steps: u32) -> u32 {
    steps.max(1)
}

/// `arguments` as one command line for a POSIX shell, writing a GIF.
pub(super) fn command(arguments: &[String]) -> String {
    let words = std::iter::once(PROGRAM.to_owned()).chain(arguments.iter().cloned()).chain(["--gif".into()]);
    command_line(words.map(Into::into))
}

/// Who made a document of `arguments` run on `device`: this program, the command, the GPU.
pub(super) fn provenance(arguments: &[String], device: &Device) -> Provenance {
    Provenance::of_command(command(arguments), Some(device))
}

/// The frame options of a session of simulation `S`: a frame every `steps_per_frame` steps in
/// `palette`, at the batch run's default frame rate.
pub(super) fn frames<S: FrameDefaults>(palette: &str, steps_per_frame: u32) -> FramesTable {
    FramesTable::with_default_fps::<S>(steps_per_frame, palette)
}

/// An error of the library's checks, as one line for the page.
pub(super) fn message(e: impl Into<anyhow::Error>) -> String {
    format!("{:#}", e.into())
}
