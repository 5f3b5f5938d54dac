//! Asynchronous copies from global to shared memory (`cp.async`, sm_80+): CUDA C's
//! `__pipeline_memcpy_async` / `cuda::memcpy_async` and CUTLASS's `cp_async`.
//!
//! Each thread starts copies of 4, 8 or 16 bytes ([`copy`], [`copy_l2_only`],
//! [`copy_zero_fill`]) that run while it goes on computing, groups the copies it started so far
//! ([`commit`]) and later waits until at most `N` of its groups are still in flight
//! ([`wait::<N>`](wait), [`wait_all`]). A wait covers this thread's copies only: to read what
//! other threads copied, follow it with a barrier ([`sync_threads`](crate::thread::sync_threads)),
//! or let the copies arrive on an [`Mbarrier`](crate::mbarrier::Mbarrier)
//! ([`Mbarrier::arrive_on_async_copies`](crate::mbarrier::Mbarrier::arrive_on_async_copies)).
//!
//! The classic use is a pipeline: copy tile `k + 1` while computing on tile `k`
//! (`cookbook::hgemm_mma` double-buffers its tiles so).
//!
//! ```ignore
//! let tile = shared!(tile: [F32x4; 256]);
//! unsafe {
//!     async_copy::copy(tile, thread_idx_x(), src.add(i));   // cp.async.ca.shared.global, 16 bytes
//!     async_copy::commit();                                 // cp.async.commit_group
//!     async_copy::wait::<0>();                              // cp.async.wait_group 0
//! }
//! sync_threads();
//! ```

use crate::SharedArray;
use crate::half::{BF16, F16, F16x2};
use crate::vector::{F32x2, F32x4, F64x2, I32x2, I32x4, I64x2, U32x2, U32x4, U64x2};

mod sealed {
    pub trait Sealed {}
}

/// A type `cp.async` copies in one instruction: 4, 8 or 16 bytes (`f32`, `u32`, `i32`,
/// `F16x2`; `f64`, `u64`, `i64` and the 2-wide 32-bit vectors; the 16-byte vectors).
pub trait AsyncElement: Copy + sealed::Sealed {
    /// The bytes one copy moves: 4, 8 or 16.
    const BYTES: u32;
}

/// A 16-byte type: the only size [`copy_l2_only`] (`cp.async.cg`) takes.
pub trait AsyncElement16: AsyncElement {}

macro_rules! async_elements {
    ($bytes:literal: $($ty:ty),*) => {
        $(
            impl sealed::Sealed for $ty {}
            impl AsyncElement for $ty {
                const BYTES: u32 = $bytes;
            }
        )*
    };
}
async_elements!(4: f32, u32, i32, F16x2);
async_elements!(8: f64, u64, i64, F32x2, U32x2, I32x2);
async_elements!(16: F32x4, U32x4, I32x4, F64x2, U64x2, I64x2);
impl AsyncElement16 for F32x4 {}
impl AsyncElement16 for U32x4 {}
impl AsyncElement16 for I32x4 {}
impl AsyncElement16 for F64x2 {}
impl AsyncElement16 for U64x2 {}
impl AsyncElement16 for I64x2 {}

// The half types are 2 bytes, below cp.async's smallest copy: they move in pairs (`F16x2`) or
// in 16-byte vectors of raw bits (`U32x4`), as `cookbook::hgemm_mma` moves eight at a time.
const _: () = assert!(core::mem::size_of::<F16>() == 2 && core::mem::size_of::<BF16>() == 2);

/// The shared-space byte address of `dst[index]`.
#[inline(always)]
fn element_address<T: Copy>(dst: SharedArray<T>, index: u32) -> u32 {
    dst.shared_address().wrapping_add(index.wrapping_mul(core::mem::size_of::<T>() as u32))
}

