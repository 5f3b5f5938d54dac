//! The models a server offers: [`Registry`], and the one adaptor ([`Registered`]) through
//! which a session handles any [`LiveModel`] without knowing its types.

use std::{any::Any, sync::Arc};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use simulations::{Device, driver::DrivenSimulation};

use super::{
    builtin::{GrayScottLive, HeatLive, PhysarumLive},
    model::{Demand, LiveModel, ParameterMapImage, Recorded},
};

/// The models a server offers, in the order the page lists them; the first is the one a
/// session starts with.
#[derive(Clone, Default)]
pub struct Registry {
    entries: Vec<Arc<dyn Entry>>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl Registry {
    /// No models.
    pub fn new() -> Self {
        Self::default()
    }

    /// The built-in simulations: Gray-Scott, Physarum and heat.
    pub fn builtin() -> Self {
        let mut registry = Self::new();
        registry.register(GrayScottLive).register(PhysarumLive).register(HeatLive);
        registry
    }

    /// Adds `model` at the end of the list ([`Registry::check`] refuses a name taken twice).
    pub fn register<M: LiveModel>(&mut self, model: M) -> &mut Self {
        self.entries.push(Arc::new(Registered(model)));
        self
    }

    /// The models' names, in order.
    pub fn names(&self) -> Vec<&'static str> {
        self.entries.iter().map(|e| e.name()).collect()
    }

    /// Refuses an empty registry, a malformed name or one taken twice.
    pub fn check(&self) -> Result<(), String> {
        if self.entries.is_empty() {
            return Err("no model is registered to serve".into());
        }
        let names = self.names();
        for (i, name) in names.iter().enumerate() {
            let well_formed = !name.is_empty()
                && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
            if !well_formed {
                return Err(format!(
                    "a model's name must be lowercase ASCII letters, digits and '-', got '{name}'"
                ));
            }
            if names[..i].contains(name) {
                return Err(format!("two models are registered as '{name}'"));
            }
        }
        Ok(())
    }

    pub(crate) fn get(&self, name: &str) -> Option<&Arc<dyn Entry>> {
        self.entries.iter().find(|e| e.name() == name)
    }

    pub(crate) fn first(&self) -> Option<&Arc<dyn Entry>> {
        self.entries.first()
    }

    /// What the page needs to offer each model: name, label, controls, presets, grid, tools.
    pub(crate) fn describe(&self) -> Vec<Value> {
        self.entries.iter().map(|e| e.describe()).collect()
    }
}

/// A running simulation of any model.
pub(crate) trait LiveRun: DrivenSimulation {
    fn as_any(&mut self) -> &mut dyn Any;
}

impl<T: DrivenSimulation + 'static> LiveRun for T {
    fn as_any(&mut self) -> &mut dyn Any {
        self
    }
}

/// A model's checked setup, of the model's own type.
pub(crate) type AnySetup = Arc<dyn Any + Send + Sync>;

/// The two settings every model has, checked by the server.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Common {
    pub palette: String,
    pub steps_per_frame: u32,
}

const COMMON: [&str; 2] = ["palette", "steps_per_frame"];

/// A model seen through JSON settings (the page's) and erased setups and runs: what a session
/// holds. Settings maps hold every setting, the model's and [`Common`]'s. Each method is the
/// [`LiveModel`] method of the same name, with the settings read and the setup and simulation
/// taken back as the model's own types.
pub(crate) trait Entry: Send + Sync {
    fn name(&self) -> &'static str;
    fn describe(&self) -> Value;
    fn grid(&self) -> &'static [&'static str];
    fn defaults(&self, device: &Device) -> Result<Map<String, Value>, String>;
    /// `values` read as this model's settings and written back: every value of its type, every
    /// setting there (the error is serde's, naming what is wrong).
    fn normalize(&self, values: &Map<String, Value>) -> Result<Map<String, Value>, String>;
    fn take_preset(&self, values: &Map<String, Value>, name: &str) -> Result<Map<String, Value>, String>;
    fn check(&self, values: &Map<String, Value>) -> Result<(AnySetup, Demand), String>;
    fn build(&self, setup: &AnySetup, device: &Device) -> Result<Box<dyn LiveRun>, String>;
    fn change_live(&self, old: &AnySetup, new: &AnySetup, run: &mut dyn LiveRun) -> Result<bool, String>;
    fn brush(&self, run: &mut dyn LiveRun, x: f32, y: f32, radius: f32) -> Result<(), String>;
    fn parameter_map(&self, setup: &AnySetup, device: &Device) -> Result<ParameterMapImage, String>;
    fn command(&self, values: &Map<String, Value>, steps: u32) -> Option<String>;
    fn record(&self, values: &Map<String, Value>, steps: u32, device: &Device) -> Result<String, String>;
}

/// The adaptor from a [`LiveModel`] to an [`Entry`].
struct Registered<M>(M);

