//! 8a. An elementwise kernel (SAXPY), safe and as an `unsafe` raw-pointer twin.

use ptxkit_device::{kernel, math, safe::DisjointSlice, safe::ThreadIndex, thread};

/// Threads per block of the elementwise kernels.
pub const ELEMENTWISE_BLOCK: u32 = 256;

/// `out[i] = a·x[i] + y[i]` (one fused multiply-add), as a safe kernel: no `unsafe` anywhere.
///
/// Thread mapping: one thread per element, blocks of 256. Bytes per element: 12 (reads x and
/// y, writes out). Shows: a safe `#[kernel]`: inputs as `&[f32]` (bounds-checked: an index
/// past the end stops the kernel with a report), the output as a `DisjointSlice` reached only
/// through this thread's `ThreadIndex`, so no two threads can write one element.
#[kernel(launch_bounds(256))]
pub fn saxpy(x: &[f32], y: &[f32], mut out: DisjointSlice<f32>, a: f32) {
    let index = ThreadIndex::global_1d();
    let i = index.get();
    if let Some(out) = out.get_mut(index) {
        *out = math::fmaf(a, x[i], y[i]);
    }
}

/// [`saxpy`] on raw pointers, as CUDA C writes it: the bounds are the caller's contract.
///
/// Thread mapping and bytes per element as [`saxpy`]. Shows what the safe form costs (the
/// bench runs both).
#[kernel(launch_bounds(256))]
pub unsafe fn saxpy_raw(x: *const f32, y: *const f32, out: *mut f32, n: u32, a: f32) {
    let i = thread::index_1d();
    if i < n {
        // SAFETY: the host passes three buffers of `n` elements; i < n.
        unsafe { *out.add(i as usize) = math::fmaf(a, *x.add(i as usize), *y.add(i as usize)) };
    }
}