/// Starts copying `*src` into `dst[index]` (`cp.async.ca.shared.global`, 4, 8 or 16 bytes,
/// cached in L1 and L2). The value is there once a later [`wait`] covers the group it is
/// committed in.
///
/// # Safety
/// `index` is in bounds of `dst`; `src` points to a readable `T` in global memory, aligned to
/// its size; neither is read or written by this thread until a wait covers the copy (other
/// threads: until a barrier after that wait).
#[inline(always)]
pub unsafe fn copy<T: AsyncElement>(dst: SharedArray<T>, index: u32, src: *const T) {
    on_gpu!("async_copy::copy", {
        let address = element_address(dst, index);
        // SAFETY: the caller's contract; the asm writes shared memory (no `nomem`).
        unsafe {
            core::arch::asm!(
                "cp.async.ca.shared.global [{dst}], [{src}], {bytes};",
                dst = in(reg32) address,
                src = in(reg64) src,
                bytes = const T::BYTES,
                options(nostack, preserves_flags),
            );
        }
    })
}

/// Starts copying 16 bytes `*src` into `dst[index]` bypassing L1 (`cp.async.cg.shared.global`,
/// cached in L2 only): for data read once per block, as a GEMM's tiles are.
///
/// # Safety
/// As [`copy`].
#[inline(always)]
pub unsafe fn copy_l2_only<T: AsyncElement16>(dst: SharedArray<T>, index: u32, src: *const T) {
    on_gpu!("async_copy::copy_l2_only", {
        let address = element_address(dst, index);
        // SAFETY: as in `copy`.
        unsafe {
            core::arch::asm!(
                "cp.async.cg.shared.global [{dst}], [{src}], 16;",
                dst = in(reg32) address,
                src = in(reg64) src,
                options(nostack, preserves_flags),
            );
        }
    })
}

/// Starts copying the first `valid_bytes` of `*src` into `dst[index]` and zeroes the rest of
/// the element (`cp.async.ca.shared.global [dst], [src], size, valid_bytes`): the edge of a
/// tile, where part or all of an element lies past the end of the data. With `valid_bytes`
/// 0 nothing is read and the element is zeroed.
///
/// # Safety
/// As [`copy`], for the first `valid_bytes` (at most `size_of::<T>()`) of `*src`; `src` is a
/// global address even when `valid_bytes` is 0 (pass any in-bounds one).
#[inline(always)]
pub unsafe fn copy_zero_fill<T: AsyncElement>(
    dst: SharedArray<T>,
    index: u32,
    src: *const T,
    valid_bytes: u32,
) {
    on_gpu!("async_copy::copy_zero_fill", {
        let address = element_address(dst, index);
        // SAFETY: as in `copy`.
        unsafe {
            core::arch::asm!(
                "cp.async.ca.shared.global [{dst}], [{src}], {bytes}, {valid};",
                dst = in(reg32) address,
                src = in(reg64) src,
                bytes = const T::BYTES,
                valid = in(reg32) valid_bytes,
                options(nostack, preserves_flags),
            );
        }
    })
}

/// Closes the group of the copies this thread started since the last commit
/// (`cp.async.commit_group`; `__pipeline_commit`).
#[inline(always)]
pub fn commit() {
    on_gpu!("async_copy::commit", {
        // SAFETY: groups this thread's pending copies; no operands.
        unsafe { core::arch::asm!("cp.async.commit_group;", options(nostack, preserves_flags)) }
    })
}

/// Waits until at most `N` of this thread's committed groups are still in flight
/// (`cp.async.wait_group N`; `__pipeline_wait_prior(N)`): with two tiles in flight, `wait::<1>`
/// lets the newer one go on while the older is used.
#[inline(always)]
pub fn wait<const N: u32>() {
    on_gpu!("async_copy::wait", {
        // SAFETY: waits; the copies' writes become visible to this thread (no `nomem`).
        unsafe {
            core::arch::asm!("cp.async.wait_group {n};", n = const N, options(nostack, preserves_flags))
        }
    })
}

/// Waits for every copy this thread started, committed or not (`cp.async.wait_all`).
#[inline(always)]
pub fn wait_all() {
    on_gpu!("async_copy::wait_all", {
        // SAFETY: as in `wait`.
        unsafe { core::arch::asm!("cp.async.wait_all;", options(nostack, preserves_flags)) }
    })
}
