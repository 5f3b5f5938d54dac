//! Memory accesses the compiler must not restructure, or that need a particular cache path:
//! read-only loads (`ld.global.nc`, CUDA C's `__ldg`), one-instruction vector loads and stores
//! (`ld.global.v4.f32`), streaming forms (`.cs`), the predicated `store_if`.
//!
//! The typed accesses take a generic pointer to global memory (a kernel's pointer parameter),
//! which on CUDA is also its global-space address, and use it with `.global` instructions.

use crate::vector::{F32x2, F32x4, F64x2, I32x2, I32x4, I64x2, U32x2, U32x4, U64x2, Vector};

/// Reads a float through the read-only data cache (`ld.global.nc`, CUDA C's `__ldg`).
///
/// # Safety
/// `ptr` must be a valid global address that no thread writes during the kernel.
#[inline(always)]
pub unsafe fn load_nc(ptr: *const f32) -> f32 {
    on_gpu!("load_nc", {
        let value: f32;
        // SAFETY: the caller guarantees `ptr` is a valid global address not written during
        // the kernel.
        unsafe {
            core::arch::asm!(
                "ld.global.nc.f32 {v}, [{p}];",
                v = out(reg32) value,
                p = in(reg64) ptr,
                options(readonly, nostack, preserves_flags),
            );
        }
        value
    })
}

/// `if condition { *address = value }` as one predicated store. Unlike the `if`, it
/// keeps the compiler from moving the computation of `value` under a branch: where
/// `condition` differs between the lanes of a warp, such a branch costs more than the
/// computation it skips.
///
/// # Safety
/// When `condition` holds, `address` must be valid for a 4-byte write.
#[inline(always)]
pub unsafe fn store_if(address: *mut f32, value: f32, condition: bool) {
    on_gpu!("store_if", {
        // SAFETY: the store happens only under `condition`, for which the caller vouches.
        unsafe {
            core::arch::asm!(
                "{{ .reg .pred p; setp.ne.u32 p, {c}, 0; @p st.f32 [{a}], {v}; }}",
                c = in(reg32) condition as u32,
                a = in(reg64) address,
                v = in(reg32) value,
                options(nostack, preserves_flags),
            );
        }
    })
}

/// The types the typed global-memory accesses of this module move in one instruction: the
/// 32- and 64-bit scalars and the vector types of [`vector`](crate::vector). Sealed.
pub trait GlobalValue: Copy + sealed::Sealed {
    /// `ld.global` of one value, with the cache operator `cache`.
    #[doc(hidden)]
    unsafe fn load_with(address: *const Self, cache: Cache) -> Self;
    /// `st.global` of one value, with the cache operator `cache` (`ReadOnly`: the plain store).
    #[doc(hidden)]
    unsafe fn store_with(address: *mut Self, value: Self, cache: Cache);
}

/// The cache operator of a global load or store.
#[doc(hidden)]
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Cache {
    /// Cache at all levels (PTX's default, `.ca` for loads, `.wb` for stores).
    Default,
    /// The read-only (non-coherent) data cache: `.nc`, loads only.
    ReadOnly,
    /// Streaming, likely accessed once: `.cs`, evict first.
    Streaming,
}

mod sealed {
    pub trait Sealed {}
}

/// The `match` over [`Cache`], one `asm!` per cache operator: `$op` (`ld`/`st`), the state
/// space with the operator, then `$rest` (types and operands). Stores have no `.nc`: their
/// `ReadOnly` arm (never taken) is the plain store.
#[cfg(target_arch = "nvptx64")]
macro_rules! by_cache {
    ($cache:expr, ld, $rest:expr, $($operands:tt)*) => {
        match $cache {
            Cache::Default => core::arch::asm!(concat!("ld.global", $rest), $($operands)*),
            Cache::ReadOnly => core::arch::asm!(concat!("ld.global.nc", $rest), $($operands)*),
            Cache::Streaming => core::arch::asm!(concat!("ld.global.cs", $rest), $($operands)*),
        }
    };
    ($cache:expr, st, $rest:expr, $($operands:tt)*) => {
        match $cache {
            Cache::Default | Cache::ReadOnly => {
                core::arch::asm!(concat!("st.global", $rest), $($operands)*)
            }
            Cache::Streaming => core::arch::asm!(concat!("st.global.cs", $rest), $($operands)*),
        }
    };
}

