//! The settings a page may change, checked with the command line's own rules: every change
//! becomes the equivalent `grayscott`, `physarum` or `heat` command line, which the CLI's
//! parser and checks accept or refuse with the CLI's messages. So the page can ask for nothing
//! the command line would refuse (sizes, NaN, ranges), and a run found in the browser is one
//! command away from a batch run. On top of that, `serve`'s own limits (grid cells, agents,
//! steps per frame) bound what one page may take.

use clap::Parser;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use simulations::{
    Device,
    grayscott::{self, Setup, Variant},
    heat::{HeatInit, HeatSetup, HeatVariant},
    physarum::{AgentInit, PhysarumSetup, PhysarumVariant},
    render::Palette,
};

use crate::cli::{
    Cli, Command,
    grayscott::GrayScottSim,
    heat::HeatSim,
    options::{self, BackendArgs},
    physarum::PhysarumSim,
    settings::{Document, Provenance, command_line, name_of},
};

/// Steps a page may ask for between two frames.
pub const MAX_STEPS_PER_FRAME: u32 = 10_000;

/// The step count given to the checks of a live run, which has no end: Physarum's bound on
/// the trail deposited (deposit × agents × steps, at most 1/decay) then holds for any run.
const ENDLESS: u32 = u32::MAX;

/// What one page may ask for.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Grid cells (heat: nx·ny·nz).
    pub max_cells: u64,
    pub max_agents: u32,
}

impl Limits {
    /// `serve`'s defaults for `device`, where the options give none: 4096² cells and 16Mi
    /// agents on a GPU, 512² and 256Ki on the CPU.
    pub fn for_device(device: &Device, max_cells: Option<u64>, max_agents: Option<u32>) -> Self {
        let gpu = matches!(device, Device::Cuda(_));
        Self {
            max_cells: max_cells.unwrap_or(if gpu { 4096 * 4096 } else { 512 * 512 }),
            max_agents: max_agents.unwrap_or(if gpu { 1 << 24 } else { 1 << 18 }),
        }
    }
}

