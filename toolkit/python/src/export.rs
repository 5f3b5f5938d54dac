//! Memory another object owns (a simulation's field), handed to Python without a copy:
//! [`Array`] speaks DLPack (`torch.from_dlpack(a)`, `cupy.from_dlpack(a)`,
//! `numpy.from_dlpack(a)` for host memory) and keeps its owner alive while any consumer holds
//! the memory.

use crate::stream::{RawStream, order_after};
use dlpark::{
    DlpackFlags, Managed, ManagedTensorBase,
    ffi::{DLDataType, DLDevice, DLDeviceType, DLManagedTensor, DLManagedTensorVersioned},
    metadata::Dynamic,
    python::{CudaStreamRequest, DlpackExporter, ExportRequest, export_dlpack},
};
use ptxkit_host::{Gpu, cudarc::driver::sys};
use pyo3::{exceptions::PyValueError, prelude::*};
use std::{ffi::c_void, sync::Arc};

/// Where an [`Array`]'s memory is.
pub enum Place {
    /// Host memory.
    Host,
    /// Device memory of `gpu`, written by work queued on `stream`: a consumer's stream waits
    /// for it before reading (the DLPack stream protocol).
    Cuda { gpu: Arc<Gpu>, stream: RawStream },
}

/// Row-major values (`f32`, or `u8` for pictures) at an address, owned by a Python object,
/// exported through DLPack.
#[pyclass(module = "ptxkit", name = "Array", frozen)]
pub struct Array {
    owner: Py<PyAny>,
    address: usize,
    shape: Vec<i64>,
    dtype: DLDataType,
    place: Place,
}

/// Host values an [`Array`] owns (a copy made for Python), held only for their memory.
#[pyclass(module = "ptxkit", frozen)]
pub struct HostValues {
    _values: Box<dyn std::any::Any + Send + Sync>,
}

impl Array {
    /// `shape` values at `address`, which stay valid (and in `place`) while `owner` lives and is
    /// not changed: the consumer sees what is there when it reads.
    ///
    /// # Safety
    /// `address` holds `shape`'s product of `f32` values in `place`, kept allocated by `owner`.
    pub unsafe fn new(owner: Py<PyAny>, address: usize, shape: &[usize], place: Place) -> Self {
        Self { owner, address, shape: extents(shape), dtype: DLDataType::of::<f32>(), place }
    }

    /// `values` (host memory, row-major `shape`), owned by the array.
    pub fn from_f32(py: Python<'_>, values: Vec<f32>, shape: &[usize]) -> PyResult<Self> {
        debug_assert_eq!(values.len(), shape.iter().product::<usize>());
        let address = values.as_ptr() as usize;
        let owner = Py::new(py, HostValues { _values: Box::new(values) })?.into_any();
        Ok(Self { owner, address, shape: extents(shape), dtype: DLDataType::of::<f32>(), place: Place::Host })
    }

    /// `values` as bytes (host memory, row-major `shape`, e.g. an RGB picture), owned by the
    /// array.
    pub fn from_u8(py: Python<'_>, values: Vec<u8>, shape: &[usize]) -> PyResult<Self> {
        debug_assert_eq!(values.len(), shape.iter().product::<usize>());
        let address = values.as_ptr() as usize;
        let owner = Py::new(py, HostValues { _values: Box::new(values) })?.into_any();
        Ok(Self { owner, address, shape: extents(shape), dtype: DLDataType::of::<u8>(), place: Place::Host })
    }

    /// The array as NumPy sees it (`numpy.from_dlpack`; host memory only).
    pub fn into_numpy(self, py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
        let array = Py::new(py, self)?;
        py.import("numpy")?.call_method1("from_dlpack", (array,))
    }

    fn managed<M: ManagedTensorBase>(&self, py: Python<'_>) -> PyResult<Managed<M>> {
        let mut tensor = Dynamic::compact(self.shape.clone())
            .initialize_as::<M>(Box::new(self.owner.clone_ref(py)))
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        tensor.set_data(self.address as *mut c_void).set_device(self.dl_device()).set_dtype(self.dtype);
        // SAFETY: the address holds the shape's values of f32 in that device's memory, kept
        // alive by the owner, which the managed tensor holds until its deleter runs.
        Ok(unsafe { tensor.finish() })
    }

    fn dl_device(&self) -> DLDevice {
        match &self.place {
            Place::Host => DLDevice::CPU,
            Place::Cuda { gpu, .. } => DLDevice::cuda(gpu.ordinal() as i32),
        }
    }
}

impl DlpackExporter for Array {
    fn device(&self) -> DLDevice {
        self.dl_device()
    }

    fn flags(&self) -> DlpackFlags {
        DlpackFlags::empty()
    }

