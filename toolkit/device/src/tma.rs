//! Hopper's Tensor Memory Accelerator (sm_90, PTX 8.0+; the module using it is built with
//! `.arch("sm_90")` and `-C target-feature=+ptx83`): bulk copies between global and shared
//! memory that one thread starts and the hardware carries out, completing on an
//! [`Mbarrier`] (loads) or in bulk groups (stores). CUDA C's `cuda::memcpy_async` with a
//! `cuda::barrier`, `cp_async_bulk_tensor_*` and CUTLASS's `SM90_TMA_LOAD`.
//!
//! - Bulk copies of contiguous bytes ([`load_bulk`], [`store_bulk`]): 16-byte aligned
//!   addresses, a multiple of 16 bytes.
//! - Tensor copies of a box of a 1- to 5-D array ([`load_tile`], [`store_tile`]) described by a
//!   [`TensorMap`] that the host encodes (`cuTensorMapEncodeTiled`; `ptxkit_host::TensorMapSpec`):
//!   the map holds the array's address, sizes, strides and the box; parts of the box outside
//!   the array are filled with zeros on a load and left out on a store.
//!
//! The map reaches the kernel as a pointer to a copy in global memory (`*const TensorMap<T>`,
//! from the host's `DeviceTensorMap<T>`), not as CUDA C's `const __grid_constant__ CUtensorMap`
//! parameter: Rust cannot mark a by-value parameter grid-constant, and LLVM copies a by-value
//! parameter whose address is taken into local memory, where TMA cannot read it. A map written
//! by a host copy needs [`acquire_tensor_map`] (`fence.proxy.tensormap::generic.acquire.sys`)
//! by the thread that uses it before its first copy, as NVIDIA's programming guide does for a
//! map in global memory.
//!
//! Shared memory written by threads and then stored by TMA needs [`fence_async_shared`]
//! between the writes and the store (then a barrier, then one thread's store); shared memory a
//! store reads must not be overwritten, nor the block exit, before
//! [`wait_bulk_read::<0>`](wait_bulk_read).

use core::marker::PhantomData;

use crate::SharedArray;
use crate::mbarrier::Mbarrier;

/// An encoded TMA descriptor (CUDA's `CUtensorMap`: 128 opaque bytes, 64-byte aligned) for an
/// array of `T`. The host builds it (`ptxkit_host::TensorMapSpec`) and passes a device copy
/// for a kernel's `*const TensorMap<T>` parameter: an element type that differs does not
/// compile.
#[repr(C, align(64))]
pub struct TensorMap<T> {
    opaque: [u64; 16],
    element: PhantomData<T>,
}

impl<T> Clone for TensorMap<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for TensorMap<T> {}

impl<T> TensorMap<T> {
    /// The map from the 128 bytes `cuTensorMapEncodeTiled` wrote (host side).
    pub const fn from_encoded(opaque: [u64; 16]) -> Self {
        Self { opaque, element: PhantomData }
    }

    /// The encoded bytes.
    pub const fn encoded(&self) -> &[u64; 16] {
        &self.opaque
    }
}

// SAFETY: 128 bytes of `u64`s and a zero-sized marker, `repr(C)`: no padding, every bit
// pattern valid (the driver checks a map's contents when a copy uses it).
unsafe impl<T: 'static> bytemuck::Zeroable for TensorMap<T> {}
// SAFETY: as above; `Copy` for every `T`.
unsafe impl<T: 'static> bytemuck::Pod for TensorMap<T> {}
// SAFETY: plain data (above), so its host bytes are a valid device value, zeros included.
#[cfg(all(feature = "host", not(target_arch = "nvptx64")))]
unsafe impl<T> cudarc::driver::DeviceRepr for TensorMap<T> {}
// SAFETY: as above.
#[cfg(all(feature = "host", not(target_arch = "nvptx64")))]
unsafe impl<T> cudarc::driver::ValidAsZeroBits for TensorMap<T> {}

const _: () = assert!(core::mem::size_of::<TensorMap<f32>>() == 128);

/// The shared-space byte address of `array[index]`.
#[inline(always)]
fn element_address<T: Copy>(array: SharedArray<T>, index: u32) -> u32 {
    array.shared_address().wrapping_add(index.wrapping_mul(core::mem::size_of::<T>() as u32))
}