/// A session's settings, as the page sees and sends them (JSON), all values resolved.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "simulation", rename_all = "lowercase")]
pub enum Settings {
    Grayscott(GrayScottValues),
    Physarum(PhysarumValues),
    Heat(HeatValues),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrayScottValues {
    pub width: u32,
    pub height: u32,
    pub preset: String,
    pub feed: f32,
    pub kill: f32,
    pub du: f32,
    pub dv: f32,
    pub dt: f32,
    pub init: String,
    pub seed: u64,
    pub palette: String,
    pub steps_per_frame: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhysarumValues {
    pub width: u32,
    pub height: u32,
    pub agents: u32,
    pub preset: String,
    pub sensor_dist: f32,
    pub sensor_angle: f32,
    pub turn_angle: f32,
    pub step_size: f32,
    pub deposit: f32,
    pub diffuse: f32,
    pub decay: f32,
    pub init: String,
    pub seed: u64,
    pub palette: String,
    pub steps_per_frame: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeatValues {
    /// Grid points per side (a cube).
    pub size: u32,
    pub alpha: f32,
    pub boundary_value: f32,
    pub init: String,
    pub seed: u64,
    pub palette: String,
    pub steps_per_frame: u32,
}

/// Settings that passed every check, with what the simulation is built from.
#[derive(Clone, Debug)]
pub struct Checked {
    pub settings: Settings,
    pub model: Model,
    pub palette: &'static Palette,
}

/// The library setup of a checked simulation.
#[derive(Clone, Debug)]
pub enum Model {
    GrayScott(Setup),
    Physarum(PhysarumSetup),
    Heat(HeatSetup),
}

impl Settings {
    /// The starting settings of `simulation` ("grayscott", "physarum", "heat") on `device`:
    /// the CLI's presets on a grid the device runs live (smaller on the CPU).
    pub fn default_for(simulation: &str, device: &Device) -> Option<Settings> {
        let gpu = matches!(device, Device::Cuda(_));
        Some(match simulation {
            "grayscott" => {
                let preset = grayscott::preset("coral").expect("the coral preset");
                let side = if gpu { 1024 } else { 256 };
                Settings::Grayscott(GrayScottValues {
                    width: side,
                    height: side,
                    preset: preset.name.into(),
                    feed: preset.feed,
                    kill: preset.kill,
                    du: grayscott::DEFAULT_DU,
                    dv: grayscott::DEFAULT_DV,
                    dt: grayscott::DEFAULT_DT,
                    init: name_of(&preset.init),
                    seed: 1,
                    palette: "cyberpunk".into(),
                    steps_per_frame: if gpu { 100 } else { 20 },
                })
            }
            "physarum" => {
                let preset = &simulations::physarum::PHYSARUM_PRESETS[0];
                let side = if gpu { 2048 } else { 256 };
                Settings::Physarum(PhysarumValues {
                    width: side,
                    height: side,
                    agents: if gpu { 1 << 20 } else { 16_384 },
                    preset: preset.name.into(),
                    sensor_dist: preset.sensor_dist,
                    sensor_angle: preset.sensor_angle,
                    turn_angle: preset.turn_angle,
                    step_size: preset.step_size,
                    deposit: preset.deposit,
                    diffuse: preset.diffuse,
                    decay: preset.decay,
                    init: name_of(&AgentInit::Random),
                    seed: 1,
                    palette: "slime".into(),
                    steps_per_frame: 1,
                })
            }
            "heat" => Settings::Heat(HeatValues {
                size: if gpu { 256 } else { 64 },
                alpha: 1.0,
                boundary_value: 0.0,
                init: name_of(&HeatInit::HotCube),
                seed: 1,
                palette: "magma".into(),
                steps_per_frame: if gpu { 10 } else { 2 },
            }),
            _ => return None,
        })
    }

    /// "grayscott", "physarum" or "heat".
    pub fn simulation(&self) -> &'static str {
        match self {
            Settings::Grayscott(_) => "grayscott",
            Settings::Physarum(_) => "physarum",
            Settings::Heat(_) => "heat",
        }
    }

    pub fn steps_per_frame(&self) -> u32 {
        match self {
            Settings::Grayscott(s) => s.steps_per_frame,
            Settings::Physarum(s) => s.steps_per_frame,
            Settings::Heat(s) => s.steps_per_frame,
        }
    }

    fn palette(&self) -> &str {
        match self {
            Settings::Grayscott(s) => &s.palette,
            Settings::Physarum(s) => &s.palette,
            Settings::Heat(s) => &s.palette,
        }
    }

    /// These settings with `changes` (field names as in the JSON) applied. A new `preset`
    /// brings its own parameters first, which other changes in the same message override.
    /// Refuses unknown fields and values of the wrong type, naming the field.
    pub fn updated(&self, changes: &Map<String, Value>) -> Result<Settings, String> {
        let mut base = self.clone();
        if let Some(preset) = changes.get("preset") {
            let name = preset.as_str().ok_or("preset: expected a preset's name (a string)")?;
            base.take_preset(name)?;
        }
        let Value::Object(mut merged) = serde_json::to_value(&base).map_err(|e| e.to_string())? else {
            unreachable!("settings serialise to an object")
        };
        for (key, value) in changes {
            if key == "simulation" {
                if value.as_str() != Some(self.simulation()) {
                    return Err("simulation: start a new simulation to change it".into());
                }
                continue;
            }
            if !merged.contains_key(key) {
                return Err(format!("{key}: not a setting of {}", self.simulation()));
            }
            let mut one = merged.clone();
            one.insert(key.clone(), value.clone());
            serde_json::from_value::<Settings>(Value::Object(one)).map_err(|e| format!("{key}: {e}"))?;
            merged.insert(key.clone(), value.clone());
        }
        serde_json::from_value(Value::Object(merged)).map_err(|e| e.to_string())
    }

    /// Takes the named preset's model parameters (and, for Gray-Scott, its start).
    fn take_preset(&mut self, name: &str) -> Result<(), String> {
        match self {
            Settings::Grayscott(s) => {
                let preset = grayscott::preset(name).ok_or_else(|| {
                    let names: Vec<_> = grayscott::PRESETS.iter().map(|p| p.name).collect();
                    format!("unknown preset '{name}'; valid presets: {}", names.join(", "))
                })?;
                let rates = preset.rates();
                (s.feed, s.kill, s.du, s.dv, s.dt) = (rates.feed, rates.kill, rates.du, rates.dv, rates.dt);
                s.init = name_of(&preset.init);
            }
            Settings::Physarum(s) => {
                let p = simulations::physarum::physarum_preset(name).ok_or_else(|| {
                    let names: Vec<_> =
                        simulations::physarum::PHYSARUM_PRESETS.iter().map(|p| p.name).collect();
                    format!("unknown preset '{name}'; valid presets: {}", names.join(", "))
                })?;
                (s.sensor_dist, s.sensor_angle, s.turn_angle, s.step_size) =
                    (p.sensor_dist, p.sensor_angle, p.turn_angle, p.step_size);
                (s.deposit, s.diffuse, s.decay) = (p.deposit, p.diffuse, p.decay);
            }
            Settings::Heat(_) => return Err("preset: heat has no presets".into()),
        }
        Ok(())
    }

    /// The command line (without the program's name) that runs these settings for `steps`
    /// steps.
    pub fn arguments(&self, steps: u32) -> Vec<String> {
        let mut a: Vec<String> = vec![self.simulation().into()];
        let mut opt = |name: &str, value: String| {
            a.push(format!("--{name}"));
            a.push(value);
        };
        match self {
            Settings::Grayscott(s) => {
                opt("width", s.width.to_string());
                opt("height", s.height.to_string());
                opt("preset", s.preset.clone());
                opt("feed", s.feed.to_string());
                opt("kill", s.kill.to_string());
                opt("du", s.du.to_string());
                opt("dv", s.dv.to_string());
                opt("dt", s.dt.to_string());
                opt("init", s.init.clone());
                opt("seed", s.seed.to_string());
            }
            Settings::Physarum(s) => {
                opt("width", s.width.to_string());
                opt("height", s.height.to_string());
                opt("agents", s.agents.to_string());
                opt("preset", s.preset.clone());
                opt("sensor-dist", s.sensor_dist.to_string());
                opt("sensor-angle", s.sensor_angle.to_string());
                opt("turn-angle", s.turn_angle.to_string());
                opt("step-size", s.step_size.to_string());
                opt("deposit", s.deposit.to_string());
                opt("diffuse", s.diffuse.to_string());
                opt("decay", s.decay.to_string());
                opt("init", s.init.clone());
                opt("seed", s.seed.to_string());
            }
            Settings::Heat(s) => {
                opt("size", s.size.to_string());
                opt("alpha", s.alpha.to_string());
                opt("boundary-value", s.boundary_value.to_string());
                opt("init", s.init.clone());
                opt("seed", s.seed.to_string());
            }
        }
        opt("palette", self.palette().to_owned());
        opt("frame-every", self.steps_per_frame().to_string());
        opt("steps", steps.max(1).to_string());
        a
    }

    /// Checks these settings with the CLI's parser and checks, then `limits`.
    pub fn check(&self, limits: &Limits) -> Result<Checked, String> {
        let spf = self.steps_per_frame();
        if !(1..=MAX_STEPS_PER_FRAME).contains(&spf) {
            return Err(format!("steps_per_frame must be between 1 and {MAX_STEPS_PER_FRAME}, got {spf}"));
        }
        let palette = options::palette(self.palette()).map_err(|e| format!("palette: {e}"))?;
        let cli = parse(&self.arguments(ENDLESS))?;
        let model = match cli.command {
            Command::Grayscott(args) => {
                Model::GrayScott(crate::cli::grayscott::check(&args).map_err(message)?.0)
            }
            Command::Physarum(args) => Model::Physarum(crate::cli::physarum::check(&args).map_err(message)?),
            Command::Heat(args) => Model::Heat(crate::cli::heat::check(&args).map_err(message)?),
            _ => unreachable!("settings name a simulation"),
        };
        let (cells, agents) = match &model {
            Model::GrayScott(s) => (s.cells() as u64, 0),
            Model::Physarum(s) => (s.cells() as u64, s.agents),
            Model::Heat(s) => (s.cells() as u64, 0),
        };
        if cells > limits.max_cells {
            return Err(format!(
                "a grid of {cells} cells is more than this server allows ({}, `serve --max-cells`); ask for a smaller one",
                limits.max_cells
            ));
        }
        if agents > limits.max_agents {
            return Err(format!(
                "{agents} agents are more than this server allows ({}, `serve --max-agents`)",
                limits.max_agents
            ));
        }
        Ok(Checked { settings: self.clone(), model, palette })
    }

    /// The equivalent command line for `steps` steps writing a GIF, as one line for a POSIX
    /// shell.
    pub fn command(&self, steps: u32) -> String {
        let mut words = vec![crate::cli::PROGRAM.to_owned()];
        words.extend(self.arguments(steps));
        words.push("--gif".into());
        command_line(words.into_iter().map(Into::into))
    }

    /// The settings document (`--config` TOML) of these settings run for `steps` steps on
    /// `device`, as the CLI records it in its outputs.
    pub fn toml(&self, steps: u32, device: &Device) -> Result<String, String> {
        let cli = parse(&self.arguments(steps))?;
        let provenance = Provenance {
            version: Some(env!("CARGO_PKG_VERSION").into()),
            command: Some(self.command(steps)),
            gpu: match device {
                Device::Cuda(gpu) => Some(gpu.name().to_owned()),
                Device::Cpu => None,
            },
        };
        let gpu = matches!(device, Device::Cuda(_));
        let document: Document = match cli.command {
            Command::Grayscott(args) => {
                let (setup, steps) = crate::cli::grayscott::check(&args).map_err(message)?;
                let variant = if gpu { Variant::Fused } else { Variant::Cpu };
                let run = BackendArgs::<GrayScottSim>::ran(device, variant);
                crate::cli::grayscott::document(&args, &setup, steps, run, provenance)
            }
            Command::Physarum(args) => {
                let setup = crate::cli::physarum::check(&args).map_err(message)?;
                let variant = if gpu { PhysarumVariant::Optimized } else { PhysarumVariant::Cpu };
                let run = BackendArgs::<PhysarumSim>::ran(device, variant);
                crate::cli::physarum::document(&args, &setup, run, provenance)
            }
            Command::Heat(args) => {
                let setup = crate::cli::heat::check(&args).map_err(message)?;
                let variant = if gpu { HeatVariant::Fused } else { HeatVariant::Cpu };
                let run = BackendArgs::<HeatSim>::ran(device, variant);
                crate::cli::heat::document(&args, &setup, run, provenance)
            }
            _ => unreachable!("settings name a simulation"),
        };
        Ok(document.to_toml(self.simulation()))
    }
}

/// Parses a simulation's arguments with the CLI's parser.
fn parse(arguments: &[String]) -> Result<Cli, String> {
    let program = std::iter::once(crate::cli::PROGRAM.to_owned());
    Cli::try_parse_from(program.chain(arguments.iter().cloned())).map_err(|e| {
        let text = e.render().to_string();
        let first = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("invalid settings");
        first.strip_prefix("error: ").unwrap_or(first).to_owned()
    })
}

/// An error of the CLI's checks, as one line for the page.
fn message(e: anyhow::Error) -> String {
    format!("{e:#}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits::for_device(&Device::Cpu, None, None)
    }

    fn changes(json: &str) -> Map<String, Value> {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn defaults_pass_the_cli_checks() {
        for simulation in ["grayscott", "physarum", "heat"] {
            let settings = Settings::default_for(simulation, &Device::Cpu).unwrap();
            settings.check(&limits()).unwrap_or_else(|e| panic!("{simulation}: {e}"));
            assert!(settings.toml(100, &Device::Cpu).unwrap().contains(&format!("[{simulation}]")));
        }
        assert!(Settings::default_for("nope", &Device::Cpu).is_none());
    }

    #[test]
    fn the_cli_rules_refuse_what_the_cli_refuses() {
        let gs = Settings::default_for("grayscott", &Device::Cpu).unwrap();
        for (json, expect) in [
            (r#"{"feed": -1}"#, "--feed"),
            (r#"{"du": 0.3}"#, "0.25"),
            (r#"{"feed": 1e39}"#, "--feed"),
            (r#"{"width": 0}"#, "--width"),
            (r#"{"width": 70000}"#, "--width"),
            (r#"{"width": 4096}"#, "--max-cells"),
            (r#"{"palette": "nope"}"#, "unknown palette"),
            (r#"{"init": "nope"}"#, "nope"),
            (r#"{"steps_per_frame": 0}"#, "steps_per_frame"),
            (r#"{"preset": "nope"}"#, "unknown preset"),
        ] {
            let e = gs.updated(&changes(json)).and_then(|s| s.check(&limits()).map(|_| ())).unwrap_err();
            assert!(e.contains(expect), "{json}: {e}");
        }
        for (json, expect) in [
            (r#"{"feed": "0.05"}"#, "feed: invalid type"),
            (r#"{"feed": null}"#, "feed: invalid type"),
            (r#"{"width": -3}"#, "width: invalid value"),
            (r#"{"nope": 1}"#, "nope: not a setting"),
            (r#"{"agents": 5}"#, "agents: not a setting"),
            (r#"{"simulation": "heat"}"#, "start a new simulation"),
        ] {
            let e = gs.updated(&changes(json)).unwrap_err();
            assert!(e.contains(expect), "{json}: {e}");
        }
        let physarum = Settings::default_for("physarum", &Device::Cpu).unwrap();
        let e = physarum.updated(&changes(r#"{"decay": 1.0}"#)).unwrap().check(&limits()).unwrap_err();
        assert!(e.contains("--decay"), "{e}");
        let e = physarum.updated(&changes(r#"{"agents": 1000000}"#)).unwrap().check(&limits()).unwrap_err();
        assert!(e.contains("--max-agents"), "{e}");
    }

    #[test]
    fn a_preset_brings_its_rates_and_later_changes_win() {
        let gs = Settings::default_for("grayscott", &Device::Cpu).unwrap();
        let Settings::Grayscott(s) = gs.updated(&changes(r#"{"preset": "mitosis", "kill": 0.06}"#)).unwrap()
        else {
            panic!()
        };
        assert_eq!((s.preset.as_str(), s.feed, s.kill), ("mitosis", 0.0367, 0.06));
    }

    #[test]
    fn the_command_runs_the_same_settings() {
        let gs = Settings::default_for("grayscott", &Device::Cpu)
            .unwrap()
            .updated(&changes(r#"{"feed": 0.031, "width": 200}"#))
            .unwrap();
        let command = gs.command(1234);
        assert!(command.contains("--feed 0.031 ") && command.contains("--width 200 "), "{command}");
        assert!(command.contains("--steps 1234") && command.ends_with("--gif"), "{command}");
        let toml = gs.toml(1234, &Device::Cpu).unwrap();
        assert!(toml.contains("feed = 0.031") && toml.contains("steps = 1234"), "{toml}");
    }
}