/// [`GlobalValue`] for scalars: (type, PTX type, register class).
macro_rules! global_scalar {
    ($($ty:ty, $ptx:literal, $reg:ident;)*) => {$(
        impl sealed::Sealed for $ty {}
        impl GlobalValue for $ty {
            #[inline(always)]
            unsafe fn load_with(address: *const Self, cache: Cache) -> Self {
                on_gpu!("load_global", {
                    let value: Self;
                    // SAFETY: the public callers' contract: a valid, aligned global address
                    // (not written during the kernel for `.nc`).
                    unsafe {
                        by_cache!(cache, ld, concat!(".", $ptx, " {v}, [{p}];"),
                            v = out($reg) value, p = in(reg64) address,
                            options(readonly, nostack, preserves_flags))
                    }
                    value
                })
            }

            #[inline(always)]
            unsafe fn store_with(address: *mut Self, value: Self, cache: Cache) {
                on_gpu!("store_global", {
                    // SAFETY: the public callers' contract: a valid, aligned global address.
                    unsafe {
                        by_cache!(cache, st, concat!(".", $ptx, " [{p}], {v};"),
                            p = in(reg64) address, v = in($reg) value,
                            options(nostack, preserves_flags))
                    }
                })
            }
        }
    )*};
}

global_scalar! {
    u32, "u32", reg32;
    i32, "s32", reg32;
    f32, "f32", reg32;
    u64, "u64", reg64;
    i64, "s64", reg64;
    f64, "f64", reg64;
}

/// [`GlobalValue`] for 2-lane vectors: (type, PTX lane type, register class).
macro_rules! global_vector2 {
    ($($ty:ty, $ptx:literal, $reg:ident;)*) => {$(
        impl sealed::Sealed for $ty {}
        impl GlobalValue for $ty {
            #[inline(always)]
            unsafe fn load_with(address: *const Self, cache: Cache) -> Self {
                on_gpu!("load_global", {
                    let (x, y);
                    // SAFETY: as for the scalars (the address is aligned to the vector's size).
                    unsafe {
                        by_cache!(cache, ld, concat!(".v2.", $ptx, " {{{x}, {y}}}, [{p}];"),
                            x = out($reg) x, y = out($reg) y, p = in(reg64) address,
                            options(readonly, nostack, preserves_flags))
                    }
                    <$ty>::new(x, y)
                })
            }

            #[inline(always)]
            unsafe fn store_with(address: *mut Self, value: Self, cache: Cache) {
                on_gpu!("store_global", {
                    let [x, y] = value.0;
                    // SAFETY: as for the scalars (the address is aligned to the vector's size).
                    unsafe {
                        by_cache!(cache, st, concat!(".v2.", $ptx, " [{p}], {{{x}, {y}}};"),
                            p = in(reg64) address, x = in($reg) x, y = in($reg) y,
                            options(nostack, preserves_flags))
                    }
                })
            }
        }
    )*};
}

global_vector2! {
    F32x2, "f32", reg32;
    U32x2, "u32", reg32;
    I32x2, "s32", reg32;
    F64x2, "f64", reg64;
    U64x2, "u64", reg64;
    I64x2, "s64", reg64;
}

/// [`GlobalValue`] for 4-lane vectors: (type, PTX lane type, register class).
macro_rules! global_vector4 {
    ($($ty:ty, $ptx:literal, $reg:ident;)*) => {$(
        impl sealed::Sealed for $ty {}
        impl GlobalValue for $ty {
            #[inline(always)]
            unsafe fn load_with(address: *const Self, cache: Cache) -> Self {
                on_gpu!("load_global", {
                    let (x, y, z, w);
                    // SAFETY: as for the scalars (the address is aligned to the vector's size).
                    unsafe {
                        by_cache!(cache, ld,
                            concat!(".v4.", $ptx, " {{{x}, {y}, {z}, {w}}}, [{p}];"),
                            x = out($reg) x, y = out($reg) y, z = out($reg) z, w = out($reg) w,
                            p = in(reg64) address,
                            options(readonly, nostack, preserves_flags))
                    }
                    <$ty>::new(x, y, z, w)
                })
            }

            #[inline(always)]
            unsafe fn store_with(address: *mut Self, value: Self, cache: Cache) {
                on_gpu!("store_global", {
                    let [x, y, z, w] = value.0;
                    // SAFETY: as for the scalars (the address is aligned to the vector's size).
                    unsafe {
                        by_cache!(cache, st,
                            concat!(".v4.", $ptx, " [{p}], {{{x}, {y}, {z}, {w}}};"),
                            p = in(reg64) address,
                            x = in($reg) x, y = in($reg) y, z = in($reg) z, w = in($reg) w,
                            options(nostack, preserves_flags))
                    }
                })
            }
        }
    )*};
}

