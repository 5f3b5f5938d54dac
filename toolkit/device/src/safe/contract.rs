//! [`GridSlice`]: an output whose launch contract, checked once on the host, proves every
//! thread's index in bounds, so the kernel indexes it with no check (the soundness argument
//! is in the [`safe`](super) module's documentation).

use super::ThreadIndex;
use core::marker::PhantomData;
use core::ops::{Index, IndexMut};

/// A kernel's output of one `T` per thread, with an element for every thread of the launch:
/// the typed launch refuses a launch that is not 1-D or whose grid has more threads
/// (`gridDim.x * blockDim.x`) than the buffer has elements (the launch contract). So every
/// [`ThreadIndex`] is in bounds, and `out[i]` compiles to the access alone: no compare, no
/// branch, no report. A kernel parameter (safe kernels) for a `&mut CudaSlice<T>`/`&mut
/// CudaViewMut<T>`, passed as the device pointer alone (a kernel pointer parameter: global
/// memory). Neither `Copy`, `Clone`, `Send` nor `Sync`.
///
/// ```ignore
/// #[kernel]
/// pub fn scale(x: &[f32], mut y: GridSlice<f32>, a: f32) {
///     let i = ThreadIndex::global_1d();
///     let xi = x.get(i.get()).copied().unwrap_or(0.0); // checked: no contract on x
///     y[i] = a * xi;                                    // not checked: the launch proved it
/// }
/// // host: y holds at least n.next_multiple_of(256) elements, one per thread of grid_1d(n, 256)
/// gpu.launch(scale, grid_1d(n, 256), (&x, &mut y, 2.0f32))?;
/// ```
#[repr(transparent)]
pub struct GridSlice<T> {
    /// The buffer's device pointer, a kernel pointer parameter (global memory).
    ptr: *mut T,
    _elements: PhantomData<*mut T>,
}

impl<T> GridSlice<T> {
    /// The element at `index`, in bounds by the launch contract.
    #[inline(always)]
    fn element(&self, index: &ThreadIndex) -> *mut T {
        // SAFETY: the typed launch checked that the launch is 1-D and the buffer has at least
        // `gridDim.x * blockDim.x` elements (`ptxkit-host`'s `KernelArg::check_launch`), and a
        // `ThreadIndex` is `blockIdx.x * blockDim.x + threadIdx.x` of this launch: below both.
        unsafe { self.ptr.add(index.index) }
    }
}

impl<T> Index<ThreadIndex> for GridSlice<T> {
    type Output = T;

    /// This thread's element: in bounds by the launch contract, so no check.
    #[inline(always)]
    fn index(&self, index: ThreadIndex) -> &T {
        // SAFETY: in bounds (`element`); no other thread writes this element.
        unsafe { &*self.element(&index) }
    }
}

impl<T> IndexMut<ThreadIndex> for GridSlice<T> {
    /// This thread's element: in bounds by the launch contract, so no check.
    #[inline(always)]
    fn index_mut(&mut self, index: ThreadIndex) -> &mut T {
        // SAFETY: in bounds (`element`); no other thread has this index (a 1-D launch), and
        // `&mut self` keeps this thread to one reference at a time.
        unsafe { &mut *self.element(&index) }
    }
}
