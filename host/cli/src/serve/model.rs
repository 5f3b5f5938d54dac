//! What a model gives the live view: one [`LiveModel`] implementation, registered with
//! [`super::Registry::register`]. The server does the rest: the page's controls, the checks
//! of every value the page sends (types, unknown settings, ranges, `serve`'s limits), the
//! session thread that steps the simulation and sends its frames.

use serde::{Serialize, de::DeserializeOwned};
use simulations::{Device, driver::DrivenSimulation};

/// A model the live view can run.
///
/// Its settings are a serde struct: the page sees them as one JSON object (with `palette` and
/// `steps_per_frame`, which every model has and the server checks) and sends changes to any
/// of its fields; the server refuses unknown fields and values of the wrong type before
/// [`LiveModel::check`] sees them.
pub trait LiveModel: Send + Sync + 'static {
    /// The model's own settings, every value resolved. Fields named `simulation`, `palette`
    /// or `steps_per_frame` are the server's and must not be used.
    type Settings: Serialize + DeserializeOwned + Send + Sync + 'static;
    /// Settings that passed [`LiveModel::check`]: what a simulation is built from.
    type Setup: Send + Sync + 'static;
    /// A running simulation: the driver's trait, as for every other output.
    /// It lives on its session's thread only.
    type Run: DrivenSimulation + 'static;

    /// Whether the page's ranges ([`LiveModel::controls`]) are also the values the server
    /// accepts (refused outside them, naming the range). `false` where the model's own checks
    /// decide and the sliders only span the useful part (the built-in models: their checks are
    /// the command line's).
    const RANGES_ARE_LIMITS: bool = true;
    /// Whether [`LiveModel::brush`] does something (the page shows its radius).
    const BRUSH: bool = false;
    /// Whether [`LiveModel::parameter_map`] does something (the page offers it).
    const PARAMETER_MAP: bool = false;

    /// The name `start` asks for and messages use ("barkley"): lowercase ASCII letters,
    /// digits and '-'.
    fn name(&self) -> &'static str;
    /// The name in the page's list of models ("Barkley").
    fn label(&self) -> &'static str;
    /// The settings a new simulation of this model starts from on `device` (sized for it).
    fn defaults(&self, device: &Device) -> Start<Self::Settings>;
    /// The settings the page offers a control for, with their ranges.
    fn controls(&self) -> Vec<Control>;
    /// The settings the page's "grid side" box sets, all to the side it is given (a square
    /// grid: width and height; a cube: its side); empty: no such box.
    fn grid(&self) -> &'static [&'static str] {
        &["width", "height"]
    }
    /// The presets the page lists.
    fn presets(&self) -> Vec<PresetInfo> {
        Vec::new()
    }
    /// Takes the preset called `name` into `settings` (the page's `preset` change, applied
    /// before the other changes of the same message).
    fn take_preset(&self, _settings: &mut Self::Settings, _name: &str) -> Result<(), String> {
        Err(format!("preset: {} has no presets", self.name()))
    }
    /// Checks the settings (the message names the setting at fault and its valid values).
    fn check(&self, settings: &Self::Settings) -> Result<Self::Setup, String>;
    /// What a simulation of `setup` takes, for `serve`'s limits.
    fn demand(&self, setup: &Self::Setup) -> Demand;
    /// A new simulation of `setup` on `device`, at step 0.
    fn build(&self, setup: &Self::Setup, device: &Device) -> simulations::Result<Self::Run>;
    /// Changes `run` from `old` to `new` in place, where the model can; `Ok(false)`: a new
    /// simulation is built instead (the default). Called only when the model's settings
    /// differ (a palette or steps-per-frame change needs nothing of the model).
    fn change_live(
        &self,
        _old: &Self::Setup,
        _new: &Self::Setup,
        _run: &mut Self::Run,
    ) -> Result<bool, String> {
        Ok(false)
    }
    /// The page's brush at (`x`, `y`), in cells, within the grid; `radius` in (0, 512].
    fn brush(&self, _run: &mut Self::Run, _x: f32, _y: f32, _radius: f32) -> Result<(), String> {
        Err(format!("{} has no brush", self.label()))
    }
    /// A picture of the model's behaviour over two of its parameters, computed on `device`
    /// (Gray-Scott's (F, k) map).
    fn parameter_map(&self, _setup: &Self::Setup, _device: &Device) -> Result<ParameterMapImage, String> {
        Err("the parameter map is Gray-Scott's".into())
    }
    /// The command line that runs these settings for `steps` steps in batch, if there is one.
    fn command(&self, _settings: &Recorded<Self::Settings>, _steps: u32) -> Option<String> {
        None
    }
    /// The settings as a text document (snapshots embed it; the page offers to copy it).
    /// Default: a TOML table named after the model, with the palette, steps per frame and
    /// steps done.
    fn record(
        &self,
        settings: &Recorded<Self::Settings>,
        steps: u32,
        _device: &Device,
    ) -> Result<String, String> {
        let mut table =
            toml::Table::try_from(settings.model).map_err(|e| format!("recording the settings: {e}"))?;
        table.insert("palette".into(), settings.palette.into());
        table.insert("steps_per_frame".into(), i64::from(settings.steps_per_frame).into());
        table.insert("steps".into(), i64::from(steps).into());
        let document = toml::Table::from_iter([(self.name().to_owned(), toml::Value::Table(table))]);
        toml::to_string(&document).map_err(|e| format!("recording the settings: {e}"))
    }
}

