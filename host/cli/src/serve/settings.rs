//! A session's settings as the page sees and sends them, for any registered model, and their
//! checks: the JSON types and names first (a value of the wrong type, or a setting the model
//! does not have, is refused naming it), then the steps per frame and palette (the server's),
//! then the model's own checks (for the built-in models, the `simulations` library's rules,
//! the same the command line applies), then `serve`'s limits (grid cells, agents) that bound
//! what one page may take.

use std::sync::Arc;

use serde_json::{Map, Value};
use simulations::{Device, render::Palette};

use super::{
    model::Demand,
    registry::{AnySetup, Common, Entry, Registry},
};

/// Steps a page may ask for between two frames.
pub const MAX_STEPS_PER_FRAME: u32 = 10_000;

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

    /// Refuses what is more than these limits allow.
    fn admit(&self, demand: Demand) -> Result<(), String> {
        let Demand { cells, agents } = demand;
        if cells > self.max_cells {
            return Err(format!(
                "a grid of {cells} cells is more than this server allows ({}, `serve --max-cells`); ask for a smaller one",
                self.max_cells
            ));
        }
        if agents > u64::from(self.max_agents) {
            return Err(format!(
                "{agents} agents are more than this server allows ({}, `serve --max-agents`)",
                self.max_agents
            ));
        }
        Ok(())
    }
}

/// A session's settings: the model, and every one of its settings resolved (the model's own,
/// the palette and the steps per frame), each of its type (once checked, as the type holds
/// it).
#[derive(Clone)]
pub struct Settings {
    entry: Arc<dyn Entry>,
    values: Map<String, Value>,
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Settings")
            .field("simulation", &self.simulation())
            .field("values", &self.values)
            .finish()
    }
}

impl PartialEq for Settings {
    fn eq(&self, other: &Self) -> bool {
        self.simulation() == other.simulation() && self.values == other.values
    }
}

/// Settings that passed every check, with what the simulation is built from.
#[derive(Clone, Debug)]
pub struct Checked {
    pub settings: Settings,
    pub(crate) setup: AnySetup,
    pub palette: &'static Palette,
}

impl Settings {
    /// The starting settings of the model called `simulation` on `device`; `None` when no
    /// such model is registered.
    pub fn default_for(
        registry: &Registry,
        simulation: &str,
        device: &Device,
    ) -> Option<Result<Settings, String>> {
        registry.get(simulation).map(|entry| Self::defaults(entry, device))
    }

    pub(crate) fn defaults(entry: &Arc<dyn Entry>, device: &Device) -> Result<Settings, String> {
        let values = entry.defaults(device)?;
        Ok(Settings { entry: entry.clone(), values })
    }

    /// The settings a new session starts with: the first model's defaults, on a smaller grid
    /// where the limits allow no more (a server started with a small `--max-cells`).
    pub fn starting(registry: &Registry, device: &Device, limits: &Limits) -> Result<Checked, String> {
        let entry = registry.first().ok_or("no model is registered to serve")?;
        let settings = Self::defaults(entry, device)?;
        let refusal = match settings.check(limits) {
            Ok(checked) => return Ok(checked),
            Err(refusal) => refusal,
        };
        let side = (limits.max_cells as f64).sqrt().floor().clamp(1.0, 256.0) as u32;
        let changes = entry.grid().iter().map(|name| ((*name).to_owned(), Value::from(side))).collect();
        settings.updated(&changes).and_then(|s| s.check(limits)).map_err(|e| {
            format!(
                "the first model, {}, cannot start within this server's limits: {refusal}; {e}",
                entry.name()
            )
        })
    }

