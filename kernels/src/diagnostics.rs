//! Kernels that exercise the device layer itself (`cuda_std`, which exists only in the PTX
//! build); no simulation launches them. The GPU tests use them to check that a failed
//! `device_assert!` reaches the host as an error naming the file and line.

use crate::kernel;

/// Writes `value` to `out[0]` if `value <= limit`, else fails a `device_assert!`.
///
/// Thread mapping: launch one thread. Bytes: 4 written.
#[kernel]
pub unsafe fn check_device_assert(value: u32, limit: u32, out: *mut u32) {
    crate::device_assert!(value <= limit);
    // SAFETY: the caller passes a buffer of at least one u32.
    unsafe { *out = value };
}