/// A model's starting settings, and the two settings every model has.
#[derive(Clone, Debug)]
pub struct Start<S> {
    pub settings: S,
    /// A palette's name (`simulations::render::PALETTES`).
    pub palette: &'static str,
    pub steps_per_frame: u32,
}

/// A session's settings as recorded: the model's, and the two every model has.
#[derive(Debug)]
pub struct Recorded<'a, S> {
    pub model: &'a S,
    pub palette: &'a str,
    pub steps_per_frame: u32,
}

/// One control of the page: a setting (by its JSON name) and its range.
#[derive(Clone, Debug, Serialize)]
pub struct Control {
    pub name: &'static str,
    pub label: &'static str,
    pub min: f64,
    pub max: f64,
    pub step: f64,
    pub kind: ControlKind,
}

/// How the page shows a control.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ControlKind {
    /// A slider; each move is sent.
    Slider,
    /// A number box; sent when it is left.
    Number,
}

impl Control {
    /// A slider over `min ..= max` in steps of `step`.
    pub fn slider(name: &'static str, label: &'static str, min: f64, max: f64, step: f64) -> Self {
        Self { name, label, min, max, step, kind: ControlKind::Slider }
    }

    /// A box for a whole number in `min ..= max`.
    pub fn number(name: &'static str, label: &'static str, min: f64, max: f64) -> Self {
        Self { name, label, min, max, step: 1.0, kind: ControlKind::Number }
    }

    /// Refuses a value outside the range, naming the setting.
    pub fn check(&self, value: f64) -> Result<(), String> {
        if !(self.min..=self.max).contains(&value) {
            return Err(format!("{} must be between {} and {}, got {value}", self.name, self.min, self.max));
        }
        Ok(())
    }
}

/// A preset as the page lists it.
#[derive(Clone, Debug, Serialize)]
pub struct PresetInfo {
    pub name: &'static str,
    pub description: &'static str,
}

/// What a simulation takes, for `serve`'s limits (`--max-cells`, `--max-agents`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Demand {
    /// Grid cells (a 3-D grid: all of them).
    pub cells: u64,
    pub agents: u64,
}

/// A parameter map: `tiles × tiles` tiles of `side²` cells, one palette level per cell,
/// row-major over the whole square (`tiles · side` cells a side); the x parameter (`kill`)
/// grows to the right, the y one (`feed`) upwards.
#[derive(Clone, Debug)]
pub struct ParameterMapImage {
    pub tiles: u32,
    pub side: u32,
    pub feed: (f32, f32),
    pub kill: (f32, f32),
    pub levels: Vec<u8>,
}