/// Makes a map that a host copy wrote visible to the TMA unit (`fence.proxy.tensormap::generic
/// .acquire.sys [map], 128`, PTX 8.3). Once per thread that starts copies with `map`, before
/// the first.
///
/// # Safety
/// `map` points to a [`TensorMap`] in global memory.
#[inline(always)]
pub unsafe fn acquire_tensor_map<T>(map: *const TensorMap<T>) {
    on_gpu!("tma::acquire_tensor_map", {
        // SAFETY: the caller's contract; a fence (no `nomem`).
        unsafe {
            core::arch::asm!(
                "fence.proxy.tensormap::generic.acquire.sys [{m}], 128;",
                m = in(reg64) map,
                options(nostack, preserves_flags),
            )
        }
    })
}

/// Starts fetching `map` into the TMA unit's cache (`prefetch.tensormap`), ahead of its first
/// use.
///
/// # Safety
/// `map` points to a [`TensorMap`].
#[inline(always)]
pub unsafe fn prefetch_tensor_map<T>(map: *const TensorMap<T>) {
    on_gpu!("tma::prefetch_tensor_map", {
        // SAFETY: the caller's contract; a prefetch writes nothing.
        unsafe {
            core::arch::asm!("prefetch.tensormap [{m}];", m = in(reg64) map, options(nostack, preserves_flags))
        }
    })
}

/// Orders this thread's earlier shared-memory writes before later asynchronous-proxy
/// accesses (`fence.proxy.async.shared::cta`): every thread that wrote what a TMA store will
/// read calls it, then a barrier, then the store.
#[inline(always)]
pub fn fence_async_shared() {
    on_gpu!("tma::fence_async_shared", {
        // SAFETY: a fence (no `nomem`).
        unsafe { core::arch::asm!("fence.proxy.async.shared::cta;", options(nostack, preserves_flags)) }
    })
}

/// Starts copying `count` elements from `src` in global memory to `dst[index..]`, completing
/// on `barrier` (`cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes`): the
/// phase that expects these bytes ([`Mbarrier::arrive_expect_tx`]) completes once they land.
///
/// # Safety
/// `count * size_of::<T>()` is a multiple of 16 and `src` and `dst[index]` are 16-byte aligned;
/// the bytes are readable at `src` and in bounds of `dst`; `barrier` is initialised and its
/// current phase expects these bytes; nothing reads or writes `dst[index..index + count]`
/// until the phase completes.
#[inline(always)]
pub unsafe fn load_bulk<T: Copy>(
    dst: SharedArray<T>,
    index: u32,
    src: *const T,
    count: u32,
    barrier: Mbarrier,
) {
    on_gpu!("tma::load_bulk", {
        let bytes = count.wrapping_mul(core::mem::size_of::<T>() as u32);
        // SAFETY: the caller's contract; writes shared memory (no `nomem`).
        unsafe {
            core::arch::asm!(
                "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [{d}], [{s}], {n}, [{b}];",
                d = in(reg32) element_address(dst, index),
                s = in(reg64) src,
                n = in(reg32) bytes,
                b = in(reg32) barrier.shared_address(),
                options(nostack, preserves_flags),
            )
        }
    })
}

/// Starts copying `count` elements of `src[index..]` to `dst` in global memory, in this
/// thread's current bulk group (`cp.async.bulk.global.shared::cta.bulk_group`); [`commit_bulk`]
/// closes the group, [`wait_bulk_read`] / [`wait_bulk`] wait for it.
///
/// # Safety
/// As [`load_bulk`] with the roles swapped; the shared bytes were written before
/// ([`fence_async_shared`] after threads' writes, then a barrier) and stay unchanged until
/// [`wait_bulk_read`] covers this group.
#[inline(always)]
pub unsafe fn store_bulk<T: Copy>(dst: *mut T, src: SharedArray<T>, index: u32, count: u32) {
    on_gpu!("tma::store_bulk", {
        let bytes = count.wrapping_mul(core::mem::size_of::<T>() as u32);
        // SAFETY: the caller's contract; writes global memory (no `nomem`).
        unsafe {
            core::arch::asm!(
                "cp.async.bulk.global.shared::cta.bulk_group [{d}], [{s}], {n};",
                d = in(reg64) dst,
                s = in(reg32) element_address(src, index),
                n = in(reg32) bytes,
                options(nostack, preserves_flags),
            )
        }
    })
}

/// Closes this thread's current bulk group of stores (`cp.async.bulk.commit_group`).
#[inline(always)]
pub fn commit_bulk() {
    on_gpu!("tma::commit_bulk", {
        // SAFETY: groups this thread's pending bulk stores; no operands.
        unsafe { core::arch::asm!("cp.async.bulk.commit_group;", options(nostack, preserves_flags)) }
    })
}