impl<M: LiveModel> Registered<M> {
    /// Splits settings into the server's and the model's, typed.
    fn read(values: &Map<String, Value>) -> Result<(Common, M::Settings), String> {
        let (common, model): (Map<String, Value>, Map<String, Value>) =
            values.clone().into_iter().partition(|(key, _)| COMMON.contains(&key.as_str()));
        let common = serde_json::from_value(Value::Object(common)).map_err(|e| e.to_string())?;
        let model = serde_json::from_value(Value::Object(model)).map_err(|e| e.to_string())?;
        Ok((common, model))
    }

    fn write(common: &Common, model: &M::Settings) -> Result<Map<String, Value>, String> {
        let Value::Object(mut values) = serde_json::to_value(model).map_err(|e| e.to_string())? else {
            return Err(format!("the settings of {} are not a JSON object", std::any::type_name::<M>()));
        };
        let Value::Object(common) = serde_json::to_value(common).map_err(|e| e.to_string())? else {
            unreachable!("a struct serialises to an object")
        };
        values.extend(common);
        Ok(values)
    }

    /// A setup of this model (a session hands back only those it was given).
    fn setup<'a>(&self, setup: &'a AnySetup) -> Result<&'a M::Setup, String> {
        setup.downcast_ref().ok_or_else(|| format!("not a setup of {}", self.0.name()))
    }

    /// A simulation of this model (a session hands back only those it was given).
    fn run<'a>(&self, run: &'a mut dyn LiveRun) -> Result<&'a mut M::Run, String> {
        run.as_any().downcast_mut().ok_or_else(|| format!("not a simulation of {}", self.0.name()))
    }

    fn recorded<'a>(common: &'a Common, model: &'a M::Settings) -> Recorded<'a, M::Settings> {
        Recorded { model, palette: &common.palette, steps_per_frame: common.steps_per_frame }
    }
}

impl<M: LiveModel> Entry for Registered<M> {
    fn name(&self) -> &'static str {
        self.0.name()
    }

    fn describe(&self) -> Value {
        json!({
            "name": self.0.name(),
            "label": self.0.label(),
            "grid": self.0.grid(),
            "controls": self.0.controls(),
            "presets": self.0.presets(),
            "brush": M::BRUSH,
            "map": M::PARAMETER_MAP,
        })
    }

    fn grid(&self) -> &'static [&'static str] {
        self.0.grid()
    }

    fn defaults(&self, device: &Device) -> Result<Map<String, Value>, String> {
        let start = self.0.defaults(device);
        let common = Common { palette: start.palette.into(), steps_per_frame: start.steps_per_frame };
        Self::write(&common, &start.settings)
    }

    fn normalize(&self, values: &Map<String, Value>) -> Result<Map<String, Value>, String> {
        let (common, model) = Self::read(values)?;
        Self::write(&common, &model)
    }

    fn take_preset(&self, values: &Map<String, Value>, name: &str) -> Result<Map<String, Value>, String> {
        let (common, mut model) = Self::read(values)?;
        self.0.take_preset(&mut model, name)?;
        Self::write(&common, &model)
    }

    fn check(&self, values: &Map<String, Value>) -> Result<(AnySetup, Demand), String> {
        let (_, model) = Self::read(values)?;
        if M::RANGES_ARE_LIMITS {
            for control in self.0.controls() {
                if let Some(value) = values.get(control.name).and_then(Value::as_f64) {
                    control.check(value)?;
                }
            }
        }
        let setup = self.0.check(&model)?;
        let demand = self.0.demand(&setup);
        Ok((Arc::new(setup), demand))
    }

    fn build(&self, setup: &AnySetup, device: &Device) -> Result<Box<dyn LiveRun>, String> {
        let run = self.0.build(self.setup(setup)?, device).map_err(|e| e.to_string())?;
        Ok(Box::new(run))
    }

    fn change_live(&self, old: &AnySetup, new: &AnySetup, run: &mut dyn LiveRun) -> Result<bool, String> {
        self.0.change_live(self.setup(old)?, self.setup(new)?, self.run(run)?)
    }

    fn brush(&self, run: &mut dyn LiveRun, x: f32, y: f32, radius: f32) -> Result<(), String> {
        self.0.brush(self.run(run)?, x, y, radius)
    }

    fn parameter_map(&self, setup: &AnySetup, device: &Device) -> Result<ParameterMapImage, String> {
        self.0.parameter_map(self.setup(setup)?, device)
    }

    fn command(&self, values: &Map<String, Value>, steps: u32) -> Option<String> {
        let (common, model) = Self::read(values).ok()?;
        self.0.command(&Self::recorded(&common, &model), steps)
    }

    fn record(&self, values: &Map<String, Value>, steps: u32, device: &Device) -> Result<String, String> {
        let (common, model) = Self::read(values)?;
        self.0.record(&Self::recorded(&common, &model), steps, device)
    }
}