    /// The model's name ("grayscott").
    pub fn simulation(&self) -> &'static str {
        self.entry.name()
    }

    /// As the page sees them: every setting, and `simulation`, the model's name.
    pub fn to_json(&self) -> Value {
        let mut values = self.values.clone();
        values.insert("simulation".into(), self.simulation().into());
        Value::Object(values)
    }

    /// One setting's value.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.values.get(name)
    }

    /// The settings every model has.
    fn common(&self) -> Result<Common, String> {
        let common = ["palette", "steps_per_frame"]
            .map(|k| (k.to_owned(), self.values.get(k).cloned().unwrap_or(Value::Null)));
        serde_json::from_value(Value::Object(Map::from_iter(common))).map_err(|e| e.to_string())
    }

    /// Steps between two frames (1 where the settings have no valid count, which only checked
    /// settings reach a session with).
    pub fn steps_per_frame(&self) -> u32 {
        self.common().map_or(1, |c| c.steps_per_frame)
    }

    /// Whether `other` differs from these only in settings every model has (the palette, the
    /// steps per frame), which need nothing of the simulation.
    pub(crate) fn same_model_settings(&self, other: &Settings) -> bool {
        let model = |s: &Settings| {
            let mut values = s.values.clone();
            values.remove("palette");
            values.remove("steps_per_frame");
            values
        };
        self.simulation() == other.simulation() && model(self) == model(other)
    }

    pub(crate) fn entry(&self) -> &Arc<dyn Entry> {
        &self.entry
    }

    /// These settings with `changes` (names as in the JSON) applied. A new `preset` brings its
    /// own parameters first, which other changes in the same message override. Refuses
    /// unknown settings and values of the wrong type, naming the setting.
    pub fn updated(&self, changes: &Map<String, Value>) -> Result<Settings, String> {
        let mut merged = self.values.clone();
        if let Some(preset) = changes.get("preset") {
            let name = preset.as_str().ok_or("preset: expected a preset's name (a string)")?;
            merged = self.entry.take_preset(&merged, name)?;
        }
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
            if value.is_null() {
                // Every setting has a value; a model's `None` (the library's "not given") is
                // never the page's to choose.
                return Err(format!("{key}: invalid type: null, expected a value"));
            }
            let mut one = merged.clone();
            one.insert(key.clone(), value.clone());
            self.entry.normalize(&one).map_err(|e| format!("{key}: {e}"))?;
            merged.insert(key.clone(), value.clone());
        }
        // As given: a number beyond its type's range (1e39 for a float) reaches the checks,
        // which name it, rather than turning into JSON's null here.
        Ok(Settings { entry: self.entry.clone(), values: merged })
    }

    /// Checks these settings: the steps per frame and palette, the model's checks, then
    /// `limits`.
    pub fn check(&self, limits: &Limits) -> Result<Checked, String> {
        let Common { palette, steps_per_frame } = self.common()?;
        if !(1..=MAX_STEPS_PER_FRAME).contains(&steps_per_frame) {
            return Err(format!(
                "steps_per_frame must be between 1 and {MAX_STEPS_PER_FRAME}, got {steps_per_frame}"
            ));
        }
        let palette = simulations::driver::palette(&palette).map_err(|e| format!("palette: {e}"))?;
        let (setup, demand) = self.entry.check(&self.values)?;
        limits.admit(demand)?;
        // Each value as its type holds it (a float's f32 value), as the page is then shown.
        let values = self.entry.normalize(&self.values)?;
        Ok(Checked { settings: Settings { entry: self.entry.clone(), values }, setup, palette })
    }

    /// The command line that runs these settings for `steps` steps in batch (empty where the
    /// model has none).
    pub fn command(&self, steps: u32) -> String {
        self.entry.command(&self.values, steps).unwrap_or_default()
    }

    /// The settings document of these settings run for `steps` steps on `device` (the
    /// built-in models: the `--config` TOML, as the CLI records it in its outputs).
    pub fn toml(&self, steps: u32, device: &Device) -> Result<String, String> {
        self.entry.record(&self.values, steps, device)
    }
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

    fn default_for(simulation: &str) -> Settings {
        Settings::default_for(&Registry::builtin(), simulation, &Device::Cpu).unwrap().unwrap()
    }

    #[test]
    fn defaults_pass_the_cli_checks() {
        for simulation in ["grayscott", "physarum", "heat"] {
            let settings = default_for(simulation);
            settings.check(&limits()).unwrap_or_else(|e| panic!("{simulation}: {e}"));
            assert!(settings.toml(100, &Device::Cpu).unwrap().contains(&format!("[{simulation}]")));
        }
        assert!(Settings::default_for(&Registry::builtin(), "nope", &Device::Cpu).is_none());
    }

    #[test]
    fn the_cli_rules_refuse_what_the_cli_refuses() {
        let gs = default_for("grayscott");
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
            // The library's choices the page has no setting for stay the command line's.
            (r#"{"init_image": "/etc/passwd"}"#, "init_image: not a setting"),
            (r#"{"steps": 5}"#, "steps: not a setting"),
            (r#"{"simulation": "heat"}"#, "start a new simulation"),
        ] {
            let e = gs.updated(&changes(json)).unwrap_err();
            assert!(e.contains(expect), "{json}: {e}");
        }
        for (simulation, setting) in
            [("heat", "h"), ("heat", "nx"), ("physarum", "jitter"), ("physarum", "init_image")]
        {
            let e = default_for(simulation).updated(&changes(&format!(r#"{{"{setting}": 1}}"#))).unwrap_err();
            assert!(e.contains(&format!("{setting}: not a setting")), "{simulation}: {e}");
        }
        let physarum = default_for("physarum");
        let e = physarum.updated(&changes(r#"{"decay": 1.0}"#)).unwrap().check(&limits()).unwrap_err();
        assert!(e.contains("--decay"), "{e}");
        let e = physarum.updated(&changes(r#"{"agents": 1000000}"#)).unwrap().check(&limits()).unwrap_err();
        assert!(e.contains("--max-agents"), "{e}");
    }

    #[test]
    fn a_preset_brings_its_rates_and_later_changes_win() {
        let gs = default_for("grayscott");
        let s = gs.updated(&changes(r#"{"preset": "mitosis", "kill": 0.06}"#)).unwrap();
        let s = s.check(&limits()).unwrap().settings;
        let value = |name: &str| s.get(name).cloned().unwrap();
        assert_eq!(
            (value("preset"), value("feed"), value("kill")),
            (Value::from("mitosis"), Value::from(0.0367f32), Value::from(0.06f32))
        );
    }

    #[test]
    fn the_command_runs_the_same_settings() {
        let gs = default_for("grayscott").updated(&changes(r#"{"feed": 0.031, "width": 200}"#)).unwrap();
        let command = gs.command(1234);
        assert!(command.contains("--feed 0.031 ") && command.contains("--width 200 "), "{command}");
        assert!(command.contains("--steps 1234") && command.ends_with("--gif"), "{command}");
        let toml = gs.toml(1234, &Device::Cpu).unwrap();
        assert!(toml.contains("feed = 0.031") && toml.contains("steps = 1234"), "{toml}");
    }

    #[test]
    fn a_small_max_cells_shrinks_the_first_model() {
        let limits = Limits { max_cells: 100, ..limits() };
        let start = Settings::starting(&Registry::builtin(), &Device::Cpu, &limits).unwrap();
        assert_eq!(start.settings.get("width"), Some(&Value::from(10)));
        let tiny = Limits { max_cells: 0, ..limits };
        let e = Settings::starting(&Registry::builtin(), &Device::Cpu, &tiny).unwrap_err();
        assert!(e.contains("the first model, grayscott, cannot start"), "{e}");
    }
}
