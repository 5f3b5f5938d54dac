//! What the three simulation classes share: errors as Python exceptions, the backend and
//! variant, checked sizes, the fields handed out, frames, and the outputs a run writes through
//! the library's driver (the command line's, so a run's files are the command's).

use std::path::PathBuf;

use ptxkit_python::{Array, Place};
use pyo3::{
    exceptions::{PyFileNotFoundError, PyRuntimeError, PyValueError},
    prelude::*,
};
use simulations::{
    BackendChoice, Choice, Device,
    choice::VariantChoice,
    driver::{DrivenSimulation, Driver, FrameDefaults, OutputOptions, StateOptions},
    view::{FieldView, Residence},
};

/// A library error as the Python exception a user expects: a refused option or input (an
/// output path that cannot be written, a checkpoint of another run) is a `ValueError`, an input
/// file that is not there a `FileNotFoundError`, the rest (no GPU, a CUDA failure, a write that
/// failed midway) a `RuntimeError`. Options are named as the command line spells them
/// (`--gif`).
pub fn py_err(error: simulations::Error) -> PyErr {
    use simulations::Error;
    let message = error.to_string();
    match &error {
        Error::Input { path, .. } if !path.exists() => PyFileNotFoundError::new_err(message),
        Error::InvalidInput(_) | Error::SameOnEveryRank(_) | Error::TooBig { .. } | Error::Input { .. } => {
            PyValueError::new_err(message)
        }
        _ => PyRuntimeError::new_err(message),
    }
}

/// Results of the simulations, as Python results.
pub trait OrRaise<T> {
    fn or_raise(self) -> PyResult<T>;
}

impl<T> OrRaise<T> for simulations::Result<T> {
    fn or_raise(self) -> PyResult<T> {
        self.map_err(py_err)
    }
}

/// A named choice (`backend`, `variant`, `init`, ...), refusing an unknown name with the list
/// of valid ones.
pub fn choice<C: Choice>(option: &str, name: &str) -> PyResult<C> {
    C::from_name(name)
        .ok_or_else(|| PyValueError::new_err(format!("unknown {option} '{name}'; valid: {}", C::names())))
}

/// Opens the device for `backend` and `variant` as the command line does (`auto`: the GPU if
/// one is usable, else the CPU, with a `RuntimeWarning` saying why, as the command's notice).
pub fn select<V: VariantChoice>(
    py: Python<'_>,
    backend: &str,
    variant: Option<&str>,
) -> PyResult<(Device, V)> {
    let backend: BackendChoice = choice("backend", backend)?;
    let variant = variant.map(|name| choice::<V>("variant", name)).transpose()?;
    let (device, variant, notice) = V::select(backend, variant).or_raise()?;
    if let Some(notice) = notice {
        let warning = py.get_type::<pyo3::exceptions::PyRuntimeWarning>();
        PyErr::warn(py, &warning, &std::ffi::CString::new(notice).unwrap_or_default(), 1)?;
    }
    Ok((device, variant))
}

/// Waits, on a GPU, for all work queued on it (the simulation's and its consumers').
pub fn settle(device: &Device) {
    if let Device::Cuda(gpu) = device {
        // A failure here has been or will be reported by the call that queued the work.
        let _ = gpu.context().synchronize();
    }
}

/// Makes the stream that writes `views` (a simulation's, on a GPU) wait for the work queued so
/// far on the stream `stream` names.
pub fn wait_stream(views: &[FieldView], device: &Device, stream: &Bound<'_, PyAny>) -> PyResult<()> {
    let handle = ptxkit_python::stream::explicit_stream(stream)?;
    let (Device::Cuda(gpu), Some(Residence::Cuda { stream: own, .. })) =
        (device, views.first().map(|v| v.residence))
    else {
        return Ok(());
    };
    let _restored = ptxkit_python::stream::ContextGuard::save();
    gpu.context().bind_to_thread().map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    // SAFETY: the simulation's stream lives with it; the caller's is its promise (a live stream
    // of this GPU).
    unsafe { ptxkit_python::stream::order_after(handle, own) }
}

/// A grid extent or count given from Python: at least 1 and within `u32`.
pub fn positive(option: &str, value: Option<i64>) -> PyResult<Option<u32>> {
    value
        .map(|n| {
            u32::try_from(n)
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| PyValueError::new_err(format!("{option} must be a positive integer, got {n}")))
        })
        .transpose()
}

/// A seed given from Python: not negative.
pub fn seed(value: Option<i64>) -> PyResult<Option<simulations::settings::Seed>> {
    value
        .map(|n| {
            u64::try_from(n)
                .map(simulations::settings::Seed)
                .map_err(|_| PyValueError::new_err(format!("seed must be a non-negative integer, got {n}")))
        })
        .transpose()
}

/// A step count given from Python: not negative, within `u32`.
pub fn steps(value: i64) -> PyResult<u32> {
    u32::try_from(value)
        .map_err(|_| PyValueError::new_err(format!("steps must be between 0 and {}, got {value}", u32::MAX)))
}

