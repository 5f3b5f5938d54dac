//! Helpers of the GPU tests (the `gpu_*` modules, `outputs_gpu`): the GPU, and copies to and from it.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, DeviceRepr};
use simulations::cuda::Gpu;

/// GPU 0; the GPU tests are `#[ignore]`d where there is none.
pub fn gpu() -> Arc<Gpu> {
    simulations::cuda::open().expect("GPU tests need a CUDA GPU")
}

/// A device copy of `data`.
pub fn upload<T: DeviceRepr>(gpu: &Gpu, data: &[T]) -> CudaSlice<T> {
    gpu.stream().clone_htod(data).unwrap()
}

/// A host copy of `data`, after all queued work (so a kernel's fault shows here).
pub fn download<T: DeviceRepr + Default + Clone>(gpu: &Gpu, data: &CudaSlice<T>) -> Vec<T> {
    let out = gpu.stream().clone_dtoh(data).unwrap();
    gpu.synchronize().unwrap();
    out
}
