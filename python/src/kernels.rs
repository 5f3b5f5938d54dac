//! `rust_gpu_sim.kernels`: ptxkit kernels on the caller's tensors (PyTorch, CuPy: any DLPack
//! producer on a CUDA GPU), launched on the caller's current stream with every argument checked
//! first ([`KernelCall`]). Outputs are the caller's tensors (`out`, ...), so nothing is
//! allocated here; `rust_gpu_sim.torch_ops` wraps them as PyTorch operators that allocate.
//!
//! The cookbook's kernels (`examples/cookbook`: SAXPY safe and raw, softmax over rows, the
//! Jacobi sweep, the transpose) and the Gray-Scott step's kernels (the simulations' own: v1's
//! Laplacian and update, the fused step with the library's tuned launch shape).

use cookbook::gpu as cookbook_launch;
use cookbook_kernels as cookbook_k;
use ptxkit_python::KernelCall;
use pyo3::{exceptions::PyValueError, prelude::*};
use simulations::grayscott::{self, Rates, cuda as gs};
use std::sync::Mutex;

use crate::common::OrRaise as _;

type Stream<'py> = Option<Bound<'py, PyAny>>;

/// `n` as the kernels' `u32`, refusing more elements than they index.
fn count(name: &str, n: usize) -> PyResult<u32> {
    u32::try_from(n).map_err(|_| {
        PyValueError::new_err(format!("{name}: {n} elements, more than the kernel indexes (2³²−1)"))
    })
}

/// The (height, width) of a 2-D grid of cells, each side at least 1 and the cells within
/// `u32` (the kernels index `y·width + x` in 32 bits).
fn grid(name: &str, (rows, cols): (usize, usize)) -> PyResult<(u32, u32)> {
    if rows == 0 || cols == 0 {
        return Err(PyValueError::new_err(format!("{name}: an empty grid ({rows} × {cols})")));
    }
    count(name, rows * cols)?;
    Ok((rows as u32, cols as u32))
}

/// `out = a·x + y` (the safe kernel: bounds-checked slices, a `DisjointSlice` output); 1-D
/// float32 tensors of one length.
#[pyfunction]
#[pyo3(signature = (x, y, out, a, *, stream = None))]
fn saxpy(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    y: &Bound<'_, PyAny>,
    out: &Bound<'_, PyAny>,
    a: f32,
    stream: Stream<'_>,
) -> PyResult<()> {
    let call = KernelCall::new(py, &cookbook::IMAGES, stream.as_ref())?;
    let (x, y, mut out) =
        (call.input::<f32>("x", x)?, call.input::<f32>("y", y)?, call.output::<f32>("out", out)?);
    y.expect_len(x.len())?;
    out.expect_len(x.len())?;
    let cfg = cookbook_launch::saxpy_config(count("x", x.len())?);
    call.launch(cookbook_k::saxpy, cfg, (&x.slice(), &y.slice(), &mut out.slice_mut(), a))
}

/// [`saxpy`] through the raw-pointer kernel (`unsafe` in Rust: the lengths are checked here).
#[pyfunction]
#[pyo3(signature = (x, y, out, a, *, stream = None))]
fn saxpy_raw(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    y: &Bound<'_, PyAny>,
    out: &Bound<'_, PyAny>,
    a: f32,
    stream: Stream<'_>,
) -> PyResult<()> {
    let call = KernelCall::new(py, &cookbook::IMAGES, stream.as_ref())?;
    let (x, y, mut out) =
        (call.input::<f32>("x", x)?, call.input::<f32>("y", y)?, call.output::<f32>("out", out)?);
    y.expect_len(x.len())?;
    out.expect_len(x.len())?;
    let n = count("x", x.len())?;
    call.launch(
        cookbook_k::saxpy_raw,
        cookbook_launch::saxpy_config(n),
        (&x.slice(), &y.slice(), &mut out.slice_mut(), n, a),
    )
}

/// `output[r] = softmax(input[r])` for each row of a 2-D float32 tensor (one warp per row).
#[pyfunction]
#[pyo3(signature = (input, output, *, stream = None))]
fn softmax(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    output: &Bound<'_, PyAny>,
    stream: Stream<'_>,
) -> PyResult<()> {
    let call = KernelCall::new(py, &cookbook::IMAGES, stream.as_ref())?;
    let (input, mut output) = (call.input::<f32>("input", input)?, call.output::<f32>("output", output)?);
    let (rows, cols) = grid("input", input.matrix()?)?;
    output.expect_shape(input.shape())?;
    let cfg = cookbook_launch::softmax_config(rows);
    call.launch(cookbook_k::softmax_rows, cfg, (&input.slice(), &mut output.slice_mut(), rows, cols))
}

