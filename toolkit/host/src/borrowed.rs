//! Device memory and streams owned by another library (a PyTorch tensor, a CuPy array, an
//! array imported through DLPack): passed to typed launches like cudarc's own buffers, and
//! launched on the owner's stream.
//!
//! | kernel parameter | borrowed argument |
//! | --- | --- |
//! | `*const T`, `&[T]` | `&BorrowedSlice<T>` |
//! | `*mut T`, `DisjointSlice<T>` | `&mut BorrowedSliceMut<T>` |
//! | `DisjointSlice2d<T>` | [`BorrowedRows<T>`] |
//!
//! Making one is `unsafe`: the pointer, length and lifetime are the caller's promise (an
//! importer such as `ptxkit-python` makes them from a checked DLPack tensor it holds).

use crate::{
    Gpu,
    launch::{KernelArg, StagedBuffer, slice_pointer},
};
use cudarc::driver::{CudaStream, LaunchConfig, SyncOnDrop, sys};
use ptxkit_device::safe::{Input, Input2d, Output, Output2d};
use std::{marker::PhantomData, sync::Arc};

/// `len` values of `T` in device memory another library owns, read by a kernel.
#[derive(Clone, Copy, Debug)]
pub struct BorrowedSlice<'a, T> {
    pointer: u64,
    len: usize,
    _data: PhantomData<&'a [T]>,
}

/// `len` values of `T` in device memory another library owns, written by a kernel.
#[derive(Debug)]
pub struct BorrowedSliceMut<'a, T> {
    pointer: u64,
    len: usize,
    _data: PhantomData<&'a mut [T]>,
}

impl<T> BorrowedSlice<'_, T> {
    /// The values at device address `pointer`.
    ///
    /// # Safety
    /// `pointer` is the address of `len` initialised values of `T` on the device of the GPU
    /// that launches with it (aligned for `T`), which stay allocated, and are not written by
    /// other work ordered concurrently with the launch, for the borrow's lifetime.
    pub unsafe fn from_raw(pointer: u64, len: usize) -> Self {
        Self { pointer, len, _data: PhantomData }
    }

    /// The number of values.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device address.
    pub fn device_pointer(&self) -> u64 {
        self.pointer
    }
}

impl<'a, T> BorrowedSlice<'a, T> {
    /// The values as a row-major grid `width` cells wide, for a safe kernel's `Grid2d<T>`
    /// input: `len / width` full rows (a partial last row is left out); the borrowed twin of
    /// [`Rows`](crate::Rows).
    pub fn rows(self, width: usize) -> BorrowedInputRows<'a, T> {
        let height = self.len.checked_div(width).unwrap_or(0);
        BorrowedInputRows { buffer: self, width, height }
    }
}

/// Borrowed device memory seen as rows, for a `Grid2d<T>` input ([`BorrowedSlice::rows`]).
#[derive(Clone, Copy, Debug)]
pub struct BorrowedInputRows<'a, T> {
    buffer: BorrowedSlice<'a, T>,
    width: usize,
    height: usize,
}

impl<T> BorrowedInputRows<'_, T> {
    /// Cells per row.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Full rows.
    pub fn height(&self) -> usize {
        self.height
    }
}

impl<'a, T> BorrowedSliceMut<'a, T> {
    /// The values at device address `pointer`, for a kernel to write.
    ///
    /// # Safety
    /// As [`BorrowedSlice::from_raw`], and nothing else reads or writes them while the launch
    /// may run, except through this borrow.
    pub unsafe fn from_raw(pointer: u64, len: usize) -> Self {
        Self { pointer, len, _data: PhantomData }
    }

    /// The number of values.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device address.
    pub fn device_pointer(&self) -> u64 {
        self.pointer
    }

    /// The same values, read-only, for as long as this borrow lends them.
    pub fn as_slice(&self) -> BorrowedSlice<'_, T> {
        BorrowedSlice { pointer: self.pointer, len: self.len, _data: PhantomData }
    }

    /// The values as a row-major grid `width` cells wide, for a safe kernel's
    /// `DisjointSlice2d<T>` output: `len / width` full rows (a partial last row is left out).
    pub fn rows(self, width: usize) -> BorrowedRows<'a, T> {
        let height = self.len.checked_div(width).unwrap_or(0);
        BorrowedRows { buffer: self, width, height }
    }
}

/// Borrowed device memory seen as rows, for a `DisjointSlice2d<T>` output
/// ([`BorrowedSliceMut::rows`]); the borrowed twin of [`RowsMut`](crate::RowsMut).
#[derive(Debug)]
pub struct BorrowedRows<'a, T> {
    buffer: BorrowedSliceMut<'a, T>,
    width: usize,
    height: usize,
}

impl<T> BorrowedRows<'_, T> {
    /// Cells per row.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Full rows.
    pub fn height(&self) -> usize {
        self.height
    }
}

/// No event to record: the owner orders its memory with its streams.
fn untracked<'s>() -> SyncOnDrop<'s> {
    SyncOnDrop::Record(None)
}

macro_rules! borrowed_arg {
    ($param:ty, $arg:ty, $n:literal, $dims:literal, |$this:ident| $words:expr) => {
        impl<T> KernelArg<$param> for $arg {
            type Staged<'s>
                = StagedBuffer<'s, $n>
            where
                Self: 's;
            const LAUNCH_DIMS: u32 = $dims;
            fn stage<'s>(&'s mut self, _stream: &'s CudaStream) -> Self::Staged<'s> {
                let $this = self;
                StagedBuffer::new($words, untracked())
            }
        }
    };
}

