//! One call of a kernel from Python: its tensors imported and checked, its GPU and stream,
//! and the launch ([`KernelCall`]).

use crate::stream::{ConsumerStream, RawStream, explicit_stream, library_current_stream};
use dlpark::{
    DlpackElement, DlpackFlags,
    ffi::{DLDataType, DLDeviceType},
    python::{ImportRequest, ImportedDlpack, consumer::exchange::ExchangeApi},
};
use ptxkit_host::{
    BorrowedSlice, BorrowedSliceMut, Gpu, Kernel, KernelArgs, KernelImages,
    cudarc::driver::{CudaStream, LaunchConfig},
};
use pyo3::{
    exceptions::{PyRuntimeError, PyTypeError, PyValueError},
    prelude::*,
};
use std::{
    cell::RefCell,
    marker::PhantomData,
    sync::{Arc, Mutex},
};

/// The GPUs opened for calls, one per kernel images and device (opened on first use, then kept).
static GPUS: Mutex<Vec<(usize, i32, Arc<Gpu>)>> = Mutex::new(Vec::new());

/// The GPU `device` opened with `images`.
pub fn gpu_for(images: &'static KernelImages, device: i32) -> PyResult<Arc<Gpu>> {
    let key = images as *const KernelImages as usize;
    let mut gpus = GPUS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((_, _, gpu)) = gpus.iter().find(|(k, d, _)| *k == key && *d == device) {
        return Ok(gpu.clone());
    }
    let ordinal =
        usize::try_from(device).map_err(|_| PyValueError::new_err(format!("no CUDA device {device}")))?;
    let gpu = Gpu::open(ordinal, images).map_err(runtime_error)?;
    gpus.push((key, device, gpu.clone()));
    Ok(gpu)
}

/// A toolkit error as Python's `RuntimeError`.
pub fn runtime_error(error: ptxkit_host::Error) -> PyErr {
    PyRuntimeError::new_err(error.to_string())
}

/// Where a call's kernels run.
struct Target {
    device: i32,
    gpu: Arc<Gpu>,
    stream: RawStream,
}

/// An argument's memory, for the overlap check.
struct Span {
    name: &'static str,
    start: usize,
    end: usize,
    written: bool,
}

#[derive(Default)]
struct CallState {
    target: Option<Target>,
    /// The thread's CUDA context before the call, put back when it ends (as PyTorch's device
    /// guard does): taken at the first tensor on a GPU.
    context: Option<crate::stream::ContextGuard>,
    /// The library (top-level module) of the first tensor.
    library: Option<String>,
    /// The imported tensors, held (and with them the producers' memory) until the call ends.
    imports: Vec<ImportedDlpack>,
    /// Other streams the tensors' memory belongs to (their library's current stream, where it
    /// is not the call's): after the launch each waits for the call's stream, so memory freed
    /// to its allocator there is not reused before the kernel is done (`record_stream`'s job).
    homes: Vec<RawStream>,
    spans: Vec<Span>,
}

/// One call of a kernel from Python.
///
/// A kernel's Python function makes one, imports each tensor with [`KernelCall::input`] or
/// [`KernelCall::output`], checks lengths, then launches (python/README.md shows one whole).
///
/// Each tensor is checked as it is imported: a DLPack producer on a CUDA device (the first
/// one's; a CPU array is a `TypeError`), of element type `T` (`TypeError`), contiguous and, for
/// an output, writable and sharing no memory with another argument (`ValueError`); every
/// message starts with the parameter's name. The stream is chosen at the first tensor
/// ([`crate::stream`]'s rule). Nothing is launched until [`KernelCall::launch`].
pub struct KernelCall<'py> {
    _python: PhantomData<Python<'py>>,
    images: &'static KernelImages,
    explicit: Option<RawStream>,
    state: RefCell<CallState>,
}