/// One Jacobi sweep of Laplace's equation on a 2-D float32 grid (the safe kernel: each
/// interior cell of `output` the mean of its four neighbours in `input`, the boundary copied).
#[pyfunction]
#[pyo3(signature = (input, output, *, stream = None))]
fn jacobi(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    output: &Bound<'_, PyAny>,
    stream: Stream<'_>,
) -> PyResult<()> {
    let call = KernelCall::new(py, &cookbook::IMAGES, stream.as_ref())?;
    let (input, mut output) = (call.input::<f32>("input", input)?, call.output::<f32>("output", output)?);
    let (height, width) = grid("input", input.matrix()?)?;
    output.expect_shape(input.shape())?;
    let cfg = cookbook_launch::jacobi_config(width, height);
    call.launch(
        cookbook_k::jacobi_5pt,
        cfg,
        (input.slice().rows(width as usize), output.slice_mut().rows(width as usize)),
    )
}

/// `output = inputᵀ` for a 2-D float32 tensor (shared-memory tiles): `output` has the shape
/// (columns, rows) of `input`'s (rows, columns).
#[pyfunction]
#[pyo3(signature = (input, output, *, stream = None))]
fn transpose(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    output: &Bound<'_, PyAny>,
    stream: Stream<'_>,
) -> PyResult<()> {
    let call = KernelCall::new(py, &cookbook::IMAGES, stream.as_ref())?;
    let (input, mut output) = (call.input::<f32>("input", input)?, call.output::<f32>("output", output)?);
    let (height, width) = grid("input", input.matrix()?)?;
    output.expect_shape(&[i64::from(width), i64::from(height)])?;
    let cfg = cookbook_launch::transpose_config(width, height);
    call.launch(cookbook_k::transpose_f32, cfg, (&input.slice(), &mut output.slice_mut(), width, height))
}

/// The rates of a Gray-Scott step: `feed` and `kill` given, the diffusion rates and time step
/// the library's defaults unless given.
fn rates(du: Option<f32>, dv: Option<f32>, feed: f32, kill: f32, dt: Option<f32>) -> Rates {
    Rates {
        du: du.unwrap_or(grayscott::DEFAULT_DU),
        dv: dv.unwrap_or(grayscott::DEFAULT_DV),
        feed,
        kill,
        dt: dt.unwrap_or(grayscott::DEFAULT_DT),
    }
}

/// Gray-Scott v1's first kernel: `lu = ∇²u`, `lv = ∇²v` (periodic 5-point Laplacian) for 2-D
/// float32 (height, width) tensors.
#[pyfunction]
#[pyo3(signature = (u, v, lu, lv, *, stream = None))]
fn grayscott_laplacian(
    py: Python<'_>,
    u: &Bound<'_, PyAny>,
    v: &Bound<'_, PyAny>,
    lu: &Bound<'_, PyAny>,
    lv: &Bound<'_, PyAny>,
    stream: Stream<'_>,
) -> PyResult<()> {
    let call = KernelCall::new(py, simulations::cuda::IMAGES, stream.as_ref())?;
    let (u, v) = (call.input::<f32>("u", u)?, call.input::<f32>("v", v)?);
    let (mut lu, mut lv) = (call.output::<f32>("lu", lu)?, call.output::<f32>("lv", lv)?);
    let (height, width) = grid("u", u.matrix()?)?;
    v.expect_shape(u.shape())?;
    lu.expect_shape(u.shape())?;
    lv.expect_shape(u.shape())?;
    let (gpu, stream) = call.target()?;
    let args = (&u.slice(), &v.slice(), &mut lu.slice_mut(), &mut lv.slice_mut(), width, height);
    gs::launch_laplacian_on(&gpu, &stream, width, height, args).or_raise()?;
    call.launched()
}

/// Gray-Scott v1's second kernel: one Euler step of `u`, `v` in place from their Laplacians
/// `lu`, `lv` (U and V clamped to [0, 1]).
#[pyfunction]
#[pyo3(signature = (u, v, lu, lv, *, feed, kill, du = None, dv = None, dt = None, stream = None))]
#[allow(clippy::too_many_arguments)]
fn grayscott_update(
    py: Python<'_>,
    u: &Bound<'_, PyAny>,
    v: &Bound<'_, PyAny>,
    lu: &Bound<'_, PyAny>,
    lv: &Bound<'_, PyAny>,
    feed: f32,
    kill: f32,
    du: Option<f32>,
    dv: Option<f32>,
    dt: Option<f32>,
    stream: Stream<'_>,
) -> PyResult<()> {
    let call = KernelCall::new(py, simulations::cuda::IMAGES, stream.as_ref())?;
    let (mut u, mut v) = (call.output::<f32>("u", u)?, call.output::<f32>("v", v)?);
    let (lu, lv) = (call.input::<f32>("lu", lu)?, call.input::<f32>("lv", lv)?);
    let (height, width) = grid("u", u.matrix()?)?;
    v.expect_shape(u.shape())?;
    lu.expect_shape(u.shape())?;
    lv.expect_shape(u.shape())?;
    let (gpu, stream) = call.target()?;
    let rates = rates(du, dv, feed, kill, dt);
    let args = (&mut u.slice_mut(), &mut v.slice_mut(), &lu.slice(), &lv.slice(), width, height, rates);
    gs::launch_update_on(&gpu, &stream, width, height, args).or_raise()?;
    call.launched()
}

