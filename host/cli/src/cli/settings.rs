//! `--config FILE` and `--print-config`: reading a settings document
//! ([`crate::settings_document`]) into a subcommand's options, and printing one.
//!
//! Layering: the file fills in every option the command line did not give (told apart with
//! clap's [`ValueSource`], in [`Given`]). An option given on the command line replaces the
//! file's value and the values the file derived from it: `--preset` brings its own rates,
//! start and steps; `--size` its width and height; `--backend` drops the file's variant;
//! heat's `--alpha` or `--h` its default time step.

use std::{collections::HashSet, path::PathBuf};

use anyhow::{Result, bail};
use clap::{ArgMatches, Args, parser::ValueSource};

// What `options.rs` names here.
pub use crate::settings_document::{Document, FramesTable, RunTable, name_of, names, parse_name};

/// `--config` and `--print-config`, flattened into every simulation.
#[derive(Args, Debug)]
pub struct ConfigArgs {
    /// Read the run's settings from this TOML file (as --print-config prints them), or from a
    /// GIF or PNG this program wrote; options given on the command line override them.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Print the run's resolved settings as TOML and exit without running.
    #[arg(long)]
    pub print_config: bool,
}

/// The longest settings text `--config` parses (the documents this program writes are under
/// 2 KiB).
const MAX_SETTINGS_TEXT: usize = 1 << 20;

impl ConfigArgs {
    /// Reads `--config`, if given, and checks that it holds settings of `simulation` (its
    /// subcommand's name, the name of its table).
    pub fn read(&self, simulation: &str) -> Result<Option<Document>> {
        let Some(path) = &self.config else { return Ok(None) };
        // A settings file, or an output that records them (a GIF or MP4 of a run).
        let bytes = simulations::input::read_bounded(path, simulations::input::MAX_INPUT_BYTES)
            .map_err(|reason| anyhow::anyhow!("cannot read --config {}: {reason}", path.display()))?;
        let image = bytes.starts_with(b"GIF8") || bytes.starts_with(b"\x89PNG");
        let text = match simulations::render::recorded_text(&bytes).filter(|t| !t.trim().is_empty()) {
            Some(text) => text,
            None if image => {
                bail!(
                    "--config {}: this image records no settings (it was not written by `host`)",
                    path.display()
                )
            }
            None => String::from_utf8(bytes).map_err(|_| {
                anyhow::anyhow!("--config {}: not a UTF-8 TOML file, nor a GIF or PNG", path.display())
            })?,
        };
        // Parsing takes several times the text's size in memory: a settings file is a few
        // hundred bytes, so anything past this is refused before (a 100 MiB file aborted under
        // a 500 MB limit).
        if text.len() > MAX_SETTINGS_TEXT {
            bail!(
                "--config {}: {} of text, more than a settings file holds (at most {})",
                path.display(),
                simulations::error::human_bytes(text.len() as u64),
                simulations::error::human_bytes(MAX_SETTINGS_TEXT as u64)
            );
        }
        let document = Document::parse(&text).map_err(|e| match not_settings(&text, image) {
            Some(why) => anyhow::anyhow!("--config {}: {why}", path.display()),
            None => anyhow::anyhow!("--config {}: {e}", path.display()),
        })?;
        let others: Vec<&str> =
            document.simulations().into_iter().filter(|&name| name != simulation).collect();
        if let Some(other) = others.first() {
            bail!(
                "--config {} holds settings of `rust-gpu-sim {other}` ([{other}]), not of `rust-gpu-sim {}`",
                path.display(),
                simulation
            );
        }
        let version = document.provenance.as_ref().and_then(|p| p.version.as_deref());
        if let Some(version) = version.filter(|&v| v != env!("CARGO_PKG_VERSION")) {
            super::note(&format!(
                "--config {} was written by rust-gpu-sim {version}, this is rust-gpu-sim {}; a different version may give \
                 a different output",
                path.display(),
                env!("CARGO_PKG_VERSION")
            ));
        }
        Ok(Some(document))
    }
}

/// The options given on the command line (as opposed to defaults), by clap id (the field
/// name: `seed`, `frame_every`, ...).
#[derive(Debug, Default)]
pub struct Given {
    explicit: HashSet<String>,
    known: HashSet<String>,
}

impl Given {
    /// The options of a subcommand's matches that came from the command line.
    pub fn new(matches: Option<&ArgMatches>) -> Self {
        let mut given = Self::default();
        if let Some(m) = matches {
            for id in m.ids() {
                let id = id.as_str();
                given.known.insert(id.to_owned());
                if m.value_source(id) == Some(ValueSource::CommandLine) {
                    given.explicit.insert(id.to_owned());
                }
            }
        }
        given
    }

    /// Whether option `id` (which has a default) was given on the command line.
    pub fn has(&self, id: &str) -> bool {
        debug_assert!(self.known.is_empty() || self.known.contains(id), "no option with id {id}");
        self.explicit.contains(id)
    }

    /// Sets `slot`, an option with a default, from the file unless the command line gave it.
    pub fn fill<T>(&self, id: &str, slot: &mut T, file: Option<T>) {
        if let Some(value) = file.filter(|_| !self.has(id)) {
            *slot = value;
        }
    }
}

/// Why `text`, which does not parse as a settings document, is not one at all (rather than
/// one with a mistake at some line): the text an image records that is not a `rust-gpu-sim`
/// run's settings (another program's picture), a binary file, or text without a single TOML
/// `key = value` line or `[table]`. `None` where it looks like TOML: its parser's error says
/// more.
fn not_settings(text: &str, image: bool) -> Option<String> {
    if image {
        return Some(
            "the text this image records is not the settings of a rust-gpu-sim run (another program wrote it?)"
                .into(),
        );
    }
    if text.chars().any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r')) {
        return Some("a binary file, not a TOML settings file (as --print-config writes)".into());
    }
    let toml_line = |line: &str| {
        let line = line.trim();
        line.starts_with('[') || line.split_once('=').is_some_and(|(key, _)| !key.trim().is_empty())
    };
    let lines = text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#'));
    match lines.clone().any(toml_line) {
        true => None,
        false => Some("not a TOML settings file: no `key = value` line (as --print-config writes)".into()),
    }
}

/// Prints a document (`--print-config`).
pub fn print(document: &Document, simulation: &str) -> Result<()> {
    super::print(format_args!("{}", document.to_toml(simulation)))
}
