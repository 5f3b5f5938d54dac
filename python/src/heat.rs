//! `rust_gpu_sim.Heat`.

use pyo3::prelude::*;
use simulations::{
    Device,
    heat::{self, HeatFrames, HeatInit, HeatVariant},
};

use crate::common::{self, OrRaise as _};

/// 3-D heat diffusion with RK4, as `rust-gpu-sim heat` runs it.
///
/// `Heat(size=128, *, nx, ny, nz, alpha=1, h=1, dt, boundary_value=0, init="hot-cube", seed=1,
/// variant, backend="auto")`: the command line's options (`dt` defaults to the stable step for
/// the grid). `u`: the field, shape (nz, ny, nx); on a GPU a zero-copy view (DLPack) valid
/// until the next `step`, on the CPU a NumPy copy.
#[pyclass(module = "rust_gpu_sim", unsendable)]
pub struct Heat {
    sim: heat::Heat,
    device: Device,
    variant: HeatVariant,
    settings: String,
}

#[pymethods]
impl Heat {
    #[new]
    #[pyo3(signature = (size = None, *, nx = None, ny = None, nz = None, alpha = None, h = None, dt = None,
                        boundary_value = None, init = None, seed = None, variant = None, backend = "auto"))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        size: Option<i64>,
        nx: Option<i64>,
        ny: Option<i64>,
        nz: Option<i64>,
        alpha: Option<f32>,
        h: Option<f32>,
        dt: Option<f32>,
        boundary_value: Option<f32>,
        init: Option<&str>,
        seed: Option<i64>,
        variant: Option<&str>,
        backend: &str,
    ) -> PyResult<Self> {
        let choices = heat::HeatChoices {
            size: common::positive("size", size)?,
            nx: common::positive("nx", nx)?,
            ny: common::positive("ny", ny)?,
            nz: common::positive("nz", nz)?,
            steps: None,
            alpha,
            h,
            dt,
            boundary_value,
            init: init.map(|name| common::choice::<HeatInit>("init", name)).transpose()?,
            seed: common::seed(seed)?,
        };
        let setup = choices.setup().or_raise()?;
        let (device, variant) = common::select::<HeatVariant>(py, backend, variant)?;
        let sim = heat::Heat::new(&setup, &device, variant).or_raise()?;
        let settings =
            serde_json::to_string(&heat::HeatChoices::resolved(&setup, choices.steps())).unwrap_or_default();
        Ok(Self { sim, device, variant, settings })
    }

    /// The temperature field, shape (nz, ny, nx), float32.
    #[getter]
    fn u<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let this = slf.borrow();
        let views = this.sim.views().or_raise()?;
        common::field(slf.py(), slf.clone().into_any().unbind(), &views, "u", &this.device)
    }

    /// The time step.
    #[getter]
    fn dt(&self) -> f32 {
        self.sim.setup().dt
    }

    /// `(nz, ny, nx)`.
    #[getter]
    fn shape(&self) -> (u32, u32, u32) {
        let [nx, ny, nz] = self.sim.setup().n;
        (nz, ny, nx)
    }

    fn __repr__(&self) -> String {
        let [nx, ny, nz] = self.sim.setup().n;
        format!("Heat({nx}x{ny}x{nz}, {} steps done, {})", self.sim.steps_done(), self.sim.describe())
    }
}

impl Heat {
    fn variant_name(&self) -> &'static str {
        simulations::Choice::name(self.variant)
    }

    fn field_views(&self) -> simulations::Result<Vec<simulations::view::FieldView>> {
        self.sim.views()
    }
}

crate::simulation_methods!(Heat, HeatFrames, ["npz", "npy", "vti"]);