global_vector4! {
    F32x4, "f32", reg32;
    U32x4, "u32", reg32;
    I32x4, "s32", reg32;
}

/// Reads `*address` through the read-only data cache: `ld.global.nc` (CUDA C's `__ldg`), for
/// scalars and vectors (`ld.global.nc.v4.f32` for an [`F32x4`]).
///
/// # Safety
/// `address` must be a valid global address (a kernel's pointer parameter, or derived from
/// one), aligned to `size_of::<T>()`, and no thread may write `*address` during the kernel.
#[inline(always)]
pub unsafe fn load_global_nc<T: GlobalValue>(address: *const T) -> T {
    // SAFETY: the caller's contract.
    unsafe { T::load_with(address, Cache::ReadOnly) }
}

/// Reads `*address` in one access (`ld.global.u32`, `ld.global.v4.f32`, ...).
///
/// # Safety
/// `address` must be a valid global address aligned to `size_of::<T>()`; a concurrent write to
/// it by another thread is a data race.
#[inline(always)]
pub unsafe fn load_global<T: GlobalValue>(address: *const T) -> T {
    // SAFETY: the caller's contract.
    unsafe { T::load_with(address, Cache::Default) }
}

/// Writes `*address` in one access (`st.global.u32`, `st.global.v4.f32`, ...).
///
/// # Safety
/// `address` must be a valid global address aligned to `size_of::<T>()` and valid for writes;
/// a concurrent access to it by another thread is a data race.
#[inline(always)]
pub unsafe fn store_global<T: GlobalValue>(address: *mut T, value: T) {
    // SAFETY: the caller's contract.
    unsafe { T::store_with(address, value, Cache::Default) }
}

/// [`load_global`] for data read once (`ld.global.cs`, CUDA C's `__ldcs`): marked to be
/// evicted first, so it does not push reused data out of the caches.
///
/// # Safety
/// As [`load_global`].
#[inline(always)]
pub unsafe fn load_global_streaming<T: GlobalValue>(address: *const T) -> T {
    // SAFETY: the caller's contract.
    unsafe { T::load_with(address, Cache::Streaming) }
}

/// [`store_global`] for data not read again soon (`st.global.cs`, CUDA C's `__stcs`).
///
/// # Safety
/// As [`store_global`].
#[inline(always)]
pub unsafe fn store_global_streaming<T: GlobalValue>(address: *mut T, value: T) {
    // SAFETY: the caller's contract.
    unsafe { T::store_with(address, value, Cache::Streaming) }
}

/// One 8- or 16-byte vector from global memory in one access (`ld.global.v4.f32` for an
/// [`F32x4`], CUDA C's `float4 v = *p;`).
///
/// # Safety
/// As [`load_global`]: valid, global, aligned to the vector's size.
#[inline(always)]
pub unsafe fn load_vector<V: Vector + GlobalValue>(address: *const V) -> V {
    // SAFETY: the caller's contract.
    unsafe { V::load_with(address, Cache::Default) }
}

/// One 8- or 16-byte vector to global memory in one access (`st.global.v4.f32` for an
/// [`F32x4`], CUDA C's `*p = v;`).
///
/// # Safety
/// As [`store_global`]: valid for writes, global, aligned to the vector's size.
#[inline(always)]
pub unsafe fn store_vector<V: Vector + GlobalValue>(address: *mut V, value: V) {
    // SAFETY: the caller's contract.
    unsafe { V::store_with(address, value, Cache::Default) }
}
