//! Atomic read-modify-write operations on device memory: CUDA C's `atomicAdd`, `atomicCAS`,
//! ... with their `_block` and `_system` forms.
//!
//! For `u32`, `i32`, `u64`, `i64`, `f32`, `f64`, where PTX has the operation:
//!
//! | operation | types | fetch (returns the old value, `atom`) | reduce (no result, `red`) |
//! | --- | --- | --- | --- |
//! | add | all six | [`fetch_add`] | [`add`] |
//! | sub (add of the negation) | all six | [`fetch_sub`] | [`sub`] |
//! | exchange | all six | [`exchange`] | |
//! | compare-and-swap | `u32`, `i32`, `u64`, `i64` | [`compare_exchange`] | |
//! | min, max | `u32`, `i32`, `u64`, `i64` | [`fetch_min`], [`fetch_max`] | [`min`], [`max`] |
//! | wrapping increment, decrement | `u32` | [`fetch_inc`], [`fetch_dec`] | [`inc`], [`dec`] |
//! | and, or, xor | `u32`, `i32`, `u64`, `i64` | [`fetch_and`], ... | [`and`], ... |
//!
//! No `f32`/`f64` min/max: CUDA 12.9's `ptxas` refuses `atom.min.f32` for sm_80 and sm_90
//! alike (min/max take `.u32`, `.s32`, `.u64`, `.s64` and the 16-bit float types there).
//!
//! Every function takes a pointer to **global** memory (`atom.global`, `red.global`): a
//! kernel's pointer parameter or one derived from it. For shared memory use the same
//! operations on a [`SharedArray`](crate::SharedArray) (`atom.shared`).
//!
//! Scope (which threads the operation is atomic with): the plain name is device scope
//! (`.gpu`, CUDA C's `atomicAdd`); `_block` is the thread block (`.cta`, `atomicAdd_block`),
//! for locations only the block's threads touch; `_system` is the GPU, its peers
//! and the host (`.sys`, `atomicAdd_system`), for mapped or managed memory. All are relaxed
//! (no ordering of other accesses, as CUDA C's): combine with [`fence`](crate::fence) to publish.
//!
//! The older `atomic_add_f32` (device scope), `atomic_add_u32`, `atomic_min_u32` and
//! `atomic_max_u32` (system scope, through `core`'s `AtomicU32`) take a generic pointer
//! (global or shared).

// -------------------------------------------------------------------------------------------
// The original functions: generic addressing (global or shared).
// -------------------------------------------------------------------------------------------

/// `atomicAdd(float*, float)`, result discarded (`red.relaxed.gpu.add.f32`, generic address).
///
/// # Safety
/// `address` must point to a valid, 4-byte aligned `f32` in global or shared memory.
#[inline(always)]
pub unsafe fn atomic_add_f32(address: *mut f32, value: f32) {
    on_gpu!("atomic_add_f32", {
        // SAFETY: the caller guarantees the address; the reduction is atomic in hardware.
        unsafe {
            core::arch::asm!(
                "red.relaxed.gpu.add.f32 [{a}], {v};",
                a = in(reg64) address,
                v = in(reg32) value,
                options(nostack, preserves_flags),
            );
        }
    })
}

