//! `u32` flags in device memory that streams wait for and write: stream memory operations,
//! which take no kernel and no SM, so they order copies against a launch that holds every SM
//! and against other processes ([`super::rounds`], [`super::ipc`]). The driver takes them on
//! memory from `cuMemAlloc` (this GPU's, or another process's mapped through CUDA IPC), not on
//! memory from the stream-ordered pool cudarc allocates from.

use cudarc::driver::{CudaStream, DriverError, sys};

/// Queues on `stream` a wait until the `u32` at `address` is at least `value`, in wrapping
/// arithmetic (`(i32)(*address - value) >= 0`).
///
/// # Safety
/// `address` must be a live, aligned `u32` of device memory until the stream has run the wait.
pub unsafe fn wait_at_least(stream: &CudaStream, address: u64, value: u32) -> Result<(), DriverError> {
    let geq = sys::CUstreamWaitValue_flags::CU_STREAM_WAIT_VALUE_GEQ as u32;
    // SAFETY: the caller's contract.
    unsafe { sys::cuStreamWaitValue32_v2(stream.cu_stream(), address, value, geq) }.result()
}

/// Queues on `stream` a write of `value` to the `u32` at `address`, after everything queued
/// before it.
///
/// # Safety
/// As [`wait_at_least`].
pub unsafe fn write(stream: &CudaStream, address: u64, value: u32) -> Result<(), DriverError> {
    let write = sys::CUstreamWriteValue_flags::CU_STREAM_WRITE_VALUE_DEFAULT as u32;
    // SAFETY: the caller's contract.
    unsafe { sys::cuStreamWriteValue32_v2(stream.cu_stream(), address, value, write) }.result()
}