impl<'py> KernelCall<'py> {
    /// A call of a kernel of `images`, on `stream` if given (else the tensors' library's current
    /// stream).
    pub fn new(
        _py: Python<'py>,
        images: &'static KernelImages,
        stream: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Self> {
        let explicit = stream.filter(|s| !s.is_none()).map(explicit_stream).transpose()?;
        Ok(Self { _python: PhantomData, images, explicit, state: RefCell::new(CallState::default()) })
    }

    /// Imports `object` for a parameter the kernel reads.
    pub fn input<T: DlpackElement>(
        &self,
        name: &'static str,
        object: &Bound<'py, PyAny>,
    ) -> PyResult<TensorIn<'_, T>> {
        let tensor = self.import::<T>(name, object, false)?;
        Ok(TensorIn { tensor, _call: PhantomData })
    }

    /// Imports `object` for a parameter the kernel writes.
    pub fn output<T: DlpackElement>(
        &self,
        name: &'static str,
        object: &Bound<'py, PyAny>,
    ) -> PyResult<TensorOut<'_, T>> {
        let tensor = self.import::<T>(name, object, true)?;
        Ok(TensorOut { tensor, _call: PhantomData })
    }

    /// Launches `kernel` on the call's stream, with the arguments checked against its
    /// parameters at compile time (as [`Gpu::launch`]).
    pub fn launch<K: Kernel>(
        &self,
        kernel: K,
        cfg: LaunchConfig,
        args: impl KernelArgs<K::Params>,
    ) -> PyResult<()> {
        let (gpu, stream) = self.target()?;
        gpu.launch_on(&stream, kernel, cfg, args).map_err(runtime_error)?;
        self.launched()
    }

    /// The call's GPU and stream, for a launcher of a library (`launch_on`-style functions
    /// that take a stream); call [`KernelCall::launched`] after launching on it.
    pub fn target(&self) -> PyResult<(Arc<Gpu>, Arc<CudaStream>)> {
        let state = self.state.borrow();
        let target =
            state.target.as_ref().ok_or_else(|| PyTypeError::new_err("the call has no tensor argument"))?;
        // SAFETY: the stream is the tensors' library's (or the caller's) live stream of this
        // device, whose primary context the GPU was opened on.
        let stream = unsafe { target.gpu.borrow_stream(target.stream as _) };
        Ok((target.gpu.clone(), stream))
    }

    /// After the launch on [`KernelCall::target`]'s stream: the streams the tensors' memory
    /// belongs to wait for it, and the stream is noted for [`last_stream`].
    pub fn launched(&self) -> PyResult<()> {
        let state = self.state.borrow();
        let Some(target) = &state.target else { return Ok(()) };
        *LAST_STREAM.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(target.stream);
        for &home in &state.homes {
            // SAFETY: both are live streams of the current context (the GPU's, bound at the
            // first tensor).
            unsafe { crate::stream::order_after(target.stream, home) }?;
        }
        Ok(())
    }

    fn import<T: DlpackElement>(
        &self,
        name: &'static str,
        object: &Bound<'py, PyAny>,
        written: bool,
    ) -> PyResult<Tensor> {
        let mut state = self.state.borrow_mut();
        let imported = match &state.target {
            None => {
                let (imported, target) = self.first_import(name, object, &mut state.context)?;
                state.target = Some(target);
                imported
            }
            Some(target) => {
                let request = request(name, object)?;
                let device = request.device().map_err(|_| no_device(name, object))?;
                check_device(name, object, device.device_type, device.device_id, Some(target.device))?;
                request
                    .import(Some(&ConsumerStream(target.stream)), Some(false))
                    .map_err(|e| prefixed(name, e))?
            }
        };
        // Memory of another library than the first tensor's, or any memory when the call
        // named its stream, may belong to another stream than the call's.
        let library = library_of(object)?;
        let target = state.target.as_ref().expect("set by the first import");
        if (self.explicit.is_some() || state.library.as_ref().is_some_and(|first| *first != library))
            && let Some(home) = library_current_stream(object, target.device)?
            && home != target.stream
            && !state.homes.contains(&home)
        {
            state.homes.push(home);
        }
        state.library.get_or_insert(library);
        let tensor = describe::<T>(name, &imported, written)?;
        for other in &state.spans {
            let overlaps = tensor.address < other.end && other.start < tensor.address + tensor.bytes;
            if overlaps && (written || other.written) && tensor.bytes > 0 && other.end > other.start {
                return Err(PyValueError::new_err(format!(
                    "{name}: shares memory with {}; an output must not overlap another argument",
                    other.name
                )));
            }
        }
        state.spans.push(Span { name, start: tensor.address, end: tensor.address + tensor.bytes, written });
        state.imports.push(imported);
        Ok(tensor)
    }

    /// The first tensor: it decides the device and, unless the call named one, the stream.
    fn first_import(
        &self,
        name: &'static str,
        object: &Bound<'py, PyAny>,
        context: &mut Option<crate::stream::ContextGuard>,
    ) -> PyResult<(ImportedDlpack, Target)> {
        let exchange = match self.explicit {
            None => ExchangeApi::from_object(object.as_borrowed()).map_err(|e| prefixed(name, e))?,
            Some(_) => None,
        };
        if let Some(api) = exchange {
            // The producer's own current stream comes with the tensor: launching there needs
            // no ordering at all.
            let (tensor, stream) =
                api.import_managed_no_sync(object.as_borrowed()).map_err(|e| prefixed(name, e))?.into_parts();
            let device =
                tensor.validate().map_err(|e| PyValueError::new_err(format!("{name}: {e}")))?.device();
            check_device(name, object, device.device_type, device.device_id, None)?;
            let gpu = open_on(self.images, device.device_id, context)?;
            let target = Target { device: device.device_id, gpu, stream: stream as RawStream };
            return Ok((ImportedDlpack::Versioned(tensor), target));
        }
        let request = request(name, object)?;
        let device = request.device().map_err(|_| no_device(name, object))?;
        check_device(name, object, device.device_type, device.device_id, None)?;
        let stream = match self.explicit {
            Some(stream) => stream,
            None => library_current_stream(object, device.device_id)?.unwrap_or(0),
        };
        let gpu = open_on(self.images, device.device_id, context)?;
        let imported =
            request.import(Some(&ConsumerStream(stream)), Some(false)).map_err(|e| prefixed(name, e))?;
        Ok((imported, Target { device: device.device_id, gpu, stream }))
    }
}