/// The legacy `u32` functions, through `core`'s `AtomicU32` (relaxed), as they always were:
/// LLVM infers the state space where it can see it (`atom.relaxed.sys.global.add.u32` for a
/// kernel's buffer, a generic `atom` otherwise) and gives them system scope. Kept so: the
/// device-scope inline-PTX form (`atom.relaxed.gpu.add.u32`, generic) hides the state space
/// from LLVM, and Physarum's binning ran 5% slower with it (H200, 10M agents). New code
/// takes [`fetch_add`] (global, any scope) or `SharedArray::fetch_add` (shared).
macro_rules! legacy_u32 {
    ($($(#[$doc:meta])* $name:ident, $method:ident;)*) => {$(
        $(#[$doc])*
        ///
        /// # Safety
        /// `address` must point to a valid, 4-byte aligned `u32` in global or shared memory.
        #[inline(always)]
        pub unsafe fn $name(address: *mut u32, value: u32) -> u32 {
            on_gpu!("atomic_u32", {
                // SAFETY: the caller guarantees the address; the operation is atomic in hardware.
                unsafe {
                    core::sync::atomic::AtomicU32::from_ptr(address)
                        .$method(value, core::sync::atomic::Ordering::Relaxed)
                }
            })
        }
    )*};
}

legacy_u32! {
    /// `atomicAdd_system(unsigned*, unsigned)`: returns the old value (`core`'s relaxed
    /// `fetch_add`: `atom.relaxed.sys.add.u32`, the state space as LLVM infers it; [`fetch_add`]
    /// is the typed, device-scope form).
    atomic_add_u32, fetch_add;
    /// `atomicMin_system(unsigned*, unsigned)`: returns the old value (`atom.relaxed.sys.min.u32`).
    atomic_min_u32, fetch_min;
    /// `atomicMax_system(unsigned*, unsigned)`: returns the old value (`atom.relaxed.sys.max.u32`).
    atomic_max_u32, fetch_max;
}

// -------------------------------------------------------------------------------------------
// The typed operations.
// -------------------------------------------------------------------------------------------

/// Which threads an atomic operation is atomic with respect to (PTX's `.scope`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The threads of the block (`.cta`, CUDA C's `_block` functions).
    Block,
    /// The threads of the GPU (`.gpu`, CUDA C's plain `atomicAdd`).
    Device,
    /// The threads of the GPU, its peers and the host (`.sys`, CUDA C's `_system`).
    System,
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for i32 {}
    impl Sealed for u64 {}
    impl Sealed for i64 {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// The `match` over [`Scope`], one `asm!` per scope: `$op` (`"atom"`/`"red"`) with
/// `.relaxed.<scope>.global`, then `$rest` (operation, type, operands).
#[cfg(target_arch = "nvptx64")]
macro_rules! by_scope {
    ($scope:expr, $op:literal, $rest:expr, $($operands:tt)*) => {
        match $scope {
            Scope::Block => {
                core::arch::asm!(concat!($op, ".relaxed.cta.global", $rest), $($operands)*)
            }
            Scope::Device => {
                core::arch::asm!(concat!($op, ".relaxed.gpu.global", $rest), $($operands)*)
            }
            Scope::System => {
                core::arch::asm!(concat!($op, ".relaxed.sys.global", $rest), $($operands)*)
            }
        }
    };
}

/// The public functions of one operation at the three scopes: fetch forms (`$kind` `fetch`,
/// returning the old value) or reduce forms (`reduce`), calling the trait's `$method`.
macro_rules! scoped_functions {
    (fetch $Trait:ident, $method:ident, $effect:literal, $instr:literal, $cuda:literal;
     $($name:ident, $scope:ident, $ptx_scope:literal, $suffix:literal, $scope_doc:literal;)*) => {$(
        #[doc = concat!("`", $effect, "` atomically, returning the old value (`atom.relaxed.",
            $ptx_scope, ".global.", $instr, "`, CUDA C's `", $cuda, $suffix, "`). Scope: ",
            $scope_doc, ".")]
        ///
        /// # Safety
        /// `address` must be a valid, `size_of::<T>()`-aligned address in **global** memory (a
        /// kernel's pointer parameter or derived from one); other threads may access it only
        /// atomically meanwhile.
        #[inline(always)]
        pub unsafe fn $name<T: $Trait>(address: *mut T, value: T) -> T {
            // SAFETY: the caller's contract.
            unsafe { T::$method(address, value, Scope::$scope) }
        }
    )*};
    (reduce $Trait:ident, $method:ident, $effect:literal, $instr:literal, $cuda:literal;
     $($name:ident, $scope:ident, $ptx_scope:literal, $suffix:literal, $scope_doc:literal;)*) => {$(
        #[doc = concat!("`", $effect, "` atomically, no result (`red.relaxed.", $ptx_scope,
            ".global.", $instr, "`, CUDA C's `", $cuda, $suffix, "` with its result unused). \
            Scope: ", $scope_doc, ".")]
        ///
        /// # Safety
        /// `address` must be a valid, `size_of::<T>()`-aligned address in **global** memory (a
        /// kernel's pointer parameter or derived from one); other threads may access it only
        /// atomically meanwhile.
        #[inline(always)]
        pub unsafe fn $name<T: $Trait>(address: *mut T, value: T) {
            // SAFETY: the caller's contract.
            unsafe { T::$method(address, value, Scope::$scope) }
        }
    )*};
}

