//! ptxkit kernels as Python functions, and device memory handed to Python, through DLPack.
//!
//! - [`KernelCall`]: one call of a kernel from Python. Its tensors (PyTorch, CuPy, anything
//!   with `__dlpack__`) are imported without copying and checked before anything is launched:
//!   the device (a CUDA GPU, one for all), the element type, contiguity, lengths and shapes,
//!   and that an output shares memory with no other argument; each refusal is a `TypeError`
//!   or `ValueError` whose message starts with the parameter's name. The launch goes on the
//!   caller's current stream ([`stream`] says how it is found), so it orders with the
//!   caller's surrounding work and can be captured in a CUDA graph.
//! - [`Array`]: memory another Python object owns (a simulation's field) as a DLPack
//!   producer, zero-copy, ordered on the consumer's stream.
//!
//! A kernel crate's Python module is a PyO3 module whose functions make a [`KernelCall`] and
//! launch through it (`python/src/kernels.rs` in this repository; docs/python.md).

mod call;
mod export;
pub mod stream;

pub use call::{KernelCall, TensorIn, TensorOut, dtype_name, gpu_for, last_stream, runtime_error};
pub use export::{Array, HostValues, Place};
