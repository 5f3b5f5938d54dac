//! `rust_gpu_sim.Barkley`: a model crate of its own (`examples/barkley`, written on the toolkit
//! and the library as an outside crate would be) through the same driver and methods.

use barkley::{
    Field, Model,
    driven::{Barkley as BarkleyFrames, BarkleyRun},
};
use pyo3::{exceptions::PyValueError, prelude::*};
use simulations::{Device, view::FieldView};

use crate::common::{self, OrRaise as _};

/// Barkley's spiral waves, as the `barkley` command runs them (its default model, the broken
/// wave start). `Barkley(width=256, height=256, *, backend="auto")`. `u` and `v`: NumPy copies
/// (the model keeps its fields on the host between steps, on either backend).
#[pyclass(module = "rust_gpu_sim", unsendable)]
pub struct Barkley {
    sim: BarkleyRun,
    device: Device,
    settings: String,
}

#[pymethods]
impl Barkley {
    #[new]
    #[pyo3(signature = (width = None, height = None, *, backend = "auto"))]
    fn new(width: Option<i64>, height: Option<i64>, backend: &str) -> PyResult<Self> {
        let side = |option: &str, value: Option<i64>| -> PyResult<u32> {
            let side = common::positive(option, value)?.unwrap_or(256);
            if !(barkley::MIN_SIDE..=barkley::MAX_SIDE).contains(&side) {
                return Err(PyValueError::new_err(format!(
                    "{option} must be between {} and {}, got {side}",
                    barkley::MIN_SIDE,
                    barkley::MAX_SIDE
                )));
            }
            Ok(side)
        };
        let (width, height) = (side("width", width)?, side("height", height)?);
        simulations::memory::check_host_need(
            &format!("a {width}x{height} grid"),
            barkley::HOST_BYTES_PER_CELL * u64::from(width) * u64::from(height),
            "use a smaller width or height",
        )
        .or_raise()?;
        let device = match common::choice::<simulations::BackendChoice>("backend", backend)? {
            simulations::BackendChoice::Cpu => Device::Cpu,
            choice => Device::select(choice).or_raise()?.0,
        };
        let gpu = match &device {
            Device::Cuda(gpu) => Some(
                ptxkit_host::Gpu::open(gpu.ordinal(), &barkley::IMAGES)
                    .map_err(ptxkit_python::runtime_error)?,
            ),
            Device::Cpu => None,
        };
        let model = Model::default();
        let settings = format!("barkley {width}x{height} {model:?}");
        let sim = BarkleyRun::new(Field::broken_wave(width, height, &model), model, gpu);
        Ok(Self { sim, device, settings })
    }

    /// u, shape (height, width), float32 (a NumPy copy).
    #[getter]
    fn u<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        field(slf, "u")
    }

    /// v, shape (height, width), float32 (a NumPy copy).
    #[getter]
    fn v<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        field(slf, "v")
    }

    fn __repr__(&self) -> String {
        use simulations::driver::{DrivenSimulation as _, State as _};
        let (width, height) = self.sim.frame_size();
        format!("Barkley({width}x{height}, {} steps done, {})", self.sim.steps_done(), self.sim.describe())
    }
}

fn field<'py>(slf: &Bound<'py, Barkley>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    let this = slf.borrow();
    let views = this.field_views().or_raise()?;
    common::field(slf.py(), slf.clone().into_any().unbind(), &views, name, &this.device)
}

impl Barkley {
    fn field_views(&self) -> simulations::Result<Vec<FieldView>> {
        let f = &self.sim.field;
        let shape = vec![f.height as usize, f.width as usize];
        Ok(vec![FieldView::host("u", shape.clone(), &f.u), FieldView::host("v", shape, &f.v)])
    }

    fn variant_name(&self) -> &'static str {
        match self.device {
            Device::Cpu => "cpu",
            Device::Cuda(_) => "cuda",
        }
    }
}

crate::simulation_methods!(Barkley, BarkleyFrames, ["npz", "npy"]);