/// One read-modify-write operation with both forms (`atom` and `red`): its sealed trait, the
/// trait's implementations from the table (type, PTX type, register class), and the six public
/// functions (fetch and reduce, three scopes).
macro_rules! atomic_rmw {
    (
        $(#[$trait_doc:meta])*
        trait $Trait:ident: $op:literal, $effect:literal, $cuda:literal;
        fetch $fetch:ident, $fetch_block:ident, $fetch_system:ident;
        reduce $reduce:ident, $reduce_block:ident, $reduce_system:ident;
        $($ty:ty => $ptx:literal, $reg:ident;)*
    ) => {
        $(#[$trait_doc])*
        pub trait $Trait: sealed::Sealed + Copy {
            /// `atom.relaxed.<scope>.global`: returns the old value.
            #[doc(hidden)]
            unsafe fn fetch_global(address: *mut Self, value: Self, scope: Scope) -> Self;
            /// `red.relaxed.<scope>.global`.
            #[doc(hidden)]
            unsafe fn reduce_global(address: *mut Self, value: Self, scope: Scope);
            /// `atom.shared` at a shared-space address: returns the old value.
            #[doc(hidden)]
            unsafe fn fetch_shared(address: u32, value: Self) -> Self;
        }

        $(
            impl $Trait for $ty {
                #[inline(always)]
                unsafe fn fetch_global(address: *mut Self, value: Self, scope: Scope) -> Self {
                    on_gpu!($cuda, {
                        let old: Self;
                        // SAFETY: the public functions' contract: a valid, aligned global address.
                        unsafe {
                            by_scope!(scope, "atom",
                                concat!(".", $op, ".", $ptx, " {old}, [{a}], {v};"),
                                old = out($reg) old, a = in(reg64) address, v = in($reg) value,
                                options(nostack, preserves_flags))
                        }
                        old
                    })
                }

                #[inline(always)]
                unsafe fn reduce_global(address: *mut Self, value: Self, scope: Scope) {
                    on_gpu!($cuda, {
                        // SAFETY: the public functions' contract: a valid, aligned global address.
                        unsafe {
                            by_scope!(scope, "red",
                                concat!(".", $op, ".", $ptx, " [{a}], {v};"),
                                a = in(reg64) address, v = in($reg) value,
                                options(nostack, preserves_flags))
                        }
                    })
                }

                #[inline(always)]
                unsafe fn fetch_shared(address: u32, value: Self) -> Self {
                    on_gpu!($cuda, {
                        let old: Self;
                        // SAFETY: `SharedArray`'s contract: an in-bounds shared-space address.
                        unsafe {
                            core::arch::asm!(
                                concat!("atom.shared.", $op, ".", $ptx, " {old}, [{a}], {v};"),
                                old = out($reg) old, a = in(reg32) address, v = in($reg) value,
                                options(nostack, preserves_flags),
                            );
                        }
                        old
                    })
                }
            }
        )*

        scoped_functions! {
            fetch $Trait, fetch_global, $effect, $op, $cuda;
            $fetch, Device, "gpu", "", "the GPU's threads";
            $fetch_block, Block, "cta", "_block", "the block's threads only";
            $fetch_system, System, "sys", "_system", "the GPU's threads, its peers' and the host's";
        }
        scoped_functions! {
            reduce $Trait, reduce_global, $effect, $op, $cuda;
            $reduce, Device, "gpu", "", "the GPU's threads";
            $reduce_block, Block, "cta", "_block", "the block's threads only";
            $reduce_system, System, "sys", "_system", "the GPU's threads, its peers' and the host's";
        }
    };
}

atomic_rmw! {
    /// The types with an atomic add: all six (`f64` since sm_60).
    trait AtomicAdd: "add", "*address += value", "atomicAdd";
    fetch fetch_add, fetch_add_block, fetch_add_system;
    reduce add, add_block, add_system;
    u32 => "u32", reg32;
    i32 => "s32", reg32;
    u64 => "u64", reg64;
    // PTX has no `atom.add.s64`: two's complement addition is the unsigned one.
    i64 => "u64", reg64;
    f32 => "f32", reg32;
    f64 => "f64", reg64;
}

atomic_rmw! {
    /// The types with an atomic minimum: the integers (no float min/max `atom` on sm_80/sm_90).
    trait AtomicMin: "min", "*address = min(*address, value)", "atomicMin";
    fetch fetch_min, fetch_min_block, fetch_min_system;
    reduce min, min_block, min_system;
    u32 => "u32", reg32;
    i32 => "s32", reg32;
    u64 => "u64", reg64;
    i64 => "s64", reg64;
}

atomic_rmw! {
    /// The types with an atomic maximum: the integers (no float min/max `atom` on sm_80/sm_90).
    trait AtomicMax: "max", "*address = max(*address, value)", "atomicMax";
    fetch fetch_max, fetch_max_block, fetch_max_system;
    reduce max, max_block, max_system;
    u32 => "u32", reg32;
    i32 => "s32", reg32;
    u64 => "u64", reg64;
    i64 => "s64", reg64;
}

atomic_rmw! {
    /// The types with an atomic wrapping increment: `u32`.
    trait AtomicInc: "inc", "*address = if *address >= value { 0 } else { *address + 1 }", "atomicInc";
    fetch fetch_inc, fetch_inc_block, fetch_inc_system;
    reduce inc, inc_block, inc_system;
    u32 => "u32", reg32;
}

atomic_rmw! {
    /// The types with an atomic wrapping decrement: `u32`.
    trait AtomicDec: "dec",
        "*address = if *address == 0 || *address > value { value } else { *address - 1 }",
        "atomicDec";
    fetch fetch_dec, fetch_dec_block, fetch_dec_system;
    reduce dec, dec_block, dec_system;
    u32 => "u32", reg32;
}

atomic_rmw! {
    /// The types with an atomic bitwise and: the integers (`b32`, `b64`).
    trait AtomicAnd: "and", "*address &= value", "atomicAnd";
    fetch fetch_and, fetch_and_block, fetch_and_system;
    reduce and, and_block, and_system;
    u32 => "b32", reg32;
    i32 => "b32", reg32;
    u64 => "b64", reg64;
    i64 => "b64", reg64;
}

atomic_rmw! {
    /// The types with an atomic bitwise or: the integers (`b32`, `b64`).
    trait AtomicOr: "or", "*address |= value", "atomicOr";
    fetch fetch_or, fetch_or_block, fetch_or_system;
    reduce or, or_block, or_system;
    u32 => "b32", reg32;
    i32 => "b32", reg32;
    u64 => "b64", reg64;
    i64 => "b64", reg64;
}

atomic_rmw! {
    /// The types with an atomic bitwise exclusive or: the integers (`b32`, `b64`).
    trait AtomicXor: "xor", "*address ^= value", "atomicXor";
    fetch fetch_xor, fetch_xor_block, fetch_xor_system;
    reduce xor, xor_block, xor_system;
    u32 => "b32", reg32;
    i32 => "b32", reg32;
    u64 => "b64", reg64;
    i64 => "b64", reg64;
}

/// The types with an atomic subtraction: all of [`AtomicAdd`]'s. PTX has no `atom.sub`: it is
/// the add of the negation (wrapping for the integers), as CUDA C's `atomicSub` compiles.
pub trait AtomicSub: AtomicAdd {
    /// The value whose addition subtracts `self`.
    #[doc(hidden)]
    fn negated(self) -> Self;
}

macro_rules! atomic_sub_impls {
    ($($ty:ty: |$v:ident| $negated:expr;)*) => {$(
        impl AtomicSub for $ty {
            #[inline(always)]
            fn negated(self) -> Self {
                let $v = self;
                $negated
            }
        }
    )*};
}

atomic_sub_impls! {
    u32: |v| v.wrapping_neg();
    i32: |v| v.wrapping_neg();
    u64: |v| v.wrapping_neg();
    i64: |v| v.wrapping_neg();
    f32: |v| -v;
    f64: |v| -v;
}

/// The subtraction forms: the add of the negation at each scope and form.
macro_rules! sub_functions {
    ($($name:ident => $add:ident, $returns:ty, $doc:literal;)*) => {$(
        #[doc = concat!("`*address -= value` atomically: [`", stringify!($add),
            "`] of the negation (CUDA C's `atomicSub`). ", $doc)]
        ///
        /// # Safety
        #[doc = concat!("As [`", stringify!($add), "`].")]
        #[inline(always)]
        pub unsafe fn $name<T: AtomicSub>(address: *mut T, value: T) -> $returns {
            // SAFETY: the caller's contract, as `$add`'s.
            unsafe { $add(address, value.negated()) }
        }
    )*};
}

