//! Check kernels: generic kernels, instantiated for named types (`#[kernel(instantiate(...))]`,
//! CUDA C's explicitly instantiated `template <typename T> __global__` kernels).

use ptxkit_device::{kernel, safe::DisjointSlice, safe::ThreadIndex, shared, thread};

/// The markers of a safe kernel's parameters, for the tests on the host.
pub use ptxkit_device::safe::{Input, Output};

/// The block size limit of [`generic_reverse`] (its tile's length).
pub const REVERSE_BLOCK: u32 = 256;

/// Reverses each block's run of `input` through a shared tile of `T`: thread `t` stores
/// `input[i]` at `t`, and after a barrier writes the value of the block's mirror thread to
/// `output[i]`. The tile is `shared!` in a generic kernel: one `.shared` array per entry point,
/// of the instance's size. Thread mapping: one thread per value, at most 256 a block. Bytes per
/// value: 2·size.
///
/// # Safety
/// `input` and `output` hold `n` values; at most 256 threads a block.
#[kernel(launch_bounds(256), instantiate(generic_reverse_f32 = f32, generic_reverse_f64 = f64, generic_reverse_u16 = u16))]
pub unsafe fn generic_reverse<T: Copy + bytemuck::NoUninit>(input: *const T, n: u32, output: *mut T) {
    let tile = shared!(generic_reverse_tile: [T; REVERSE_BLOCK as usize]);
    let t = thread::thread_idx_x();
    let i = thread::index_1d();
    let active = thread::block_dim_x().min(n.saturating_sub(i - t));
    if i < n {
        // SAFETY: `i < n`; `t < 256` (launch bounds).
        unsafe { tile.store(t, *input.add(i as usize)) };
    }
    thread::sync_threads();
    if i < n {
        // SAFETY: the mirror is one of the block's `active` threads, which stored before the
        // barrier; `i < n`.
        unsafe { *output.add(i as usize) = tile.load(active - 1 - t) };
    }
}

/// `y[i] = a · x[i]`, a safe generic kernel. Thread mapping: one thread per element, 1-D.
/// Bytes per element: 2·size.
#[kernel(instantiate(generic_scale_f32 = f32, generic_scale_i32 = i32))]
pub fn generic_scale<T: Copy + core::ops::Mul<Output = T>>(x: &[T], mut y: DisjointSlice<T>, a: T) {
    let i = ThreadIndex::global_1d();
    if let Some(&xi) = x.get(i.get())
        && let Some(yi) = y.get_mut(i)
    {
        *yi = a * xi;
    }
}

/// `out[i] = x[STRIDE · i]`: a type and a const parameter, and dynamic shared memory sized by
/// both (`STRIDE · size_of::<T>()` bytes a thread, unused: it checks the host's figure). Thread
/// mapping: one thread per output, 1-D, at most 128 a block. Bytes per output: 2·size.
///
/// # Safety
/// `x` holds `STRIDE · n` values, `out` `n`.
#[kernel(
    launch_bounds(128),
    dynamic_shared = (128 * STRIDE * core::mem::size_of::<T>()) as u32,
    instantiate(generic_gather_f32_4 = (f32, 4), generic_gather_u64_3 = (u64, 3))
)]
pub unsafe fn generic_gather<T: Copy, const STRIDE: usize>(x: *const T, out: *mut T, n: u32) {
    let i = thread::index_1d() as usize;
    if i < n as usize {
        // SAFETY: the host passes `STRIDE · n` values and `n` outputs.
        unsafe { *out.add(i) = *x.add(STRIDE * i) };
    }
}
