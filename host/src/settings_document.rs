//! A run's settings as one TOML document: what `--print-config` prints, what every GIF and
//! PNG records (GIF comment extension, PNG iTXt `Comment`), what `--config FILE` reads (through
//! [`crate::cli::settings`]), and what `serve` records for a session (filled from the model's
//! values, without a command line to parse).
//!
//! The document has a table per simulation (`[grayscott]`, `[heat]`, `[physarum]`) holding the
//! model's resolved values, `[run]` (backend and variant) and `[frames]` (frame options), and
//! `[provenance]` (program version, command line, GPU), which is recorded but never read
//! back. Output paths are not settings: they stay on the command line.

use std::path::PathBuf;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use simulations::{
    BackendChoice, Choice, Device,
    driver::FrameDefaults,
    grayscott::{self, Init},
    heat::{HeatInit, HeatSetup},
    physarum::{AgentInit, PhysarumSetup, Sensing},
};

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

/// `[grayscott]` in a settings file: the options of the model, named as on the command line.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrayScottTable {
    pub preset: Option<String>,
    pub width: Option<u32>,
    pub height: Option<u32>,
    pub steps: Option<u32>,
    pub feed: Option<f32>,
    pub kill: Option<f32>,
    pub du: Option<f32>,
    pub dv: Option<f32>,
    pub dt: Option<f32>,
    #[serde(default, with = "by_name")]
    pub init: Option<Init>,
    pub init_image: Option<PathBuf>,
    pub seed: Option<Seed>,
}

/// `[heat]` in a settings file: the options of the model, named as on the command line.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeatTable {
    pub nx: Option<u32>,
    pub ny: Option<u32>,
    pub nz: Option<u32>,
    pub steps: Option<u32>,
    pub alpha: Option<f32>,
    pub h: Option<f32>,
    pub dt: Option<f32>,
    pub boundary_value: Option<f32>,
    #[serde(default, with = "by_name")]
    pub init: Option<HeatInit>,
    pub seed: Option<Seed>,
}

/// `[physarum]` in a settings file: the options of the model, named as on the command line.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhysarumTable {
    pub preset: Option<String>,
    pub width: Option<u32>,
    pub height: Option<u32>,
    pub agents: Option<u32>,
    pub steps: Option<u32>,
    pub sensor_dist: Option<f32>,
    pub sensor_angle: Option<f32>,
    pub turn_angle: Option<f32>,
    pub step_size: Option<f32>,
    pub deposit: Option<f32>,
    pub diffuse: Option<f32>,
    pub decay: Option<f32>,
    pub jitter: Option<f32>,
    #[serde(default, with = "by_name")]
    pub sensing: Option<Sensing>,
    #[serde(default, with = "by_name")]
    pub init: Option<AgentInit>,
    pub init_image: Option<PathBuf>,
    pub image_strength: Option<f32>,
    pub seed: Option<Seed>,
}

/// One model's table of a document.
#[derive(Debug)]
pub enum ModelTable {
    GrayScott(GrayScottTable),
    Heat(HeatTable),
    Physarum(PhysarumTable),
}

impl From<GrayScottTable> for ModelTable {
    fn from(table: GrayScottTable) -> Self {
        Self::GrayScott(table)
    }
}

impl From<HeatTable> for ModelTable {
    fn from(table: HeatTable) -> Self {
        Self::Heat(table)
    }
}

impl From<PhysarumTable> for ModelTable {
    fn from(table: PhysarumTable) -> Self {
        Self::Physarum(table)
    }
}

impl GrayScottTable {
    /// The resolved values of a run of `setup` from `preset`, for `steps` steps.
    pub fn of(preset: &str, setup: &grayscott::Setup, steps: u32) -> Self {
        let r = &setup.rates;
        Self {
            preset: Some(preset.to_owned()),
            width: Some(setup.width),
            height: Some(setup.height),
            steps: Some(steps),
            feed: Some(r.feed),
            kill: Some(r.kill),
            du: Some(r.du),
            dv: Some(r.dv),
            dt: Some(r.dt),
            init: Some(setup.init),
            init_image: setup.init_image.clone(),
            seed: Some(Seed(setup.seed)),
        }
    }
}

impl HeatTable {
    /// The resolved values of a run of `setup` for `steps` steps.
    pub fn of(setup: &HeatSetup, steps: u32) -> Self {
        let [nx, ny, nz] = setup.n;
        Self {
            nx: Some(nx),
            ny: Some(ny),
            nz: Some(nz),
            steps: Some(steps),
            alpha: Some(setup.alpha),
            h: Some(setup.h),
            dt: Some(setup.dt),
            boundary_value: Some(setup.boundary),
            init: Some(setup.init),
            seed: Some(Seed(setup.seed)),
        }
    }
}

impl PhysarumTable {
    /// The resolved values of a run of `setup` from `preset`, for `steps` steps.
    pub fn of(preset: &str, setup: &PhysarumSetup, steps: u32) -> Self {
        Self {
            preset: Some(preset.to_owned()),
            width: Some(setup.width),
            height: Some(setup.height),
            agents: Some(setup.agents),
            steps: Some(steps),
            sensor_dist: Some(setup.sensor_dist),
            sensor_angle: Some(setup.sensor_angle),
            turn_angle: Some(setup.turn_angle),
            step_size: Some(setup.step_size),
            deposit: Some(setup.deposit),
            diffuse: Some(setup.diffuse),
            decay: Some(setup.decay),
            jitter: Some(setup.jitter),
            sensing: Some(setup.sensing),
            init: Some(setup.init),
            init_image: setup.init_image.clone(),
            image_strength: Some(setup.image_strength),
            seed: Some(Seed(setup.seed)),
        }
    }
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