sub_functions! {
    fetch_sub => fetch_add, T, "Returns the old value; device scope.";
    fetch_sub_block => fetch_add_block, T, "Returns the old value; block scope.";
    fetch_sub_system => fetch_add_system, T, "Returns the old value; system scope.";
    sub => add, (), "No result; device scope.";
    sub_block => add_block, (), "No result; block scope.";
    sub_system => add_system, (), "No result; system scope.";
}

/// The types with an atomic exchange: all six (`b32`, `b64`).
pub trait AtomicExchange: sealed::Sealed + Copy {
    /// `atom.relaxed.<scope>.global.exch`: returns the old value.
    #[doc(hidden)]
    unsafe fn exchange_global(address: *mut Self, value: Self, scope: Scope) -> Self;
    /// `atom.shared.exch` at a shared-space address: returns the old value.
    #[doc(hidden)]
    unsafe fn exchange_shared(address: u32, value: Self) -> Self;
}

/// The types with an atomic compare-and-swap: the integers (`b32`, `b64`). (For a float, swap
/// its bits as the same-sized unsigned integer.)
pub trait AtomicCompareExchange: sealed::Sealed + Copy {
    /// `atom.relaxed.<scope>.global.cas`: returns the old value.
    #[doc(hidden)]
    unsafe fn compare_exchange_global(address: *mut Self, expected: Self, new: Self, scope: Scope) -> Self;
    /// `atom.shared.cas` at a shared-space address: returns the old value.
    #[doc(hidden)]
    unsafe fn compare_exchange_shared(address: u32, expected: Self, new: Self) -> Self;
}