/// Waits until at most `N` of this thread's bulk groups are still reading their shared
/// memory (`cp.async.bulk.wait_group.read N`): their sources may then be overwritten, or the
/// block may exit.
#[inline(always)]
pub fn wait_bulk_read<const N: u32>() {
    on_gpu!("tma::wait_bulk_read", {
        // SAFETY: waits (no `nomem`).
        unsafe {
            core::arch::asm!("cp.async.bulk.wait_group.read {n};", n = const N, options(nostack, preserves_flags))
        }
    })
}

/// Waits until at most `N` of this thread's bulk groups are incomplete, their writes to
/// global memory done (`cp.async.bulk.wait_group N`).
#[inline(always)]
pub fn wait_bulk<const N: u32>() {
    on_gpu!("tma::wait_bulk", {
        // SAFETY: waits (no `nomem`).
        unsafe {
            core::arch::asm!("cp.async.bulk.wait_group {n};", n = const N, options(nostack, preserves_flags))
        }
    })
}

/// Starts copying the box of `map`'s array at element coordinates `coords` (innermost first,
/// `R` = the map's rank, 1 to 5; negative or past the end: zeros) into `dst[index..]`,
/// completing on `barrier` (`cp.async.bulk.tensor.Rd.shared::cluster.global.tile.mbarrier::
/// complete_tx::bytes`). The box lands densely packed, innermost dimension first.
///
/// # Safety
/// `map` points to a [`TensorMap`] of rank `R` in global memory, acquired
/// ([`acquire_tensor_map`]); `coords[0] × size_of::<T>()` is a multiple of 16 (the innermost
/// start at 16 bytes, negative or not: a start at −1 float is an illegal instruction on an
/// H100); `dst[index]` is 128-byte aligned and the box's bytes fit in `dst`;
/// `barrier`'s current phase expects the box's bytes (all of them, zeros included); nothing
/// reads or writes the destination until the phase completes.
#[inline(always)]
pub unsafe fn load_tile<T: Copy, const R: usize>(
    dst: SharedArray<T>,
    index: u32,
    map: *const TensorMap<T>,
    coords: [i32; R],
    barrier: Mbarrier,
) {
    on_gpu!("tma::load_tile", {
        let d = element_address(dst, index);
        let b = barrier.shared_address();
        // Unused coordinates (rank below 5) are never read by the asm of that rank.
        let c = |i: usize| if i < R { coords[i] } else { 0 };
        // SAFETY: the caller's contract; writes shared memory (no `nomem`).
        unsafe {
            match R {
                1 => core::arch::asm!(
                    "cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [{d}], [{m}, {{{c0}}}], [{b}];",
                    d = in(reg32) d, m = in(reg64) map, b = in(reg32) b, c0 = in(reg32) c(0),
                    options(nostack, preserves_flags),
                ),
                2 => core::arch::asm!(
                    "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [{d}], [{m}, {{{c0}, {c1}}}], [{b}];",
                    d = in(reg32) d, m = in(reg64) map, b = in(reg32) b, c0 = in(reg32) c(0), c1 = in(reg32) c(1),
                    options(nostack, preserves_flags),
                ),
                3 => core::arch::asm!(
                    "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [{d}], [{m}, {{{c0}, {c1}, {c2}}}], [{b}];",
                    d = in(reg32) d, m = in(reg64) map, b = in(reg32) b,
                    c0 = in(reg32) c(0), c1 = in(reg32) c(1), c2 = in(reg32) c(2),
                    options(nostack, preserves_flags),
                ),
                4 => core::arch::asm!(
                    "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [{d}], [{m}, {{{c0}, {c1}, {c2}, {c3}}}], [{b}];",
                    d = in(reg32) d, m = in(reg64) map, b = in(reg32) b,
                    c0 = in(reg32) c(0), c1 = in(reg32) c(1), c2 = in(reg32) c(2), c3 = in(reg32) c(3),
                    options(nostack, preserves_flags),
                ),
                5 => core::arch::asm!(
                    "cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [{d}], [{m}, {{{c0}, {c1}, {c2}, {c3}, {c4}}}], [{b}];",
                    d = in(reg32) d, m = in(reg64) map, b = in(reg32) b,
                    c0 = in(reg32) c(0), c1 = in(reg32) c(1), c2 = in(reg32) c(2), c3 = in(reg32) c(3), c4 = in(reg32) c(4),
                    options(nostack, preserves_flags),
                ),
                _ => panic!("tma::load_tile: a tensor map has rank 1 to 5"),
            }
        }
    })
}

