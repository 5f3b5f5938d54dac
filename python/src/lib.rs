//! The Python package `rust_gpu_sim`'s extension module (`rust_gpu_sim._native`): the
//! simulations as classes ([`grayscott`], [`heat`], [`physarum`], and a model crate's:
//! [`barkley`]; their shared methods from
//! [`methods`], their shared plumbing in [`common`]) and the kernels on the caller's tensors
//! ([`kernels`]). docs/python.md is the user's guide.

// The simulations' kernel images, linked into whatever links this crate (simulations/src/cuda/images.rs).
use simulations_images as _;

mod barkley;
mod common;
mod grayscott;
mod heat;
mod kernels;
mod methods;
mod physarum;

use pyo3::prelude::*;

/// Whether a CUDA GPU is usable here (a driver and at least one device).
#[pyfunction]
fn cuda_available() -> bool {
    simulations::cuda::device_count().is_ok_and(|n| n > 0)
}

/// The stream the last kernel launched from Python ran on: a raw `CUstream` handle (0: the
/// legacy default stream), `None` before any launch. For tests and diagnostics.
#[pyfunction]
fn _last_launch_stream() -> Option<usize> {
    ptxkit_python::last_stream()
}

#[pymodule]
fn _native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = module.py();
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    module.add_class::<grayscott::GrayScott>()?;
    module.add_class::<heat::Heat>()?;
    module.add_class::<physarum::Physarum>()?;
    module.add_class::<barkley::Barkley>()?;
    module.add_class::<ptxkit_python::Array>()?;
    module.add_function(wrap_pyfunction!(cuda_available, module)?)?;
    module.add_function(wrap_pyfunction!(_last_launch_stream, module)?)?;
    module.add_submodule(&kernels::module(py)?)?;
    Ok(())
}