macro_rules! exchange_impls {
    ($($ty:ty => $ptx:literal, $reg:ident;)*) => {$(
        impl AtomicExchange for $ty {
            #[inline(always)]
            unsafe fn exchange_global(address: *mut Self, value: Self, scope: Scope) -> Self {
                on_gpu!("atomicExch", {
                    let old: Self;
                    // SAFETY: the public functions' contract: a valid, aligned global address.
                    unsafe {
                        by_scope!(scope, "atom",
                            concat!(".exch.", $ptx, " {old}, [{a}], {v};"),
                            old = out($reg) old, a = in(reg64) address, v = in($reg) value,
                            options(nostack, preserves_flags))
                    }
                    old
                })
            }

            #[inline(always)]
            unsafe fn exchange_shared(address: u32, value: Self) -> Self {
                on_gpu!("atomicExch", {
                    let old: Self;
                    // SAFETY: `SharedArray`'s contract: an in-bounds shared-space address.
                    unsafe {
                        core::arch::asm!(
                            concat!("atom.shared.exch.", $ptx, " {old}, [{a}], {v};"),
                            old = out($reg) old, a = in(reg32) address, v = in($reg) value,
                            options(nostack, preserves_flags),
                        );
                    }
                    old
                })
            }
        }
    )*};
}

