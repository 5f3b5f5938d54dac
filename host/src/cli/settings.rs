//! A run's settings as one TOML document: what `--print-config` prints, what every GIF and
//! PNG records (GIF comment extension, PNG iTXt `Comment`), and what `--config FILE` reads.
//!
//! The document has a table per simulation (`[grayscott]`, `[heat]`, `[physarum]`) holding the
//! model's resolved values, `[run]` (backend and variant) and `[frames]` (frame options), and
//! `[provenance]` (program version, command line, GPU), which is recorded but never read
//! back. Output paths are not settings: they stay on the command line.
//!
//! Layering: the file fills in every option the command line did not give (told apart with
//! clap's [`ValueSource`], in [`Given`]). An option given on the command line replaces the
//! file's value and the values the file derived from it: `--preset` brings its own rates,
//! start and steps; `--size` its width and height; `--backend` drops the file's variant;
//! heat's `--alpha` or `--h` its default time step.

use std::{collections::HashSet, path::PathBuf};

use anyhow::{Result, bail};
use clap::{ArgMatches, Args, parser::ValueSource};
use serde::{Deserialize, Serialize};

use simulations::{
    BackendChoice, Choice, Device,
    grayscott::Init,
    heat::HeatInit,
    physarum::{AgentInit, Sensing},
};

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

/// The settings document. Every table and value is optional when read: a file may set a few
/// options only.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Document {
    /// How the run was made; recorded, ignored when read.
    pub provenance: Option<Provenance>,
    pub grayscott: Option<GrayScottTable>,
    pub heat: Option<HeatTable>,
    pub physarum: Option<PhysarumTable>,
    pub run: Option<RunTable>,
    pub frames: Option<FramesTable>,
}

/// Recorded with the settings, never read back.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    /// The program's version.
    pub version: Option<String>,
    /// The command line, quoted for a POSIX shell.
    pub command: Option<String>,
    /// The GPU the run used, if any.
    pub gpu: Option<String>,
}

impl Provenance {
    /// This program's version and command line, and the GPU of `device`.
    pub fn of_this_run(device: Option<&Device>) -> Self {
        Self {
            version: Some(env!("CARGO_PKG_VERSION").into()),
            command: Some(command_line(std::env::args_os())),
            gpu: match device {
                Some(Device::Cuda(gpu)) => Some(gpu.name().to_owned()),
                _ => None,
            },
        }
    }
}

/// `--backend` and `--variant`.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunTable {
    #[serde(default, with = "by_name")]
    pub backend: Option<BackendChoice>,
    /// A variant of the simulation's own (checked against it when applied).
    pub variant: Option<String>,
}

/// `--frame-every`, `--fps` and `--palette`.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FramesTable {
    pub frame_every: Option<u32>,
    pub fps: Option<u32>,
    pub palette: Option<String>,
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

impl Document {
    /// Parses a document; an error is one line naming the line of the file.
    pub fn parse(text: &str) -> Result<Self> {
        toml::from_str(text).map_err(|e| {
            let message = e.message().trim().replace('\n', "; ");
            match e.span() {
                Some(span) => {
                    let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
                    anyhow::anyhow!("line {line}: {message}")
                }
                None => anyhow::anyhow!("{message}"),
            }
        })
    }

    /// The simulations this document has a table for.
    pub fn simulations(&self) -> Vec<&'static str> {
        let mut names = Vec::new();
        if self.grayscott.is_some() {
            names.push("grayscott");
        }
        if self.heat.is_some() {
            names.push("heat");
        }
        if self.physarum.is_some() {
            names.push("physarum");
        }
        names
    }

    /// The document as TOML, under a comment saying how to use it.
    pub fn to_toml(&self, simulation: &str) -> String {
        let body = toml::to_string(self).expect("settings are plain tables of numbers and strings");
        format!(
            "# The settings of a `rust-gpu-sim {simulation}` run. Repeat it with `rust-gpu-sim {simulation} --config FILE`;\n\
             # options given on the command line override the file. [provenance] is not read back.\n\n{body}"
        )
    }
}

/// `[grayscott]` in a settings file: the options of the model, named as on the command line.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrayScottTable {
    pub(crate) preset: Option<String>,
    pub(crate) width: Option<u32>,
    pub(crate) height: Option<u32>,
    pub(crate) steps: Option<u32>,
    pub(crate) feed: Option<f32>,
    pub(crate) kill: Option<f32>,
    pub(crate) du: Option<f32>,
    pub(crate) dv: Option<f32>,
    pub(crate) dt: Option<f32>,
    #[serde(default, with = "by_name")]
    pub(crate) init: Option<Init>,
    pub(crate) init_image: Option<PathBuf>,
    pub(crate) seed: Option<Seed>,
}

/// `[heat]` in a settings file: the options of the model, named as on the command line.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeatTable {
    pub(crate) nx: Option<u32>,
    pub(crate) ny: Option<u32>,
    pub(crate) nz: Option<u32>,
    pub(crate) steps: Option<u32>,
    pub(crate) alpha: Option<f32>,
    pub(crate) h: Option<f32>,
    pub(crate) dt: Option<f32>,
    pub(crate) boundary_value: Option<f32>,
    #[serde(default, with = "by_name")]
    pub(crate) init: Option<HeatInit>,
    pub(crate) seed: Option<Seed>,
}