/// Starts copying `src[index..]` (a densely packed box, innermost dimension first) to `map`'s
/// array at element coordinates `coords`, in this thread's current bulk group
/// (`cp.async.bulk.tensor.Rd.global.shared::cta.tile.bulk_group`); elements past the array's
/// end are left out. [`commit_bulk`] and [`wait_bulk_read`] as for [`store_bulk`].
///
/// # Safety
/// As [`load_tile`] for the map, the box and its innermost start coordinate; the shared bytes
/// were written before
/// ([`fence_async_shared`] by the writers, then a barrier) and stay unchanged until
/// [`wait_bulk_read`] covers this group.
#[inline(always)]
pub unsafe fn store_tile<T: Copy, const R: usize>(
    map: *const TensorMap<T>,
    coords: [i32; R],
    src: SharedArray<T>,
    index: u32,
) {
    on_gpu!("tma::store_tile", {
        let s = element_address(src, index);
        let c = |i: usize| if i < R { coords[i] } else { 0 };
        // SAFETY: the caller's contract; writes global memory (no `nomem`).
        unsafe {
            match R {
                1 => core::arch::asm!(
                    "cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group [{m}, {{{c0}}}], [{s}];",
                    m = in(reg64) map, s = in(reg32) s, c0 = in(reg32) c(0),
                    options(nostack, preserves_flags),
                ),
                2 => core::arch::asm!(
                    "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [{m}, {{{c0}, {c1}}}], [{s}];",
                    m = in(reg64) map, s = in(reg32) s, c0 = in(reg32) c(0), c1 = in(reg32) c(1),
                    options(nostack, preserves_flags),
                ),
                3 => core::arch::asm!(
                    "cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [{m}, {{{c0}, {c1}, {c2}}}], [{s}];",
                    m = in(reg64) map, s = in(reg32) s, c0 = in(reg32) c(0), c1 = in(reg32) c(1), c2 = in(reg32) c(2),
                    options(nostack, preserves_flags),
                ),
                4 => core::arch::asm!(
                    "cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [{m}, {{{c0}, {c1}, {c2}, {c3}}}], [{s}];",
                    m = in(reg64) map, s = in(reg32) s,
                    c0 = in(reg32) c(0), c1 = in(reg32) c(1), c2 = in(reg32) c(2), c3 = in(reg32) c(3),
                    options(nostack, preserves_flags),
                ),
                5 => core::arch::asm!(
                    "cp.async.bulk.tensor.5d.global.shared::cta.tile.bulk_group [{m}, {{{c0}, {c1}, {c2}, {c3}, {c4}}}], [{s}];",
                    m = in(reg64) map, s = in(reg32) s,
                    c0 = in(reg32) c(0), c1 = in(reg32) c(1), c2 = in(reg32) c(2), c3 = in(reg32) c(3), c4 = in(reg32) c(4),
                    options(nostack, preserves_flags),
                ),
                _ => panic!("tma::store_tile: a tensor map has rank 1 to 5"),
            }
        }
    })
}

/// Declares a per-block shared-memory array of `N` `T`s aligned to 128 bytes, as a TMA
/// tensor copy's shared side needs ([`shared!`](crate::shared) aligns to 16), and yields its
/// [`SharedArray`]. Naming and contents as [`shared!`](crate::shared).
///
/// ```ignore
/// let tile = tma_shared!(transpose_in: [f32; 32 * 32]);
/// ```
#[macro_export]
macro_rules! tma_shared {
    ($name:ident : [$ty:ty; $len:expr]) => {{
        let base: u32;
        // In a host build (kernel bodies are type-checked there, never run) address 0.
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let _ = ($len) * core::mem::size_of::<$ty>();
            base = 0;
        }
        // SAFETY: declares a `.shared` array and reads its shared-space address; the asm reads
        // and writes no memory.
        #[cfg(target_arch = "nvptx64")]
        unsafe {
            core::arch::asm!(
                concat!(".shared .align 128 .b8 ", stringify!($name), "[{bytes}];"),
                concat!("mov.u32 {base}, ", stringify!($name), ";"),
                bytes = const ($len) * core::mem::size_of::<$ty>(),
                base = out(reg32) base,
                options(nomem, nostack, preserves_flags),
            );
        }
        $crate::SharedArray::<$ty>::from_shared_address(base, Some(($len) as u32))
    }};
}
