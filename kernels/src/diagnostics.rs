//! Kernels that exercise the device layer itself (`ptxkit_device`, whose device half exists only in the PTX
//! build); no simulation launches them. The GPU tests use them to check that a failed
//! `device_assert!` reaches the host as an error naming the file and line, and that the
//! one-instruction arithmetic forms the Gray-Scott kernels use give the CPU's bits.

use ptxkit_device::kernel;

/// Writes `value` to `out[0]` if `value <= limit`, else fails a `device_assert!`.
///
/// Thread mapping: launch one thread. Bytes: 4 written.
#[kernel]
pub unsafe fn check_device_assert(value: u32, limit: u32, out: *mut u32) {
    ptxkit_device::device_assert!(value <= limit);
    // SAFETY: the caller passes a buffer of at least one u32.
    unsafe { *out = value };
}

/// For each `i < n`: `sums[i] = add_clamp01(a[i], b[i])` and
/// `laplacians[2i], [2i + 1] = laplacian5(a[i], b[i], b[i], b[i], b[i])`,
/// `laplacian5(a[i], b[i], a[i], b[i], a[i])`: the GPU's forms (the saturating add, the
/// multiply-add), to compare bit for bit with the CPU's on special values.
///
/// Thread mapping: one thread per `i` (1-D grid). Bytes: 8 read, 12 written per `i`.
#[kernel]
pub unsafe fn gray_scott_exact_forms(
    a: *const f32,
    b: *const f32,
    n: u32,
    sums: *mut f32,
    laplacians: *mut f32,
) {
    use crate::grayscott::{add_clamp01, laplacian5};
    let i = ptxkit_device::thread::index_1d();
    if i >= n {
        return;
    }
    let i = i as usize;
    // SAFETY: the caller passes `n` inputs and room for `n` sums and `2n` Laplacians.
    unsafe {
        let (x, y) = (*a.add(i), *b.add(i));
        *sums.add(i) = add_clamp01(x, y);
        *laplacians.add(2 * i) = laplacian5(x, y, y, y, y);
        *laplacians.add(2 * i + 1) = laplacian5(x, y, x, y, x);
    }
}

/// Writes `value` `(offset << 20) × 4` bytes past `out`: with a large `offset` (the host's
/// fault test passes `u32::MAX`, about 16 PiB past, beyond any mapping) an illegal address,
/// which stops the kernel and leaves the process's CUDA context unusable. With `offset` 0,
/// writes `out[0]`.
///
/// Thread mapping: launch one thread. Bytes: 4 written.
#[kernel]
pub unsafe fn fault_illegal_address(out: *mut u32, offset: u32, value: u32) {
    // SAFETY: none, on purpose for offsets other than 0: the write is meant to fault.
    unsafe { core::ptr::write_volatile(out.wrapping_add((offset as usize) << 20), value) };
}
