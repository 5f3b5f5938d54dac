//! A run's settings as one TOML document: what `--print-config` prints, what every GIF and
//! PNG records (GIF comment extension, PNG iTXt `Comment`), what `--config FILE` reads (through
//! [`crate::cli::settings`]), and what `serve` records for a session (filled from the model's
//! values, without a command line to parse).
//!
//! The document has a table per simulation (`[grayscott]`, `[heat]`, `[physarum]`) holding the
//! model's resolved values, `[run]` (backend and variant) and `[frames]` (frame options), and
//! `[provenance]` (program version, command line, GPU), which is recorded but never read
//! back. Output paths are not settings: they stay on the command line.

use anyhow::Result;
use serde::{Deserialize, Serialize};

use simulations::settings::by_name;
use simulations::{
    BackendChoice, Choice, Device, driver::FrameDefaults, grayscott, heat::HeatChoices,
    physarum::PhysarumChoices,
};

/// The settings document. Every table and value is optional when read: a file may set a few
/// options only.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Document {
    /// How the run was made; recorded, ignored when read.
    pub provenance: Option<Provenance>,
    pub grayscott: Option<grayscott::Choices>,
    pub heat: Option<HeatChoices>,
    pub physarum: Option<PhysarumChoices>,
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
        Self::of_command(command_line(std::env::args_os()), device)
    }

    /// This program's version, `command` (a command line for a POSIX shell), and the GPU of
    /// `device`.
    pub fn of_command(command: String, device: Option<&Device>) -> Self {
        Self {
            version: Some(env!("CARGO_PKG_VERSION").into()),
            command: Some(command),
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

impl RunTable {
    /// The backend and variant a run used, for the settings its outputs record.
    pub fn ran<V: Choice>(device: &Device, variant: V) -> Self {
        let backend = match device {
            Device::Cpu => BackendChoice::Cpu,
            Device::Cuda(_) => BackendChoice::Cuda,
        };
        Self { backend: Some(backend), variant: Some(name_of(&variant)) }
    }
}

/// `--frame-every`, `--fps` and `--palette`.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FramesTable {
    pub frame_every: Option<u32>,
    pub fps: Option<u32>,
    pub palette: Option<String>,
}

impl FramesTable {
    /// The frame options of a run of simulation `S` that makes a frame every `frame_every`
    /// steps in `palette`, at the frame rate the command line defaults to.
    pub fn with_default_fps<S: FrameDefaults>(frame_every: u32, palette: &str) -> Self {
        let fps = S::FPS.parse().expect("a simulation's default frame rate is a number");
        Self { frame_every: Some(frame_every), fps: Some(fps), palette: Some(palette.to_owned()) }
    }
}

impl Document {
    /// The document of one run: its model's table, `[run]`, `[frames]` and `[provenance]`.
    pub fn of_run(
        table: impl Into<ModelTable>,
        run: RunTable,
        frames: FramesTable,
        provenance: Provenance,
    ) -> Self {
        let mut document =
            Self { provenance: Some(provenance), run: Some(run), frames: Some(frames), ..Self::default() };
        match table.into() {
            ModelTable::GrayScott(table) => document.grayscott = Some(table),
            ModelTable::Heat(table) => document.heat = Some(table),
            ModelTable::Physarum(table) => document.physarum = Some(table),
        }
        document
    }

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

/// One model's table of a document.
#[derive(Debug)]
pub enum ModelTable {
    GrayScott(grayscott::Choices),
    Heat(HeatChoices),
    Physarum(PhysarumChoices),
}

impl From<grayscott::Choices> for ModelTable {
    fn from(table: grayscott::Choices) -> Self {
        Self::GrayScott(table)
    }
}

impl From<HeatChoices> for ModelTable {
    fn from(table: HeatChoices) -> Self {
        Self::Heat(table)
    }
}

impl From<PhysarumChoices> for ModelTable {
    fn from(table: PhysarumChoices) -> Self {
        Self::Physarum(table)
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

#[cfg(test)]
mod tests {
    use simulations::settings::Seed;

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