/// The fused Gray-Scott step (the simulation's `fused` variant): one step from (`u`, `v`) into
/// (`u_next`, `v_next`), with the launch shape the library tunes for the grid (the first call
/// at a new size on a GPU tunes it, synchronising; call once before capturing a graph).
#[pyfunction]
#[pyo3(signature = (u, v, u_next, v_next, *, feed, kill, du = None, dv = None, dt = None, stream = None))]
#[allow(clippy::too_many_arguments)]
fn grayscott_fused(
    py: Python<'_>,
    u: &Bound<'_, PyAny>,
    v: &Bound<'_, PyAny>,
    u_next: &Bound<'_, PyAny>,
    v_next: &Bound<'_, PyAny>,
    feed: f32,
    kill: f32,
    du: Option<f32>,
    dv: Option<f32>,
    dt: Option<f32>,
    stream: Stream<'_>,
) -> PyResult<()> {
    let call = KernelCall::new(py, simulations::cuda::IMAGES, stream.as_ref())?;
    let (u, v) = (call.input::<f32>("u", u)?, call.input::<f32>("v", v)?);
    let (mut u_next, mut v_next) =
        (call.output::<f32>("u_next", u_next)?, call.output::<f32>("v_next", v_next)?);
    let (height, width) = grid("u", u.matrix()?)?;
    v.expect_shape(u.shape())?;
    u_next.expect_shape(u.shape())?;
    v_next.expect_shape(u.shape())?;
    let (gpu, stream) = call.target()?;
    let mut shape = fused_shape(&gpu, width, height)?;
    let (u, v, mut u_next, mut v_next) = (u.slice(), v.slice(), u_next.slice_mut(), v_next.slice_mut());
    // Four columns a thread load and store `float4`s: every row must start 16-byte aligned,
    // which a view into a larger tensor need not be. Then one column a thread (the same
    // arithmetic, bit for bit).
    let pointers = [u.device_pointer(), v.device_pointer(), u_next.device_pointer(), v_next.device_pointer()];
    if shape.columns == 4 && pointers.iter().any(|p| p % 16 != 0) {
        shape = gs::FusedShape::default();
    }
    let rates = rates(du, dv, feed, kill, dt);
    let args = (&u, &v, &mut u_next, &mut v_next, width, height, rates, shape.rows);
    gs::launch_fused_on(&gpu, &stream, width, height, shape, args).or_raise()?;
    call.launched()
}

/// The fused step's launch shapes found so far, by (GPU, width, height): the library's
/// tuning is asked once per process and size (it reads its cache file, keyed by a hash of the
/// kernels, or times the candidates: about 2 ms a call on an H100, where the step itself takes
/// 2 µs at 512²).
static FUSED_SHAPES: Mutex<Vec<(ShapeKey, gs::FusedShape)>> = Mutex::new(Vec::new());

/// A GPU's ordinal, a grid's width and height.
type ShapeKey = (usize, u32, u32);

fn fused_shape(gpu: &simulations::cuda::Gpu, width: u32, height: u32) -> PyResult<gs::FusedShape> {
    let key = (gpu.ordinal(), width, height);
    let mut shapes = FUSED_SHAPES.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((_, shape)) = shapes.iter().find(|(k, _)| *k == key) {
        return Ok(*shape);
    }
    let (shape, _source) = gs::fused_shape_for(gpu, width, height, true).or_raise()?;
    shapes.push((key, shape));
    Ok(shape)
}

/// The `kernels` submodule.
pub fn module(py: Python<'_>) -> PyResult<Bound<'_, PyModule>> {
    let module = PyModule::new(py, "kernels")?;
    module.add_function(wrap_pyfunction!(saxpy, &module)?)?;
    module.add_function(wrap_pyfunction!(saxpy_raw, &module)?)?;
    module.add_function(wrap_pyfunction!(softmax, &module)?)?;
    module.add_function(wrap_pyfunction!(jacobi, &module)?)?;
    module.add_function(wrap_pyfunction!(transpose, &module)?)?;
    module.add_function(wrap_pyfunction!(grayscott_laplacian, &module)?)?;
    module.add_function(wrap_pyfunction!(grayscott_update, &module)?)?;
    module.add_function(wrap_pyfunction!(grayscott_fused, &module)?)?;
    Ok(module)
}
