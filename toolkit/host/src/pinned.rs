//! Pinned (page-locked) host buffers: the host side of copies that are truly asynchronous.

use crate::{Context as _, Gpu, Result};
use cudarc::driver::{DeviceRepr, PinnedHostSlice, ValidAsZeroBits, sys};

impl Gpu {
    /// A pinned (page-locked) host buffer of `len` zeroed values, for copies to and from this
    /// GPU: `stream.memcpy_htod(&pinned, &mut device)`, `stream.clone_htod(&pinned)`,
    /// `stream.memcpy_dtoh(&device, &mut pinned)`; read and write it with
    /// `pinned.as_slice()` / `as_mut_slice()`.
    ///
    /// Such copies are asynchronous, and a [`Gpu`] does not track them (it turns cudarc's
    /// per-buffer events off, see [`Gpu::open`]; so `as_slice` does not wait for them): wait
    /// for the stream ([`CudaStream::synchronize`](cudarc::driver::CudaStream::synchronize),
    /// or an [`Event`](crate::Event) recorded after the copy) before reading a buffer copied
    /// into, and before writing or dropping one being copied from.
    ///
    /// When it pays: a copy from or to ordinary (pageable) memory is staged by the driver and
    /// the host waits for it, while one with a pinned buffer is a DMA transfer queued on the
    /// stream: the host goes on at once, and the copy overlaps kernels and copies on other
    /// streams (at the link's full bandwidth, too). So for repeated transfers: a frame read
    /// back every step while the next is computed, input streamed in while the previous batch
    /// computes. Allocating one is slow (milliseconds; it locks the pages) and takes locked
    /// memory from the whole system: allocate once, reuse. For one-off copies a `Vec` is as
    /// good. Usable with every GPU of the process (portable).
    pub fn alloc_pinned<T: DeviceRepr + ValidAsZeroBits>(&self, len: usize) -> Result<PinnedHostSlice<T>> {
        self.alloc_pinned_with(len, sys::CU_MEMHOSTALLOC_PORTABLE)
    }

    /// [`Gpu::alloc_pinned`] write-combined: faster to copy to the GPU (and to write from the
    /// host) but very slow for the host to read. For upload-only staging buffers.
    pub fn alloc_pinned_write_combined<T: DeviceRepr + ValidAsZeroBits>(
        &self,
        len: usize,
    ) -> Result<PinnedHostSlice<T>> {
        self.alloc_pinned_with(len, sys::CU_MEMHOSTALLOC_PORTABLE | sys::CU_MEMHOSTALLOC_WRITECOMBINED)
    }

    /// A pinned host buffer holding a copy of `values` (see [`Gpu::alloc_pinned`]).
    pub fn pin<T: DeviceRepr + ValidAsZeroBits + Copy>(&self, values: &[T]) -> Result<PinnedHostSlice<T>> {
        let mut pinned = self.alloc_pinned(values.len())?;
        pinned.as_mut_slice().context(|| "waiting for a pinned buffer".into())?.copy_from_slice(values);
        Ok(pinned)
    }

    fn alloc_pinned_with<T: DeviceRepr + ValidAsZeroBits>(
        &self,
        len: usize,
        flags: u32,
    ) -> Result<PinnedHostSlice<T>> {
        let bytes = len.saturating_mul(size_of::<T>());
        // SAFETY: the memory is zeroed below before anything reads it.
        let mut pinned = unsafe { self.ctx.alloc_pinned_with_flags::<T>(len, flags) }
            .context(|| format!("allocating {bytes} bytes of pinned host memory"))?;
        let start = pinned.as_mut_ptr().context(|| "waiting for a pinned buffer".into())?;
        // SAFETY: `start` points to `len` values of `T` just allocated (owned by `pinned`, not
        // yet shared with any copy); all-zero bytes are a valid `T` (`ValidAsZeroBits`).
        unsafe { start.write_bytes(0, len) };
        Ok(pinned)
    }
}
