//! `rust_gpu_sim.GrayScott`.

use pyo3::{prelude::*, types::PyDict};
use simulations::{
    Device,
    grayscott::{self, GrayScottFrames, Init, PRESETS, Variant},
};

use crate::common::{self, OrRaise as _};

/// Gray-Scott reaction-diffusion on a periodic grid, as `rust-gpu-sim grayscott` runs it.
///
/// `GrayScott(size=512, *, width, height, preset="coral", feed, kill, du, dv, dt, init,
/// seed=1, variant, backend="auto")`: the options of the command line (a preset's rates, start
/// and step count; values given replace the preset's). `backend`: `auto` (the GPU if usable),
/// `cuda` or `cpu`; `variant`: the command line's (`fused`, `streaming`, ...; default the
/// GPU's default, or `cpu`).
///
/// `u` and `v`: on a GPU, zero-copy views of the simulation's own memory (DLPack:
/// `torch.from_dlpack(sim.u)`), valid until the next `step` (which may swap the buffers: take
/// them again after stepping); on the CPU, NumPy copies.
#[pyclass(module = "rust_gpu_sim", unsendable)]
pub struct GrayScott {
    sim: grayscott::GrayScott,
    device: Device,
    variant: Variant,
    settings: String,
    preset_steps: u32,
}

#[pymethods]
impl GrayScott {
    #[new]
    #[pyo3(signature = (size = None, *, width = None, height = None, preset = None, feed = None, kill = None,
                        du = None, dv = None, dt = None, init = None, seed = None, variant = None,
                        backend = "auto"))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        size: Option<i64>,
        width: Option<i64>,
        height: Option<i64>,
        preset: Option<String>,
        feed: Option<f32>,
        kill: Option<f32>,
        du: Option<f32>,
        dv: Option<f32>,
        dt: Option<f32>,
        init: Option<&str>,
        seed: Option<i64>,
        variant: Option<&str>,
        backend: &str,
    ) -> PyResult<Self> {
        let size = common::positive("size", size)?.unwrap_or(grayscott::DEFAULT_SIZE);
        let choices = grayscott::Choices {
            preset: Some(preset.unwrap_or_else(|| grayscott::DEFAULT_PRESET.into())),
            width: Some(common::positive("width", width)?.unwrap_or(size)),
            height: Some(common::positive("height", height)?.unwrap_or(size)),
            steps: None,
            feed,
            kill,
            du,
            dv,
            dt,
            init: init.map(|name| common::choice::<Init>("init", name)).transpose()?,
            init_image: None,
            seed: common::seed(seed)?,
        };
        let setup = choices.setup().or_raise()?;
        let preset_steps = choices.steps().or_raise()?;
        let (device, variant) = common::select::<Variant>(py, backend, variant)?;
        let sim = grayscott::GrayScott::new_tuned(&setup, &device, variant, true).or_raise()?;
        let preset = choices.preset.clone().unwrap_or_default();
        let settings = serde_json::to_string(&grayscott::Choices::resolved(&preset, &setup, preset_steps))
            .unwrap_or_default();
        Ok(Self { sim, device, variant, settings, preset_steps })
    }

    /// U, shape (height, width), float32.
    #[getter]
    fn u<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        field(slf, "u")
    }

    /// V, shape (height, width), float32.
    #[getter]
    fn v<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        field(slf, "v")
    }

    /// The step count of the preset (the command line's default `--steps`).
    #[getter]
    fn preset_steps(&self) -> u32 {
        self.preset_steps
    }

    /// `(height, width)`.
    #[getter]
    fn shape(&self) -> (u32, u32) {
        (self.sim.height(), self.sim.width())
    }

    /// The rates in use: a dict of du, dv, feed, kill, dt.
    #[getter]
    fn rates<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let r = self.sim.rates();
        let dict = PyDict::new(py);
        for (name, value) in [("du", r.du), ("dv", r.dv), ("feed", r.feed), ("kill", r.kill), ("dt", r.dt)] {
            dict.set_item(name, value)?;
        }
        Ok(dict)
    }

    /// The presets: a list of dicts (name, feed, kill, init, steps, description).
    #[staticmethod]
    fn presets<'py>(py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        PRESETS
            .iter()
            .map(|p| {
                let dict = PyDict::new(py);
                dict.set_item("name", p.name)?;
                dict.set_item("feed", p.feed)?;
                dict.set_item("kill", p.kill)?;
                dict.set_item("init", simulations::Choice::name(p.init))?;
                dict.set_item("steps", p.steps)?;
                dict.set_item("description", p.description)?;
                Ok(dict)
            })
            .collect()
    }

    fn __repr__(&self) -> String {
        format!(
            "GrayScott({}x{}, {} steps done, {})",
            self.sim.width(),
            self.sim.height(),
            self.sim.steps_done(),
            self.sim.describe()
        )
    }
}

fn field<'py>(slf: &Bound<'py, GrayScott>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    let this = slf.borrow();
    let views = this.sim.views().or_raise()?;
    common::field(slf.py(), slf.clone().into_any().unbind(), &views, name, &this.device)
}

impl GrayScott {
    fn variant_name(&self) -> &'static str {
        simulations::Choice::name(self.variant)
    }

    fn field_views(&self) -> simulations::Result<Vec<simulations::view::FieldView>> {
        self.sim.views()
    }
}

crate::simulation_methods!(GrayScott, GrayScottFrames, ["npz", "npy"]);