exchange_impls! {
    u32 => "b32", reg32;
    i32 => "b32", reg32;
    u64 => "b64", reg64;
    i64 => "b64", reg64;
    f32 => "b32", reg32;
    f64 => "b64", reg64;
}

macro_rules! compare_exchange_impls {
    ($($ty:ty => $ptx:literal, $reg:ident;)*) => {$(
        impl AtomicCompareExchange for $ty {
            #[inline(always)]
            unsafe fn compare_exchange_global(
                address: *mut Self,
                expected: Self,
                new: Self,
                scope: Scope,
            ) -> Self {
                on_gpu!("atomicCAS", {
                    let old: Self;
                    // SAFETY: the public functions' contract: a valid, aligned global address.
                    unsafe {
                        by_scope!(scope, "atom",
                            concat!(".cas.", $ptx, " {old}, [{a}], {e}, {n};"),
                            old = out($reg) old, a = in(reg64) address,
                            e = in($reg) expected, n = in($reg) new,
                            options(nostack, preserves_flags))
                    }
                    old
                })
            }

            #[inline(always)]
            unsafe fn compare_exchange_shared(address: u32, expected: Self, new: Self) -> Self {
                on_gpu!("atomicCAS", {
                    let old: Self;
                    // SAFETY: `SharedArray`'s contract: an in-bounds shared-space address.
                    unsafe {
                        core::arch::asm!(
                            concat!("atom.shared.cas.", $ptx, " {old}, [{a}], {e}, {n};"),
                            old = out($reg) old, a = in(reg32) address,
                            e = in($reg) expected, n = in($reg) new,
                            options(nostack, preserves_flags),
                        );
                    }
                    old
                })
            }
        }
    )*};
}

compare_exchange_impls! {
    u32 => "b32", reg32;
    i32 => "b32", reg32;
    u64 => "b64", reg64;
    i64 => "b64", reg64;
}

macro_rules! exchange_functions {
    ($($name:ident, $cas:ident, $scope:ident, $ptx_scope:literal, $suffix:literal;)*) => {$(
        #[doc = concat!("`*address = value` atomically, returning the old value (`atom.relaxed.",
            $ptx_scope, ".global.exch`, CUDA C's `atomicExch", $suffix, "`).")]
        ///
        /// # Safety
        /// `address` must be a valid, `size_of::<T>()`-aligned address in **global** memory (a
        /// kernel's pointer parameter or derived from one); other threads may access it only
        /// atomically meanwhile.
        #[inline(always)]
        pub unsafe fn $name<T: AtomicExchange>(address: *mut T, value: T) -> T {
            // SAFETY: the caller's contract.
            unsafe { T::exchange_global(address, value, Scope::$scope) }
        }

        #[doc = concat!("Compare-and-swap: `if *address == expected { *address = new }` \
            atomically, returning the old value (the swap happened iff it equals `expected`; \
            `atom.relaxed.", $ptx_scope, ".global.cas`, CUDA C's `atomicCAS", $suffix, "`).")]
        ///
        /// # Safety
        /// `address` must be a valid, `size_of::<T>()`-aligned address in **global** memory (a
        /// kernel's pointer parameter or derived from one); other threads may access it only
        /// atomically meanwhile.
        #[inline(always)]
        pub unsafe fn $cas<T: AtomicCompareExchange>(address: *mut T, expected: T, new: T) -> T {
            // SAFETY: the caller's contract.
            unsafe { T::compare_exchange_global(address, expected, new, Scope::$scope) }
        }
    )*};
}

exchange_functions! {
    exchange, compare_exchange, Device, "gpu", "";
    exchange_block, compare_exchange_block, Block, "cta", "_block";
    exchange_system, compare_exchange_system, System, "sys", "_system";
}
