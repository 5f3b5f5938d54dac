//! Which stream a call from Python launches on, and ordering between streams.
//!
//! The rule, in order:
//! 1. the call's `stream=` argument: an integer handle (0: the legacy default stream), an
//!    object with `cuda_stream` (`torch.cuda.Stream`), `ptr` (`cupy.cuda.Stream`) or
//!    `__cuda_stream__` (the CUDA stream protocol);
//! 2. the current stream of the library that made the first tensor: through the DLPack C
//!    exchange API where its type has one (PyTorch), else `torch.cuda.current_stream(device)`
//!    for a PyTorch tensor and `cupy.cuda.get_current_stream()` for a CuPy array;
//! 3. otherwise the legacy default stream, which orders with every blocking stream.
//!
//! Every other tensor is imported for that stream: its producer orders its own work before it
//! (`__dlpack__(stream=...)`), or, through the exchange API, the call's stream waits for the
//! producer's with an event.

use dlpark::{
    ffi::DLDevice,
    python::{DlpackStream, StreamArg, consumer::stream::cuda as cuda_stream_arg},
};
use ptxkit_host::cudarc::driver::sys;
use pyo3::{exceptions::PyTypeError, prelude::*};
use std::ffi::c_void;

/// A raw `CUstream` handle (0: the legacy default stream).
pub type RawStream = usize;

/// The handle the `stream=` argument names.
pub fn explicit_stream(stream: &Bound<'_, PyAny>) -> PyResult<RawStream> {
    if let Ok(handle) = stream.extract::<usize>() {
        return Ok(handle);
    }
    for attribute in ["cuda_stream", "ptr"] {
        if let Ok(value) = stream.getattr(attribute)
            && let Ok(handle) = value.extract::<usize>()
        {
            return Ok(handle);
        }
    }
    if let Ok(protocol) = stream.getattr("__cuda_stream__") {
        // The CUDA stream protocol: a method returning (version, handle).
        let value = if protocol.is_callable() { protocol.call0()? } else { protocol };
        if let Ok((_, handle)) = value.extract::<(i64, usize)>() {
            return Ok(handle);
        }
    }
    Err(PyTypeError::new_err(format!(
        "stream: expected a CUDA stream (an integer handle, torch.cuda.Stream or cupy.cuda.Stream), got {}",
        stream.get_type().name()?
    )))
}

/// The current stream of the library whose array `object` is, on `device` (rule 2 without
/// the exchange API), or `None` for another library.
pub fn library_current_stream(object: &Bound<'_, PyAny>, device: i32) -> PyResult<Option<RawStream>> {
    let py = object.py();
    let module = object.get_type().getattr("__module__")?.extract::<String>()?;
    let library = module.split('.').next().unwrap_or_default();
    match library {
        "torch" => {
            let stream = py.import("torch")?.getattr("cuda")?.call_method1("current_stream", (device,))?;
            Ok(Some(stream.getattr("cuda_stream")?.extract()?))
        }
        "cupy" => {
            let stream = py.import("cupy")?.getattr("cuda")?.call_method1("get_current_stream", (device,))?;
            Ok(Some(stream.getattr("ptr")?.extract()?))
        }
        _ => Ok(None),
    }
}

/// A call's stream, as DLPack's consumer: producers make their data ready on it.
pub struct ConsumerStream(pub RawStream);

// SAFETY: the handle is a live stream of the device the tensors are on (the call's rule), and
// it is passed as an integer as the CUDA DLPack convention asks (null as the sentinel 1).
unsafe impl DlpackStream for ConsumerStream {
    fn as_python_arg(&self, _py: Python<'_>, _device: DLDevice) -> PyResult<StreamArg> {
        Ok(cuda_stream_arg(self.0 as *mut c_void))
    }

    unsafe fn wait_for_producer(&self, _device: DLDevice, producer: *mut c_void) -> PyResult<bool> {
        // SAFETY: the producer stream is live (dlpark's contract), ours is the call's.
        unsafe { order_after(producer as RawStream, self.0) }?;
        Ok(true)
    }
}

/// Makes `consumer` wait for the work queued so far on `producer` (nothing when they are one
/// stream), with an event recorded on `producer`. The current context must be their device's.
///
/// # Safety
/// Both handles are live streams of the current context.
pub unsafe fn order_after(producer: RawStream, consumer: RawStream) -> PyResult<()> {
    if producer == consumer {
        return Ok(());
    }
    let check = |result: sys::CUresult, what: &str| match result {
        sys::CUresult::CUDA_SUCCESS => Ok(()),
        error => Err(pyo3::exceptions::PyRuntimeError::new_err(format!(
            "CUDA error while ordering streams ({what}): {error:?}"
        ))),
    };
    let mut event: sys::CUevent = std::ptr::null_mut();
    // SAFETY: a valid out-pointer; the event is destroyed below (its wait already queued).
    unsafe {
        check(sys::cuEventCreate(&mut event, sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32), "event")?;
        let recorded = check(sys::cuEventRecord(event, producer as sys::CUstream), "record");
        let waited = recorded
            .and_then(|()| check(sys::cuStreamWaitEvent(consumer as sys::CUstream, event, 0), "wait"));
        sys::cuEventDestroy_v2(event);
        waited
    }
}

/// The thread's current CUDA context, put back when dropped: a call from Python leaves it as it
/// found it (PyTorch's current device stays its own).
pub struct ContextGuard(sys::CUcontext);

impl ContextGuard {
    /// Notes the current context (none where there is none yet).
    pub fn save() -> Self {
        let mut context: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; only called once a CUDA array exists, so the driver is
        // loaded.
        unsafe { sys::cuCtxGetCurrent(&mut context) };
        Self(context)
    }
}

impl Drop for ContextGuard {
    fn drop(&mut self) {
        // SAFETY: the context noted was current, so it is live (or null: none current).
        unsafe { sys::cuCtxSetCurrent(self.0) };
    }
}

// SAFETY: a context handle is a plain pointer the driver accepts from any thread.
unsafe impl Send for ContextGuard {}