/// `[physarum]` in a settings file: the options of the model, named as on the command line.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhysarumTable {
    pub(crate) preset: Option<String>,
    pub(crate) width: Option<u32>,
    pub(crate) height: Option<u32>,
    pub(crate) agents: Option<u32>,
    pub(crate) steps: Option<u32>,
    pub(crate) sensor_dist: Option<f32>,
    pub(crate) sensor_angle: Option<f32>,
    pub(crate) turn_angle: Option<f32>,
    pub(crate) step_size: Option<f32>,
    pub(crate) deposit: Option<f32>,
    pub(crate) diffuse: Option<f32>,
    pub(crate) decay: Option<f32>,
    pub(crate) jitter: Option<f32>,
    #[serde(default, with = "by_name")]
    pub(crate) sensing: Option<Sensing>,
    #[serde(default, with = "by_name")]
    pub(crate) init: Option<AgentInit>,
    pub(crate) init_image: Option<PathBuf>,
    pub(crate) image_strength: Option<f32>,
    pub(crate) seed: Option<Seed>,
}

/// A seed as TOML holds it: an integer up to 2⁶³ − 1, a string of digits above (TOML integers
/// are signed 64-bit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seed(pub u64);

impl Serialize for Seed {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match i64::try_from(self.0) {
            Ok(small) => s.serialize_i64(small),
            Err(_) => s.serialize_str(&self.0.to_string()),
        }
    }
}

impl<'de> Deserialize<'de> for Seed {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Seed;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a seed from 0 to 18446744073709551615 (above 2^63 - 1 as a string)")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> std::result::Result<Seed, E> {
                u64::try_from(v)
                    .map(Seed)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Signed(v), &self))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> std::result::Result<Seed, E> {
                Ok(Seed(v))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<Seed, E> {
                v.parse().map(Seed).map_err(|_| E::invalid_value(serde::de::Unexpected::Str(v), &self))
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// (De)serialises an optional [`Choice`] by its command-line name (`hot-cube`, `cpu`).
pub mod by_name {
    use serde::{Deserialize, Deserializer, Serializer, de::Error};
    use simulations::Choice;

    pub fn serialize<T: Choice, S: Serializer>(value: &Option<T>, s: S) -> Result<S::Ok, S::Error> {
        match value {
            Some(v) => s.serialize_str(v.name()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, T: Choice, D: Deserializer<'de>>(d: D) -> Result<Option<T>, D::Error> {
        let name = String::deserialize(d)?;
        super::parse_name(&name).map(Some).ok_or_else(|| {
            D::Error::custom(format!("unknown value '{name}', expected one of: {}", super::names::<T>()))
        })
    }
}

/// The command-line names of a [`Choice`], comma-separated.
pub fn names<T: Choice>() -> String {
    T::names()
}

/// The name of a [`Choice`] value.
pub fn name_of<T: Choice>(value: &T) -> String {
    value.name().to_owned()
}

/// The [`Choice`] value of a command-line name (exactly as spelled), if any.
pub fn parse_name<T: Choice>(name: &str) -> Option<T> {
    T::from_name(name)
}

/// Arguments as one line a POSIX shell reads back: plain words as they are, others in single
/// quotes.
pub fn command_line(args: impl IntoIterator<Item = std::ffi::OsString>) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c);
    args.into_iter()
        .map(|arg| {
            let arg = arg.to_string_lossy().into_owned();
            if !arg.is_empty() && arg.chars().all(plain) {
                arg
            } else {
                format!("'{}'", arg.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Prints a document (`--print-config`).
pub fn print(document: &Document, simulation: &str) -> Result<()> {
    super::print(format_args!("{}", document.to_toml(simulation)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_quote_what_a_shell_would_split() {
        let args =
            ["rust-gpu-sim", "grayscott", "--gif", "my out.gif", "--palette", "it's", ""].map(Into::into);
        assert_eq!(command_line(args), r#"rust-gpu-sim grayscott --gif 'my out.gif' --palette 'it'\''s' ''"#);
    }

    #[test]
    fn seeds_of_any_size_survive_toml() {
        #[derive(Serialize, Deserialize)]
        struct T {
            seed: Seed,
        }
        for seed in [0, 1, i64::MAX as u64, i64::MAX as u64 + 1, u64::MAX] {
            let text = toml::to_string(&T { seed: Seed(seed) }).unwrap();
            assert_eq!(toml::from_str::<T>(&text).unwrap().seed, Seed(seed), "{text}");
        }
        assert!(toml::from_str::<T>("seed = -1").is_err());
    }

    #[test]
    fn floats_survive_toml_bit_for_bit() {
        #[derive(Serialize, Deserialize)]
        struct T {
            x: f32,
        }
        // A spread of magnitudes and mantissas (a simple LCG over the bit patterns).
        let mut bits = 12345u32;
        for _ in 0..200_000 {
            bits = bits.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let x = f32::from_bits(bits);
            if !x.is_finite() {
                continue;
            }
            let text = toml::to_string(&T { x }).unwrap();
            assert_eq!(toml::from_str::<T>(&text).unwrap().x.to_bits(), x.to_bits(), "{text}");
        }
    }

    #[test]
    fn errors_are_one_line_with_the_line_number() {
        let e = Document::parse("[grayscott]\nfeed = 0.05\nfed = 1\n").unwrap_err().to_string();
        assert!(e.starts_with("line 3: unknown field `fed`") && !e.contains('\n'), "{e}");
        let e = Document::parse("[heat]\nalpha = \"x\"\n").unwrap_err().to_string();
        assert!(e.starts_with("line 2: invalid type: string"), "{e}");
        let e = Document::parse("[run]\nbackend = \"tpu\"\n").unwrap_err().to_string();
        assert!(e.contains("unknown value 'tpu', expected one of: auto, cuda, cpu"), "{e}");
    }
}
