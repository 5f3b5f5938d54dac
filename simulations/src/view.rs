//! Where a running simulation's fields live, for zero-copy access from other libraries (the
//! Python package exports them through DLPack): the memory itself, not a copy.
//!
//! A view is valid until the simulation steps again or is dropped: stepping may swap a field
//! with its ping-pong partner, so a view taken before a step can show the partner (the next
//! step's scratch) after it. Take the views again after stepping.

/// Where a field's values are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Residence {
    /// Host memory (the CPU backend, or Gray-Scott's `v0`, which keeps its state on the host).
    Host,
    /// Device memory of GPU `ordinal`, written by work queued on `stream` (a `CUstream`
    /// handle): a reader on another stream orders itself after that stream first.
    Cuda { ordinal: usize, stream: usize },
}

/// One field of a running simulation: `shape` row-major `f32` values at `address`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldView {
    /// The field's name, as `--save` names it (`u`, `v`, `trail`).
    pub name: &'static str,
    /// Row-major extents, slowest first (`[height, width]`, `[nz, ny, nx]`).
    pub shape: Vec<usize>,
    /// The address of the first value (host or device, by `residence`).
    pub address: usize,
    pub residence: Residence,
}

impl FieldView {
    /// A view of host values.
    pub fn host(name: &'static str, shape: Vec<usize>, values: &[f32]) -> Self {
        debug_assert_eq!(shape.iter().product::<usize>(), values.len());
        Self { name, shape, address: values.as_ptr() as usize, residence: Residence::Host }
    }

    /// A view of a device buffer of `gpu`, written by work on `gpu`'s stream.
    pub fn cuda(
        name: &'static str,
        shape: Vec<usize>,
        buffer: &ptxkit_host::cudarc::driver::CudaSlice<f32>,
        gpu: &crate::cuda::Gpu,
    ) -> Self {
        use ptxkit_host::cudarc::driver::DevicePtr as _;
        debug_assert_eq!(shape.iter().product::<usize>(), buffer.len());
        let stream = gpu.stream();
        // (The GPU's context does not track buffers with events: the guard does nothing.)
        let (address, _untracked) = buffer.device_ptr(stream);
        Self {
            name,
            shape,
            address: address as usize,
            residence: Residence::Cuda { ordinal: gpu.ordinal(), stream: stream.cu_stream() as usize },
        }
    }

    /// The number of values.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether it holds no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The refusal of a backend whose fields are not in one piece of memory (a run in parts).
pub(crate) fn not_in_one_piece(what: &str) -> crate::Error {
    crate::Error::InvalidInput(format!(
        "{what}: the fields of a run in parts are spread over its parts; zero-copy views need one part"
    ))
}
