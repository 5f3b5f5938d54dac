//! `rust_gpu_sim.Physarum`.

use pyo3::{prelude::*, types::PyDict};
use simulations::{
    Device,
    physarum::{
        self, AgentInit, PHYSARUM_PRESETS, PhysarumFrames, PhysarumVariant, Sensing, driven::PhysarumRun,
    },
};

use crate::common::{self, OrRaise as _};

/// Physarum agents and their trail map, as `rust-gpu-sim physarum` runs them.
///
/// `Physarum(size=1024, *, width, height, agents=1_500_000, preset="network", sensor_dist,
/// sensor_angle, turn_angle, step_size, deposit, diffuse, decay, jitter, sensing, init, seed=1,
/// variant, backend="auto")`: the command line's options. `trail`: shape (height, width); on a
/// GPU a zero-copy view (DLPack) valid until the next `step`, on the CPU a NumPy copy.
#[pyclass(module = "rust_gpu_sim", unsendable)]
pub struct Physarum {
    sim: PhysarumRun,
    device: Device,
    variant: PhysarumVariant,
    settings: String,
}

#[pymethods]
impl Physarum {
    #[new]
    #[pyo3(signature = (size = None, *, width = None, height = None, agents = None, preset = None,
                        sensor_dist = None, sensor_angle = None, turn_angle = None, step_size = None,
                        deposit = None, diffuse = None, decay = None, jitter = None, sensing = None,
                        init = None, seed = None, variant = None, backend = "auto"))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        size: Option<i64>,
        width: Option<i64>,
        height: Option<i64>,
        agents: Option<i64>,
        preset: Option<String>,
        sensor_dist: Option<f32>,
        sensor_angle: Option<f32>,
        turn_angle: Option<f32>,
        step_size: Option<f32>,
        deposit: Option<f32>,
        diffuse: Option<f32>,
        decay: Option<f32>,
        jitter: Option<f32>,
        sensing: Option<&str>,
        init: Option<&str>,
        seed: Option<i64>,
        variant: Option<&str>,
        backend: &str,
    ) -> PyResult<Self> {
        let size = common::positive("size", size)?;
        let choices = physarum::PhysarumChoices {
            preset,
            width: common::positive("width", width)?.or(size),
            height: common::positive("height", height)?.or(size),
            agents: common::positive("agents", agents)?,
            steps: None,
            sensor_dist,
            sensor_angle,
            turn_angle,
            step_size,
            deposit,
            diffuse,
            decay,
            jitter,
            sensing: sensing.map(|name| common::choice::<Sensing>("sensing", name)).transpose()?,
            init: init.map(|name| common::choice::<AgentInit>("init", name)).transpose()?,
            init_image: None,
            image_strength: None,
            seed: common::seed(seed)?,
        };
        let setup = choices.setup(choices.steps()).or_raise()?;
        let (device, variant) = common::select::<PhysarumVariant>(py, backend, variant)?;
        let sim = physarum::Physarum::new(&setup, &device, variant).or_raise()?;
        let preset = choices.preset.clone().unwrap_or_else(|| physarum::DEFAULT_PRESET.into());
        let settings =
            serde_json::to_string(&physarum::PhysarumChoices::resolved(&preset, &setup, choices.steps()))
                .unwrap_or_default();
        Ok(Self { sim: PhysarumRun { sim, save_agents: false }, device, variant, settings })
    }

    /// The trail map, shape (height, width), float32.
    #[getter]
    fn trail<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let this = slf.borrow();
        let views = this.sim.sim.views().or_raise()?;
        common::field(slf.py(), slf.clone().into_any().unbind(), &views, "trail", &this.device)
    }

    /// The agents (a copy): a dict of NumPy float32 arrays `x`, `y` and `heading` (radians), by
    /// agent.
    #[getter]
    fn agents<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let agents = self.sim.sim.agents().or_raise()?;
        let dict = PyDict::new(py);
        for (name, values) in [("x", agents.x), ("y", agents.y), ("heading", agents.heading)] {
            let len = values.len();
            dict.set_item(name, ptxkit_python::Array::from_f32(py, values, &[len])?.into_numpy(py)?)?;
        }
        Ok(dict)
    }

    /// Whether `save` and `run(save=...)` also write the agents (`--save-agents`).
    #[getter]
    fn save_agents(&self) -> bool {
        self.sim.save_agents
    }

    #[setter]
    fn set_save_agents(&mut self, save: bool) {
        self.sim.save_agents = save;
    }

    /// `(height, width)`.
    #[getter]
    fn shape(&self) -> (u32, u32) {
        let setup = self.sim.sim.setup();
        (setup.height, setup.width)
    }

    /// The presets: a list of dicts (name, description, and the parameters they set).
    #[staticmethod]
    fn presets<'py>(py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        PHYSARUM_PRESETS
            .iter()
            .map(|p| {
                let dict = PyDict::new(py);
                dict.set_item("name", p.name)?;
                dict.set_item("description", p.description)?;
                for (key, value) in [
                    ("sensor_dist", p.sensor_dist),
                    ("sensor_angle", p.sensor_angle),
                    ("turn_angle", p.turn_angle),
                    ("step_size", p.step_size),
                    ("deposit", p.deposit),
                    ("diffuse", p.diffuse),
                    ("decay", p.decay),
                ] {
                    dict.set_item(key, value)?;
                }
                Ok(dict)
            })
            .collect()
    }

    fn __repr__(&self) -> String {
        let setup = self.sim.sim.setup();
        format!(
            "Physarum({}x{}, {} agents, {} steps done, {})",
            setup.width,
            setup.height,
            setup.agents,
            self.sim.sim.steps_done(),
            self.sim.sim.describe()
        )
    }
}

impl Physarum {
    fn variant_name(&self) -> &'static str {
        simulations::Choice::name(self.variant)
    }

    fn field_views(&self) -> simulations::Result<Vec<simulations::view::FieldView>> {
        self.sim.sim.views()
    }
}

crate::simulation_methods!(Physarum, PhysarumFrames, ["npz", "npy"]);