/// The GPU `device` opened with `images`, its context made current for the call (the thread's
/// context before it kept in `context`, put back when the call ends).
fn open_on(
    images: &'static KernelImages,
    device: i32,
    context: &mut Option<crate::stream::ContextGuard>,
) -> PyResult<Arc<Gpu>> {
    context.get_or_insert_with(crate::stream::ContextGuard::save);
    let gpu = gpu_for(images, device)?;
    gpu.context().bind_to_thread().map_err(|e| PyRuntimeError::new_err(format!("binding the GPU: {e}")))?;
    Ok(gpu)
}

/// The top-level module of `object`'s type (`torch`, `cupy`, `numpy`).
fn library_of(object: &Bound<'_, PyAny>) -> PyResult<String> {
    let module = object.get_type().getattr("__module__")?.extract::<String>()?;
    Ok(module.split('.').next().unwrap_or_default().to_owned())
}

/// The stream the last kernel launched from Python ran on (any call, any thread), for tests
/// and diagnostics: a raw `CUstream` handle (0: the legacy default stream).
pub fn last_stream() -> Option<RawStream> {
    *LAST_STREAM.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

static LAST_STREAM: Mutex<Option<RawStream>> = Mutex::new(None);

fn request<'py>(name: &str, object: &Bound<'py, PyAny>) -> PyResult<ImportRequest<'py>> {
    if object.hasattr("__dlpack__")? || object.hasattr("__dlpack_c_exchange_api__")? {
        return ImportRequest::new(object.as_borrowed()).map_err(|e| prefixed(name, e));
    }
    Err(PyTypeError::new_err(format!(
        "{name}: expected a tensor or array (an object with __dlpack__, such as a torch.Tensor or cupy.ndarray), got {}",
        type_name(object)
    )))
}

