//! Memory accesses the compiler must not restructure, or that need a particular cache path:
//! read-only loads (`ld.global.nc`, CUDA C's `__ldg`), one-instruction vector loads and stores
//! (`ld.global.v4.f32`), streaming forms (`.cs`), the predicated `store_if`, and the accesses
//! of flags that other threads set: volatile (`ld.volatile.global`, [`load_volatile`]) and
//! acquire/release at block, device and system scope (`ld.acquire.gpu.global`,
//! `st.release.gpu.global`: [`load_acquire`], [`store_release`]; sm_70+).
//!
//! | CUDA C | here | PTX |
//! | --- | --- | --- |
//! | `__ldg(p)` | [`load_global_nc`] | `ld.global.nc` |
//! | `*(volatile T*)p`, `*(volatile T*)p = v` | [`load_volatile`], [`store_volatile`] | `ld.volatile.global`, `st.volatile.global` |
//! | `cuda::atomic_ref<T, thread_scope_device>(*p).load(memory_order_acquire)` | [`load_acquire`] | `ld.acquire.gpu.global` |
//! | `cuda::atomic_ref<T, thread_scope_device>(*p).store(v, memory_order_release)` | [`store_release`] | `st.release.gpu.global` |
//! | the same at `thread_scope_block` / `_system` | [`load_acquire_block`], [`store_release_block`], `_system` | `.cta`, `.sys` |
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

// -------------------------------------------------------------------------------------------
// Volatile and acquire/release accesses: flags and values other blocks publish.
// -------------------------------------------------------------------------------------------

/// The scalars of the volatile and acquire/release accesses ([`load_volatile`],
/// [`load_acquire`], [`store_release`], ...): `u32`, `i32`, `u64`, `i64`, `f32`, `f64`, each
/// moved by one instruction of its width. Sealed.
pub trait OrderedValue: GlobalValue {
    /// The load of [`Order`] `order`.
    #[doc(hidden)]
    unsafe fn load_ordered(address: *const Self, order: Order) -> Self;
    /// The store of [`Order`] `order`.
    #[doc(hidden)]
    unsafe fn store_ordered(address: *mut Self, value: Self, order: Order);
}

/// How a load or store of [`OrderedValue`] is ordered: `.volatile`, or the acquire (loads)
/// or release (stores) semantics at a scope.
#[doc(hidden)]
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// `ld.volatile` / `st.volatile`.
    Volatile,
    /// `.acquire.cta` / `.release.cta`: the thread block.
    Block,
    /// `.acquire.gpu` / `.release.gpu`: the GPU.
    Device,
    /// `.acquire.sys` / `.release.sys`: the GPU, its peers and the host.
    System,
}

/// The `match` over [`Order`], one `asm!` per form: `ld` or `st`, then `$rest` (type and
/// operands) after `.global`.
#[cfg(target_arch = "nvptx64")]
macro_rules! by_order {
    ($order:expr, ld, $rest:expr, $($operands:tt)*) => {
        match $order {
            Order::Volatile => core::arch::asm!(concat!("ld.volatile.global", $rest), $($operands)*),
            Order::Block => core::arch::asm!(concat!("ld.acquire.cta.global", $rest), $($operands)*),
            Order::Device => core::arch::asm!(concat!("ld.acquire.gpu.global", $rest), $($operands)*),
            Order::System => core::arch::asm!(concat!("ld.acquire.sys.global", $rest), $($operands)*),
        }
    };
    ($order:expr, st, $rest:expr, $($operands:tt)*) => {
        match $order {
            Order::Volatile => core::arch::asm!(concat!("st.volatile.global", $rest), $($operands)*),
            Order::Block => core::arch::asm!(concat!("st.release.cta.global", $rest), $($operands)*),
            Order::Device => core::arch::asm!(concat!("st.release.gpu.global", $rest), $($operands)*),
            Order::System => core::arch::asm!(concat!("st.release.sys.global", $rest), $($operands)*),
        }
    };
}

/// [`OrderedValue`] for scalars: (type, PTX type, register class). The `asm!` has neither
/// `pure` nor `readonly`/`nomem`: each access happens as written, every time (a polling loop
/// reads again), and the compiler moves no other memory access across it (an acquire's later
/// reads stay after it, a release's earlier writes before it).
macro_rules! ordered_scalar {
    ($($ty:ty, $ptx:literal, $reg:ident;)*) => {$(
        impl OrderedValue for $ty {
            #[inline(always)]
            unsafe fn load_ordered(address: *const Self, order: Order) -> Self {
                on_gpu!("load_ordered", {
                    let value: Self;
                    // SAFETY: the public callers' contract: a valid, aligned global address.
                    unsafe {
                        by_order!(order, ld, concat!(".", $ptx, " {v}, [{p}];"),
                            v = out($reg) value, p = in(reg64) address,
                            options(nostack, preserves_flags))
                    }
                    value
                })
            }

            #[inline(always)]
            unsafe fn store_ordered(address: *mut Self, value: Self, order: Order) {
                on_gpu!("store_ordered", {
                    // SAFETY: the public callers' contract: a valid, aligned global address.
                    unsafe {
                        by_order!(order, st, concat!(".", $ptx, " [{p}], {v};"),
                            p = in(reg64) address, v = in($reg) value,
                            options(nostack, preserves_flags))
                    }
                })
            }
        }
    )*};
}