    fn prepare_export(&self, _py: Python<'_>, request: &ExportRequest<'_>) -> PyResult<()> {
        let Place::Cuda { gpu, stream } = &self.place else { return Ok(()) };
        // The consumer's stream waits for the owner's queued writes; no stream given means
        // the legacy default stream (the Array API's rule for CUDA).
        let consumer = match request.cuda_stream()? {
            CudaStreamRequest::NoSync => return Ok(()),
            CudaStreamRequest::Omitted | CudaStreamRequest::LegacyDefault => 0,
            CudaStreamRequest::PerThreadDefault => 2,
            CudaStreamRequest::Pointer(handle) => handle,
        };
        let _restored = crate::stream::ContextGuard::save();
        gpu.context().bind_to_thread().map_err(|e| PyValueError::new_err(e.to_string()))?;
        // SAFETY: the owner's stream lives as long as its GPU; the consumer's is its promise.
        unsafe { order_after(*stream, consumer) }
    }

    fn export_legacy(&self, py: Python<'_>) -> PyResult<Managed<DLManagedTensor>> {
        self.managed(py)
    }

    fn export_versioned(&self, py: Python<'_>) -> PyResult<Managed<DLManagedTensorVersioned>> {
        self.managed(py)
    }
}

#[pymethods]
impl Array {
    /// A DLPack capsule of the memory (no copy), ready on `stream`.
    #[pyo3(signature = (*, stream = None, max_version = None, dl_device = None, copy = None))]
    fn __dlpack__<'py>(
        &self,
        py: Python<'py>,
        stream: Option<Bound<'py, PyAny>>,
        max_version: Option<(u32, u32)>,
        dl_device: Option<(u32, i32)>,
        copy: Option<bool>,
    ) -> PyResult<Py<PyAny>> {
        let request = ExportRequest::parse(stream.as_ref(), max_version, dl_device, copy)?;
        export_dlpack(self, py, request)
    }

    /// `(device type, device id)` as DLPack numbers them (1: CPU, 2: CUDA).
    fn __dlpack_device__(&self) -> (u32, i32) {
        let device = self.dl_device();
        (device.device_type.0, device.device_id)
    }

    /// The extents, slowest first.
    #[getter]
    fn shape(&self) -> Vec<i64> {
        self.shape.clone()
    }

    /// `"float32"` or `"uint8"`.
    #[getter]
    fn dtype(&self) -> String {
        crate::dtype_name(self.dtype)
    }

    /// `"cpu"` or `"cuda:N"`.
    #[getter]
    fn device(&self) -> String {
        let device = self.dl_device();
        if device.device_type == DLDeviceType::CUDA {
            format!("cuda:{}", device.device_id)
        } else {
            "cpu".into()
        }
    }

    /// The address of the first value (a device pointer on a GPU).
    #[getter]
    fn data_ptr(&self) -> usize {
        self.address
    }

    /// A NumPy array of the values (`numpy.asarray(a)`): a view of host memory, or a copy of
    /// device memory made once the owner's queued writes are done.
    #[pyo3(signature = (dtype = None, copy = None))]
    fn __array__<'py>(
        slf: &Bound<'py, Self>,
        dtype: Option<Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let numpy = py.import("numpy")?;
        let this = slf.get();
        let array = match &this.place {
            Place::Host => numpy.call_method1("from_dlpack", (slf,))?,
            Place::Cuda { .. } if copy == Some(false) => {
                return Err(PyValueError::new_err(
                    "the array is in GPU memory: NumPy gets it only as a copy (copy=False refused)",
                ));
            }
            Place::Cuda { gpu, stream } => {
                let _restored = crate::stream::ContextGuard::save();
                let bytes = this.shape.iter().product::<i64>() as usize * usize::from(this.dtype.bits / 8);
                let mut host = vec![0u8; bytes];
                gpu.context().bind_to_thread().map_err(|e| PyValueError::new_err(e.to_string()))?;
                // SAFETY: the owner's stream is live; `host` holds `bytes` bytes and the device
                // address as many (the array's promise), read once the stream's writes are done.
                let result = unsafe {
                    let synced = sys::cuStreamSynchronize(*stream as sys::CUstream);
                    if synced == sys::CUresult::CUDA_SUCCESS {
                        sys::cuMemcpyDtoH_v2(
                            host.as_mut_ptr().cast(),
                            this.address as sys::CUdeviceptr,
                            bytes,
                        )
                    } else {
                        synced
                    }
                };
                if result != sys::CUresult::CUDA_SUCCESS {
                    return Err(pyo3::exceptions::PyRuntimeError::new_err(format!(
                        "CUDA error copying an array to the host: {result:?}"
                    )));
                }
                let shape: Vec<usize> = this.shape.iter().map(|&n| n as usize).collect();
                let copied = if this.dtype == DLDataType::of::<f32>() {
                    let values = host.as_chunks::<4>().0.iter().map(|b| f32::from_ne_bytes(*b)).collect();
                    Array::from_f32(py, values, &shape)?
                } else {
                    Array::from_u8(py, host, &shape)?
                };
                copied.into_numpy(py)?
            }
        };
        let array = match dtype {
            Some(dtype) => array.call_method1("astype", (dtype,))?,
            None => array,
        };
        if copy == Some(true) { array.call_method0("copy") } else { Ok(array) }
    }

    fn __repr__(&self) -> String {
        format!("Array(shape={:?}, dtype={}, device={})", self.shape, self.dtype(), self.device())
    }
}

fn extents(shape: &[usize]) -> Vec<i64> {
    shape.iter().map(|&n| n as i64).collect()
}