fn type_name(object: &Bound<'_, PyAny>) -> String {
    object.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "an object".into())
}

fn no_device(name: &str, object: &Bound<'_, PyAny>) -> PyErr {
    PyTypeError::new_err(format!(
        "{name}: a {} that does not say which device it is on (no __dlpack_device__)",
        type_name(object)
    ))
}

fn prefixed(name: &str, error: PyErr) -> PyErr {
    Python::attach(|py| {
        let kind = error.get_type(py);
        let message = format!("{name}: {}", error.value(py));
        if kind.is_subclass_of::<PyTypeError>().unwrap_or(false) {
            PyTypeError::new_err(message)
        } else {
            PyValueError::new_err(message)
        }
    })
}

/// Refuses a tensor off the GPU, or on another GPU than the call's (`expected`).
fn check_device(
    name: &str,
    object: &Bound<'_, PyAny>,
    kind: DLDeviceType,
    id: i32,
    expected: Option<i32>,
) -> PyResult<()> {
    if kind != DLDeviceType::CUDA {
        let place = if kind == DLDeviceType::CPU {
            "in host memory (CPU)".to_owned()
        } else {
            format!("on DLPack device type {}", kind.0)
        };
        return Err(PyTypeError::new_err(format!(
            "{name}: a {} {place}; this kernel runs on a CUDA GPU (move it there first, e.g. .cuda())",
            type_name(object)
        )));
    }
    if let Some(expected) = expected
        && id != expected
    {
        return Err(PyValueError::new_err(format!(
            "{name}: on cuda:{id}, while the call's first tensor is on cuda:{expected}; pass tensors of one GPU"
        )));
    }
    Ok(())
}

/// A checked import: the address, extents and byte size of a contiguous tensor of `T`.
struct Tensor {
    name: &'static str,
    address: usize,
    shape: Vec<i64>,
    len: usize,
    bytes: usize,
}

fn describe<T: DlpackElement>(
    name: &'static str,
    imported: &ImportedDlpack,
    written: bool,
) -> PyResult<Tensor> {
    let tensor = imported.validate().map_err(|e| PyValueError::new_err(format!("{name}: {e}")))?;
    let expected = DLDataType::of::<T>();
    if tensor.dtype() != expected {
        return Err(PyTypeError::new_err(format!(
            "{name}: a {} tensor; this kernel takes {}",
            dtype_name(tensor.dtype()),
            dtype_name(expected)
        )));
    }
    if !row_major(tensor.shape(), tensor.strides()) {
        return Err(PyValueError::new_err(format!(
            "{name}: not contiguous (shape {:?}, strides {:?}); pass {name}.contiguous()",
            tensor.shape(),
            tensor.strides().unwrap_or_default()
        )));
    }
    if written && imported.flags().contains(DlpackFlags::READ_ONLY) {
        return Err(PyValueError::new_err(format!("{name}: a read-only array; this kernel writes it")));
    }
    let address = tensor.data_ptr() as usize + tensor.byte_offset() as usize;
    if !address.is_multiple_of(std::mem::align_of::<T>()) {
        return Err(PyValueError::new_err(format!(
            "{name}: its data is not aligned for {}",
            dtype_name(expected)
        )));
    }
    Ok(Tensor {
        name,
        address,
        shape: tensor.shape().to_vec(),
        len: tensor.num_elements(),
        bytes: tensor.num_bytes(),
    })
}

/// `float32`, `int64`, ... as NumPy and PyTorch name them.
pub fn dtype_name(dtype: DLDataType) -> String {
    let kind = match dtype.code.0 {
        0 => "int",
        1 => "uint",
        2 => "float",
        4 => "bfloat",
        5 => "complex",
        6 => "bool",
        _ => "opaque",
    };
    let lanes = if dtype.lanes > 1 { format!("x{}", dtype.lanes) } else { String::new() };
    if kind == "bool" { "bool".into() } else { format!("{kind}{}{lanes}", dtype.bits) }
}