ordered_scalar! {
    u32, "u32", reg32;
    i32, "s32", reg32;
    f32, "f32", reg32;
    u64, "u64", reg64;
    i64, "s64", reg64;
    f64, "f64", reg64;
}

/// Reads `*address` from memory every time it is called (`ld.volatile.global.u32`, ...; CUDA
/// C's read through a `volatile` pointer): for polling a flag another thread sets, which a
/// plain load may read once and keep. It orders nothing else: to read data published with the
/// flag, use [`load_acquire`] (or a [`fence`](crate::fence) after this load).
///
/// # Safety
/// `address` must be a valid global address (a kernel's pointer parameter, or derived from
/// one) aligned to `size_of::<T>()`. Another thread may write it meanwhile only with
/// [`store_volatile`], [`store_release`] or an atomic: the read sees the old value or the new
/// one, never a mix.
#[inline(always)]
pub unsafe fn load_volatile<T: OrderedValue>(address: *const T) -> T {
    // SAFETY: the caller's contract.
    unsafe { T::load_ordered(address, Order::Volatile) }
}

/// Writes `*address` to memory every time it is called (`st.volatile.global.u32`, ...; CUDA
/// C's write through a `volatile` pointer). It orders nothing else: to publish data with the
/// value, use [`store_release`] (or a [`fence`](crate::fence) before this store).
///
/// # Safety
/// As [`load_volatile`], for a write: valid, global, aligned; other threads' concurrent
/// accesses are volatile, acquire/release or atomic.
#[inline(always)]
pub unsafe fn store_volatile<T: OrderedValue>(address: *mut T, value: T) {
    // SAFETY: the caller's contract.
    unsafe { T::store_ordered(address, value, Order::Volatile) }
}

/// Reads `*address` with acquire semantics at device scope (`ld.acquire.gpu.global.u32`, ...;
/// libcu++'s `cuda::atomic_ref<T, thread_scope_device>::load(memory_order_acquire)`; sm_70+):
/// if it reads a value that a thread of the GPU wrote with [`store_release`], this thread's
/// later accesses see everything that thread wrote before its store. The flag-polling read
/// of a look-back scan: `while load_acquire(flag) == 0 {}`, then read the published data.
///
/// # Safety
/// As [`load_volatile`]: a valid, aligned global address; concurrent writes to it are
/// release stores, volatile stores or atomics.
#[inline(always)]
pub unsafe fn load_acquire<T: OrderedValue>(address: *const T) -> T {
    // SAFETY: the caller's contract.
    unsafe { T::load_ordered(address, Order::Device) }
}

/// Writes `*address` with release semantics at device scope (`st.release.gpu.global.u32`,
/// ...; `cuda::atomic_ref<T, thread_scope_device>::store(v, memory_order_release)`; sm_70+):
/// this thread's earlier writes are seen by any thread of the GPU that reads this value with
/// [`load_acquire`]. The publishing write of a look-back scan: write the data, then
/// `store_release(flag, 1)`.
///
/// # Safety
/// As [`store_volatile`]: a valid, aligned global address; concurrent accesses to it are
/// acquire loads, volatile accesses or atomics.
#[inline(always)]
pub unsafe fn store_release<T: OrderedValue>(address: *mut T, value: T) {
    // SAFETY: the caller's contract.
    unsafe { T::store_ordered(address, value, Order::Device) }
}

/// [`load_acquire`] at block scope (`ld.acquire.cta.global`): synchronises only with
/// [`store_release_block`]s of threads of the same block.
///
/// # Safety
/// As [`load_acquire`].
#[inline(always)]
pub unsafe fn load_acquire_block<T: OrderedValue>(address: *const T) -> T {
    // SAFETY: the caller's contract.
    unsafe { T::load_ordered(address, Order::Block) }
}

/// [`store_release`] at block scope (`st.release.cta.global`): publishes to the threads of the
/// same block only.
///
/// # Safety
/// As [`store_release`].
#[inline(always)]
pub unsafe fn store_release_block<T: OrderedValue>(address: *mut T, value: T) {
    // SAFETY: the caller's contract.
    unsafe { T::store_ordered(address, value, Order::Block) }
}

/// [`load_acquire`] at system scope (`ld.acquire.sys.global`): also synchronises with release
/// stores of the host and of peer GPUs (mapped or managed memory).
///
/// # Safety
/// As [`load_acquire`].
#[inline(always)]
pub unsafe fn load_acquire_system<T: OrderedValue>(address: *const T) -> T {
    // SAFETY: the caller's contract.
    unsafe { T::load_ordered(address, Order::System) }
}

/// [`store_release`] at system scope (`st.release.sys.global`): publishes to the host and peer
/// GPUs too (mapped or managed memory).
///
/// # Safety
/// As [`store_release`].
#[inline(always)]
pub unsafe fn store_release_system<T: OrderedValue>(address: *mut T, value: T) {
    // SAFETY: the caller's contract.
    unsafe { T::store_ordered(address, value, Order::System) }
}