/// The field `name` of `views` for Python: on a GPU an [`Array`] over the simulation's own
/// memory (zero-copy, kept alive by `owner`), on the host a NumPy array of its values (a copy:
/// the CPU backend replaces its buffers as it steps).
pub fn field<'py>(
    py: Python<'py>,
    owner: Py<PyAny>,
    views: &[FieldView],
    name: &str,
    device: &Device,
) -> PyResult<Bound<'py, PyAny>> {
    let view = views
        .iter()
        .find(|v| v.name == name)
        .ok_or_else(|| PyRuntimeError::new_err(format!("the simulation has no field '{name}'")))?;
    match (view.residence, device) {
        (Residence::Cuda { stream, .. }, Device::Cuda(gpu)) => {
            let place = Place::Cuda { gpu: gpu.clone(), stream };
            // SAFETY: the view is the simulation's buffer of `shape` f32 values on this GPU,
            // written on `stream`; the simulation (`owner`) keeps its buffers for its whole
            // life (stepping swaps them, never frees them).
            let array = unsafe { Array::new(owner, view.address, &view.shape, place) };
            Ok(Bound::new(py, array)?.into_any())
        }
        _ => {
            // SAFETY: a host view is `len` f32 values, alive until the simulation next steps;
            // copied at once.
            let values =
                unsafe { std::slice::from_raw_parts(view.address as *const f32, view.len()) }.to_vec();
            Array::from_f32(py, values, &view.shape)?.into_numpy(py)
        }
    }
}

/// `"cpu"` or `"cuda:N"`.
pub fn device_name(device: &Device) -> String {
    match device {
        Device::Cpu => "cpu".into(),
        Device::Cuda(gpu) => format!("cuda:{}", gpu.ordinal()),
    }
}

/// The current frame of `sim` through `palette` (the simulation's by default) as a NumPy
/// `uint8` array of shape (height, width, 3).
pub fn frame_rgb<'py, F: FrameDefaults>(
    py: Python<'py>,
    sim: &mut impl DrivenSimulation,
    palette: Option<&str>,
) -> PyResult<Bound<'py, PyAny>> {
    let name = palette.unwrap_or(F::PALETTE);
    let palette = simulations::driver::palette(name).or_raise()?;
    let levels = sim.frame().or_raise()?;
    let (width, height) = sim.frame_size();
    let rgb = palette.to_rgb(&levels);
    Array::from_u8(py, rgb, &[height as usize, width as usize, 3])?.into_numpy(py)
}

/// What a run writes, as `run`'s keyword arguments.
#[derive(Default)]
pub struct Outputs {
    pub gif: Option<PathBuf>,
    pub mp4: Option<PathBuf>,
    pub png: Option<PathBuf>,
    pub png_dir: Option<PathBuf>,
    pub save: Option<PathBuf>,
    pub save_every: Option<i64>,
    pub checkpoint: Option<PathBuf>,
    pub checkpoint_every: Option<i64>,
    pub frame_every: Option<i64>,
    pub fps: Option<i64>,
    pub palette: Option<String>,
}

/// Runs `sim` `steps` more steps through the library's driver, writing `outputs` as the
/// command line writes them (checked before any step; whole or not at all); returns the files
/// written. `formats`: the `save` extensions the simulation writes; `settings`: the text its
/// pictures record.
pub fn run<F: FrameDefaults>(
    sim: &mut impl DrivenSimulation,
    steps: u32,
    outputs: Outputs,
    formats: &[&str],
    settings: String,
) -> PyResult<Vec<String>> {
    let every = |option: &str, value: Option<i64>| -> PyResult<Option<u32>> {
        value
            .map(|n| {
                u32::try_from(n)
                    .map_err(|_| PyValueError::new_err(format!("{option} must be at least 1, got {n}")))
            })
            .transpose()
    };
    let mut output = OutputOptions::<F>::default();
    output.gif = outputs.gif;
    output.mp4 = outputs.mp4;
    output.png = outputs.png;
    output.png_dir = outputs.png_dir;
    if let Some(n) = every("frame_every", outputs.frame_every)? {
        output.frame_every = n;
    }
    if let Some(n) = every("fps", outputs.fps)? {
        output.fps = n;
    }
    if let Some(palette) = outputs.palette {
        output.palette = palette;
    }
    let state = StateOptions {
        save: outputs.save,
        save_every: every("save_every", outputs.save_every)?,
        checkpoint: outputs.checkpoint,
        checkpoint_every: every("checkpoint_every", outputs.checkpoint_every)?,
        resume: None,
    };
    let total = sim.steps_done() + u64::from(steps);
    let total = u32::try_from(total).map_err(|_| {
        PyValueError::new_err(format!("a run ends at step {} at most, not {total}", u32::MAX))
    })?;
    let driver = Driver::new(output, state, formats, Vec::new()).or_raise()?;
    let driver = driver.open(sim.frame_size(), true, settings).or_raise()?;
    let report = driver.run(sim, total, "steps").and_then(|finishing| finishing.finish()).or_raise()?;
    Ok(report.written.iter().map(|p| p.display().to_string()).collect())
}

/// Writes the current fields as `save` writes them (`.npz`, or `.npy` per field; heat also
/// `.vti`), refusing another extension; returns the files written.
pub fn save(sim: &mut impl DrivenSimulation, path: PathBuf, formats: &[&str]) -> PyResult<Vec<String>> {
    let state = StateOptions { save: Some(path.clone()), ..StateOptions::default() };
    state.check(formats).or_raise()?;
    let fields = sim.fields().or_raise()?;
    let written = simulations::export::save(&path, &fields).or_raise()?;
    Ok(written.iter().map(|p| p.display().to_string()).collect())
}