/// A tensor the kernel reads, held by its [`KernelCall`].
pub struct TensorIn<'c, T> {
    tensor: Tensor,
    _call: PhantomData<(&'c (), T)>,
}

/// A tensor the kernel writes, held by its [`KernelCall`].
pub struct TensorOut<'c, T> {
    tensor: Tensor,
    _call: PhantomData<(&'c (), T)>,
}

macro_rules! tensor_checks {
    ($ty:ident) => {
        impl<T> $ty<'_, T> {
            /// The number of elements.
            pub fn len(&self) -> usize {
                self.tensor.len
            }

            /// Whether it has no elements.
            pub fn is_empty(&self) -> bool {
                self.tensor.len == 0
            }

            /// The extents, slowest first.
            pub fn shape(&self) -> &[i64] {
                &self.tensor.shape
            }

            /// Refuses (`ValueError`, naming the parameter) any other number of elements.
            pub fn expect_len(&self, len: usize) -> PyResult<()> {
                if self.tensor.len == len {
                    return Ok(());
                }
                Err(PyValueError::new_err(format!(
                    "{}: {} elements (shape {:?}), expected {len}",
                    self.tensor.name, self.tensor.len, self.tensor.shape
                )))
            }

            /// Refuses (`ValueError`, naming the parameter) any other shape.
            pub fn expect_shape(&self, shape: &[i64]) -> PyResult<()> {
                if self.tensor.shape == shape {
                    return Ok(());
                }
                Err(PyValueError::new_err(format!(
                    "{}: shape {:?}, expected {shape:?}",
                    self.tensor.name, self.tensor.shape
                )))
            }

            /// The (rows, columns) of a 2-D tensor, refusing another number of dimensions.
            pub fn matrix(&self) -> PyResult<(usize, usize)> {
                match self.tensor.shape[..] {
                    [rows, cols] => Ok((rows as usize, cols as usize)),
                    _ => Err(PyValueError::new_err(format!(
                        "{}: shape {:?}, expected a 2-D tensor (rows, columns)",
                        self.tensor.name, self.tensor.shape
                    ))),
                }
            }
        }
    };
}

tensor_checks!(TensorIn);
tensor_checks!(TensorOut);

impl<T> TensorIn<'_, T> {
    /// The memory, as a kernel argument for a `*const T` or `&[T]` parameter.
    pub fn slice(&self) -> BorrowedSlice<'_, T> {
        // SAFETY: `describe` checked the element type, contiguity and alignment; the call holds
        // the import (and with it the memory) for longer than this borrow.
        unsafe { BorrowedSlice::from_raw(self.tensor.address as u64, self.tensor.len) }
    }
}

impl<T> TensorOut<'_, T> {
    /// The memory, as a kernel argument for a `*mut T` or `DisjointSlice<T>` parameter
    /// (`.rows(width)` for a `DisjointSlice2d<T>`).
    pub fn slice_mut(&mut self) -> BorrowedSliceMut<'_, T> {
        // SAFETY: as `TensorIn::slice`, and the import checked that no other argument of the
        // call shares this memory.
        unsafe { BorrowedSliceMut::from_raw(self.tensor.address as u64, self.tensor.len) }
    }
}

/// Whether `strides` (in elements; none: row-major) lay `shape` out row-major without gaps. An
/// extent of 1 may have any stride, as PyTorch's `is_contiguous` allows (it exports such
/// strides as they are since 2.10).
fn row_major(shape: &[i64], strides: Option<&[i64]>) -> bool {
    let Some(strides) = strides else { return true };
    let mut expected = 1i64;
    for (&extent, &stride) in shape.iter().zip(strides).rev() {
        if extent > 1 && stride != expected {
            return false;
        }
        expected = expected.saturating_mul(extent);
    }
    true
}