borrowed_arg!(*const T, &BorrowedSlice<'_, T>, 1, 3, |this| [this.pointer]);
borrowed_arg!(*mut T, &mut BorrowedSliceMut<'_, T>, 1, 3, |this| [this.pointer]);
borrowed_arg!(Input<T>, &BorrowedSlice<'_, T>, 2, 3, |this| [
    slice_pointer::<T>(this.pointer, this.len),
    this.len as u64
]);
borrowed_arg!(Output<T>, &mut BorrowedSliceMut<'_, T>, 2, 1, |this| [
    slice_pointer::<T>(this.pointer, this.len),
    this.len as u64
]);
impl<T> KernelArg<Output2d<T>> for BorrowedRows<'_, T> {
    type Staged<'s>
        = StagedBuffer<'s, 3>
    where
        Self: 's;
    const LAUNCH_DIMS: u32 = 2;
    fn stage<'s>(&'s mut self, _stream: &'s CudaStream) -> Self::Staged<'s> {
        // `width * height ≤ len` (`rows`): the kernel's cells are all inside the buffer.
        let words =
            [slice_pointer::<T>(self.buffer.pointer, self.buffer.len), self.width as u64, self.height as u64];
        StagedBuffer::new(words, untracked())
    }
    fn check_launch(&self, cfg: &LaunchConfig) -> std::result::Result<(), String> {
        crate::launch::check_rows_launch(self.width, self.height, cfg)
    }
}

impl<T> KernelArg<Input2d<T>> for BorrowedInputRows<'_, T> {
    type Staged<'s>
        = StagedBuffer<'s, 3>
    where
        Self: 's;
    fn stage<'s>(&'s mut self, _stream: &'s CudaStream) -> Self::Staged<'s> {
        // `width * height ≤ len` (`rows`): the kernel's cells are all inside the buffer.
        let words =
            [slice_pointer::<T>(self.buffer.pointer, self.buffer.len), self.width as u64, self.height as u64];
        StagedBuffer::new(words, untracked())
    }
    fn check_launch(&self, _cfg: &LaunchConfig) -> std::result::Result<(), String> {
        crate::launch::check_grid_sides(self.width, self.height)
    }
}

impl Gpu {
    /// A stream another library owns (PyTorch's current stream, CuPy's), to launch on with
    /// [`Gpu::launch_on`]; the null handle is the legacy default stream. Dropping the wrapper
    /// leaves the stream alone.
    ///
    /// # Safety
    /// `stream` is a live stream of this GPU's context (the device's primary context, which
    /// PyTorch and CuPy use too), and stays alive while the wrapper is used.
    pub unsafe fn borrow_stream(&self, stream: sys::CUstream) -> Arc<CudaStream> {
        // SAFETY: the caller's promise.
        unsafe { self.context().wrap_borrowed_stream(stream) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::KernelArgs;

    /// Borrowed memory takes the same parameters as cudarc's buffers, with the same launch
    /// dimensions: one for a `DisjointSlice`, two for a `DisjointSlice2d`.
    #[test]
    fn borrowed_arguments_match_the_parameters_they_stand_for() {
        type Saxpy<'a> = (&'a BorrowedSlice<'a, f32>, &'a mut BorrowedSliceMut<'a, f32>, f32);
        assert_eq!(<Saxpy as KernelArgs<(Input<f32>, Output<f32>, f32)>>::LAUNCH_DIMS, 1);
        type Stencil<'a> = (&'a BorrowedSlice<'a, f32>, BorrowedRows<'a, f32>);
        assert_eq!(<Stencil as KernelArgs<(Input<f32>, Output2d<f32>)>>::LAUNCH_DIMS, 2);
        type Raw<'a> = (&'a BorrowedSlice<'a, f32>, &'a mut BorrowedSliceMut<'a, f32>, u32);
        assert_eq!(<Raw as KernelArgs<(*const f32, *mut f32, u32)>>::LAUNCH_DIMS, 3);
        type Grid<'a> = (BorrowedInputRows<'a, f32>, BorrowedRows<'a, f32>);
        assert_eq!(<Grid as KernelArgs<(Input2d<f32>, Output2d<f32>)>>::LAUNCH_DIMS, 2);
    }

    /// Rows are whole rows of the borrowed values; an empty borrow gets an aligned pointer.
    #[test]
    fn rows_are_whole_and_empty_borrows_are_aligned() {
        // SAFETY: never launched; only the staged words are read.
        let rows = unsafe { BorrowedSliceMut::<f32>::from_raw(0x7000_0000, 10) }.rows(3);
        assert_eq!((rows.width(), rows.height()), (3, 3));
        // SAFETY: as above.
        let none = unsafe { BorrowedSliceMut::<f32>::from_raw(0x7000_0000, 10) }.rows(0);
        assert_eq!(none.height(), 0);
        // SAFETY: as above.
        let input = unsafe { BorrowedSlice::<f32>::from_raw(0x7000_0000, 10) }.rows(4);
        assert_eq!((input.width(), input.height()), (4, 2));
        let cfg = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (32, 8, 1), shared_mem_bytes: 0 };
        assert_eq!(KernelArg::<Input2d<f32>>::check_launch(&input, &cfg), Ok(()));
        assert_eq!(slice_pointer::<f64>(0, 0), 8);
    }
}
