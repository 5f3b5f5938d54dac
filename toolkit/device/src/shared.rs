//! Shared memory: per-block arrays declared in the kernel, static and dynamic. The typed
//! handle [`SharedArray`] (`shared!`, `dynamic_shared!`) loads, stores and updates atomically
//! with 32-bit shared-space addresses; `SharedF32` is its older `f32`-only form.

use crate::vector::{F32x2, F32x4, F64x2, I32x2, I32x4, I64x2, U32x2, U32x4, U64x2};

/// Declares a per-block shared-memory array and yields a `*mut T` to its first element.
///
/// ```ignore
/// let tile: *mut f32 = shared_array!(reduce_tile: [f32; 1024]);
/// ```
/// The name becomes the PTX symbol, so it must be unique within a kernel (and is best unique
/// within the crate). Contents start undefined: write before reading, with a
/// [`thread::sync_threads`](crate::thread::sync_threads) in between.
#[macro_export]
macro_rules! shared_array {
    ($name:ident : [$ty:ty; $len:expr]) => {{
        let ptr: *mut $ty;
        // In a host build (kernel bodies are type-checked there, never run) a null pointer.
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let _ = ($len) * core::mem::size_of::<$ty>();
            ptr = core::ptr::null_mut();
        }
        // SAFETY: declares a `.shared` array and converts its address to a generic pointer;
        // the asm reads and writes no memory.
        #[cfg(target_arch = "nvptx64")]
        unsafe {
            core::arch::asm!(
                concat!(".shared .align 16 .b8 ", stringify!($name), "[{bytes}];"),
                concat!("cvta.shared.u64 {ptr}, ", stringify!($name), ";"),
                bytes = const ($len) * core::mem::size_of::<$ty>(),
                ptr = out(reg64) ptr,
                options(nomem, nostack, preserves_flags),
            );
        }
        ptr
    }};
}

/// A per-block shared-memory array of `len` `f32`s as a [`SharedF32`] (32-bit shared-space
/// addressing, for hot loops), CUDA C's `__shared__ float name[len];`. Naming and contents as
/// [`shared_array!`].
///
/// ```ignore
/// let edges = shared_f32!(stream_edges: 512);
/// ```
#[macro_export]
macro_rules! shared_f32 {
    ($name:ident : $len:expr) => {{
        let base: u32;
        // In a host build (kernel bodies are type-checked there, never run) address 0.
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let _ = ($len) * 4;
            base = 0;
        }
        // SAFETY: declares a `.shared` array and reads its shared-space address; the asm reads
        // and writes no memory.
        #[cfg(target_arch = "nvptx64")]
        unsafe {
            core::arch::asm!(
                concat!(".shared .align 16 .b8 ", stringify!($name), "[{bytes}];"),
                concat!("mov.u32 {base}, ", stringify!($name), ";"),
                bytes = const ($len) * 4,
                base = out(reg32) base,
                options(nomem, nostack, preserves_flags),
            );
        }
        $crate::SharedF32::from_shared_address(base)
    }};
}

/// A per-block shared-memory array of `f32` addressed in the shared state space with 32-bit
/// offsets (`ld.shared.f32` / `st.shared.f32`), as nvcc addresses `__shared__` arrays. Use it
/// in hot loops: a [`shared_array!`] pointer is a 64-bit generic address, which costs 64-bit
/// arithmetic per access and a generic load that must check its state space.
#[derive(Clone, Copy)]
pub struct SharedF32 {
    /// Byte address of element 0 in the shared state space.
    base: u32,
}

impl SharedF32 {
    /// Wraps the shared-space address of an array (see [`dynamic_shared_f32!`]).
    #[doc(hidden)]
    #[inline(always)]
    pub const fn from_shared_address(base: u32) -> Self {
        Self { base }
    }

    /// Element `index`.
    ///
    /// # Safety
    /// `index` must lie inside the array; another thread's write to it must be separated
    /// from this read by a barrier.
    #[inline(always)]
    pub unsafe fn load(self, index: u32) -> f32 {
        on_gpu!("load", {
            let value: f32;
            // SAFETY: the caller keeps `index` in bounds; the load only reads shared memory.
            unsafe {
                core::arch::asm!(
                    "ld.shared.f32 {v}, [{a}];",
                    v = out(reg32) value,
                    a = in(reg32) self.base + 4 * index,
                    options(pure, readonly, nostack, preserves_flags),
                );
            }
            value
        })
    }

    /// Elements `index` and `index + 1` in one access (`ld.shared.v2.f32`).
    ///
    /// # Safety
    /// As [`SharedF32::load`], for both elements; `index` must be even (8-byte aligned).
    #[inline(always)]
    pub unsafe fn load2(self, index: u32) -> [f32; 2] {
        on_gpu!("load2", {
            let (a, b): (f32, f32);
            // SAFETY: as `load`.
            unsafe {
                core::arch::asm!(
                    "ld.shared.v2.f32 {{{a}, {b}}}, [{p}];",
                    a = out(reg32) a,
                    b = out(reg32) b,
                    p = in(reg32) self.base + 4 * index,
                    options(pure, readonly, nostack, preserves_flags),
                );
            }
            [a, b]
        })
    }

    /// Writes elements `index` and `index + 1` in one access (`st.shared.v2.f32`).
    ///
    /// # Safety
    /// As [`SharedF32::load`], for both elements; `index` must be even (8-byte aligned).
    #[inline(always)]
    pub unsafe fn store2(self, index: u32, values: [f32; 2]) {
        on_gpu!("store2", {
            // SAFETY: as `store`.
            unsafe {
                core::arch::asm!(
                    "st.shared.v2.f32 [{p}], {{{a}, {b}}};",
                    p = in(reg32) self.base + 4 * index,
                    a = in(reg32) values[0],
                    b = in(reg32) values[1],
                    options(nostack, preserves_flags),
                );
            }
        })
    }

    /// Writes elements `index .. index + 4` in one access (`st.shared.v4.f32`).
    ///
    /// # Safety
    /// As [`SharedF32::load`], for all four elements; `index` must be a multiple of 4 (16-byte
    /// aligned).
    #[inline(always)]
    pub unsafe fn store4(self, index: u32, values: [f32; 4]) {
        on_gpu!("store4", {
            // SAFETY: as `store`.
            unsafe {
                core::arch::asm!(
                    "st.shared.v4.f32 [{p}], {{{a}, {b}, {c}, {d}}};",
                    p = in(reg32) self.base + 4 * index,
                    a = in(reg32) values[0],
                    b = in(reg32) values[1],
                    c = in(reg32) values[2],
                    d = in(reg32) values[3],
                    options(nostack, preserves_flags),
                );
            }
        })
    }

    /// Writes element `index`.
    ///
    /// # Safety
    /// As [`SharedF32::load`].
    #[inline(always)]
    pub unsafe fn store(self, index: u32, value: f32) {
        on_gpu!("store", {
            // SAFETY: the caller keeps `index` in bounds.
            unsafe {
                core::arch::asm!(
                    "st.shared.f32 [{a}], {v};",
                    a = in(reg32) self.base + 4 * index,
                    v = in(reg32) value,
                    options(nostack, preserves_flags),
                );
            }
        })
    }
}

/// The block's dynamic shared memory (sized at launch, as CUDA C's `extern __shared__
/// float name[];`) as a [`SharedF32`]. Needed past 48 KiB per block, where static shared
/// arrays stop; the host must raise the kernel's `MAX_DYNAMIC_SHARED_SIZE_BYTES` attribute and
/// pass the size in the launch configuration. As in CUDA C, every dynamic array of a kernel
/// starts at the same address.
///
/// ```ignore
/// let planes = dynamic_shared_f32!(stencil_planes);
/// ```
#[macro_export]
macro_rules! dynamic_shared_f32 {
    ($name:ident) => {{
        // Declared at module scope, where PTX wants it (`global_asm!` only stands as an item).
        #[cfg(target_arch = "nvptx64")]
        #[allow(non_snake_case)]
        mod $name {
            core::arch::global_asm!(concat!(".extern .shared .align 16 .b8 ", stringify!($name), "[];"));
        }
        let base: u32;
        // In a host build (kernel bodies are type-checked there, never run) address 0.
        #[cfg(not(target_arch = "nvptx64"))]
        {
            base = 0;
        }
        // SAFETY: reads the shared-space address of the dynamic array; no memory is touched.
        #[cfg(target_arch = "nvptx64")]
        unsafe {
            core::arch::asm!(
                concat!("mov.u32 {base}, ", stringify!($name), ";"),
                base = out(reg32) base,
                options(nomem, nostack, preserves_flags),
            );
        }
        $crate::SharedF32::from_shared_address(base)
    }};
}

/// A per-block shared-memory array of `T` as a [`SharedArray`] (32-bit shared-space
/// addressing: `ld.shared`, `st.shared`, `atom.shared`), CUDA C's `__shared__ T name[len];`.
/// The array is aligned to 16 bytes (or `T`'s alignment, if larger). Naming and contents as
/// [`shared_array!`]: the name is the PTX symbol, unique within the kernel; contents start
/// undefined.
///
/// ```ignore
/// let bins = shared!(histogram_bins: [u32; 256]);
/// unsafe { bins.store(thread::thread_idx_x(), 0) };
/// ```
#[macro_export]
macro_rules! shared {
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
                concat!(".shared .align {align} .b8 ", stringify!($name), "[{bytes}];"),
                concat!("mov.u32 {base}, ", stringify!($name), ";"),
                align = const {
                    if core::mem::align_of::<$ty>() > 16 { core::mem::align_of::<$ty>() } else { 16 }
                },
                bytes = const ($len) * core::mem::size_of::<$ty>(),
                base = out(reg32) base,
                options(nomem, nostack, preserves_flags),
            );
        }
        $crate::SharedArray::<$ty>::from_shared_address(base, Some(($len) as u32))
    }};
}

/// The block's dynamic shared memory (sized at launch: CUDA C's `extern __shared__ T name[];`)
/// as a [`SharedArray`] of `T` (alignment at most 16). As [`dynamic_shared_f32!`](crate::dynamic_shared_f32): past 48 KiB
/// the host raises the kernel's dynamic shared-memory limit; every dynamic array of a kernel
/// starts at the same address. Its [`SharedArray::len`] is `None`: the size is the launch's.
///
/// ```ignore
/// let tile = dynamic_shared!(transpose_tile: F32x4);
/// ```
#[macro_export]
macro_rules! dynamic_shared {
    ($name:ident : $ty:ty) => {{
        // Declared at module scope, where PTX wants it (`global_asm!` only stands as an item).
        #[cfg(target_arch = "nvptx64")]
        #[allow(non_snake_case)]
        mod $name {
            core::arch::global_asm!(concat!(".extern .shared .align 16 .b8 ", stringify!($name), "[];"));
        }
        const { assert!(core::mem::align_of::<$ty>() <= 16, "dynamic_shared!: alignment above 16") };
        let base: u32;
        // In a host build (kernel bodies are type-checked there, never run) address 0.
        #[cfg(not(target_arch = "nvptx64"))]
        {
            base = 0;
        }
        // SAFETY: reads the shared-space address of the dynamic array; no memory is touched.
        #[cfg(target_arch = "nvptx64")]
        unsafe {
            core::arch::asm!(
                concat!("mov.u32 {base}, ", stringify!($name), ";"),
                base = out(reg32) base,
                options(nomem, nostack, preserves_flags),
            );
        }
        $crate::SharedArray::<$ty>::from_shared_address(base, None)
    }};
}

/// A per-block shared-memory array of `T`, addressed in the shared state space with 32-bit
/// offsets, as nvcc addresses `__shared__` arrays: loads and stores are `ld.shared`/`st.shared`
/// of `T`'s width (one instruction for 1, 2, 4, 8 and 16 bytes, `ld.shared.v4.f32` for
/// [`load4`](SharedArray::<f32>::load4)), atomics are `atom.shared`. Made by [`shared!`]
/// (static) or [`dynamic_shared!`]; `Copy`, so pass it to helper functions by value.
///
/// Element `i` lies at byte `i * size_of::<T>()` of an array aligned to 16 bytes.
pub struct SharedArray<T: Copy> {
    /// Byte address of element 0 in the shared state space.
    base: u32,
    /// The number of elements of a static array; `None` for dynamic shared memory.
    len: Option<u32>,
    element: core::marker::PhantomData<T>,
}

impl<T: Copy> Clone for SharedArray<T> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: Copy> Copy for SharedArray<T> {}

/// Moves `size_of::<T>()` bytes from one value to a value of a type of the same size (checked
/// by the callers' `match` on the size).
///
/// # Safety
/// `size_of::<From>() == size_of::<To>()`, `from`'s bytes are all initialised and form a valid
/// `To`.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
unsafe fn same_size_cast<From: Copy, To: Copy>(from: From) -> To {
    let mut to = core::mem::MaybeUninit::<To>::uninit();
    // SAFETY: both are `size_of::<To>()` bytes, distinct locals; the caller vouches for the
    // bytes.
    unsafe {
        core::ptr::copy_nonoverlapping(
            (&raw const from).cast::<u8>(),
            to.as_mut_ptr().cast::<u8>(),
            core::mem::size_of::<To>(),
        );
        to.assume_init()
    }
}

/// `ld.shared` / `st.shared` of one register's width: (Rust type, PTX type, register class).
#[cfg(target_arch = "nvptx64")]
macro_rules! shared_access {
    ($($load:ident, $store:ident, $ty:ty, $ptx:literal, $reg:ident;)*) => {$(
        /// # Safety
        /// `address` is an in-bounds shared-space address, aligned to the width.
        #[inline(always)]
        unsafe fn $load(address: u32) -> $ty {
            let value: $ty;
            // SAFETY: the caller's contract; the load only reads shared memory.
            unsafe {
                core::arch::asm!(
                    concat!("ld.shared.", $ptx, " {v}, [{a}];"),
                    v = out($reg) value,
                    a = in(reg32) address,
                    options(pure, readonly, nostack, preserves_flags),
                );
            }
            value
        }

        /// # Safety
        /// `address` is an in-bounds shared-space address, aligned to the width.
        #[inline(always)]
        unsafe fn $store(address: u32, value: $ty) {
            // SAFETY: the caller's contract.
            unsafe {
                core::arch::asm!(
                    concat!("st.shared.", $ptx, " [{a}], {v};"),
                    a = in(reg32) address,
                    v = in($reg) value,
                    options(nostack, preserves_flags),
                );
            }
        }
    )*};
}

#[cfg(target_arch = "nvptx64")]
shared_access! {
    load_shared_u8, store_shared_u8, u16, "u8", reg16;
    load_shared_b16, store_shared_b16, u16, "b16", reg16;
    load_shared_b32, store_shared_b32, u32, "b32", reg32;
    load_shared_b64, store_shared_b64, u64, "b64", reg64;
}

/// `ld.shared.v4.b32`.
///
/// # Safety
/// `address` is an in-bounds, 16-byte aligned shared-space address.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
unsafe fn load_shared_b128(address: u32) -> [u32; 4] {
    let (x, y, z, w): (u32, u32, u32, u32);
    // SAFETY: the caller's contract; the load only reads shared memory.
    unsafe {
        core::arch::asm!(
            "ld.shared.v4.b32 {{{x}, {y}, {z}, {w}}}, [{a}];",
            x = out(reg32) x,
            y = out(reg32) y,
            z = out(reg32) z,
            w = out(reg32) w,
            a = in(reg32) address,
            options(pure, readonly, nostack, preserves_flags),
        );
    }
    [x, y, z, w]
}

/// `st.shared.v4.b32`.
///
/// # Safety
/// `address` is an in-bounds, 16-byte aligned shared-space address.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
unsafe fn store_shared_b128(address: u32, [x, y, z, w]: [u32; 4]) {
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!(
            "st.shared.v4.b32 [{a}], {{{x}, {y}, {z}, {w}}};",
            a = in(reg32) address,
            x = in(reg32) x,
            y = in(reg32) y,
            z = in(reg32) z,
            w = in(reg32) w,
            options(nostack, preserves_flags),
        );
    }
}

impl<T: Copy> SharedArray<T> {
    /// Wraps the shared-space address of an array of `len` elements (`None`: dynamic), 16-byte
    /// aligned (see [`shared!`]).
    #[doc(hidden)]
    #[inline(always)]
    pub const fn from_shared_address(base: u32, len: Option<u32>) -> Self {
        Self { base, len, element: core::marker::PhantomData }
    }

    /// The number of elements of a static array ([`shared!`]); `None` for dynamic shared memory,
    /// whose size the launch sets.
    #[inline(always)]
    #[allow(clippy::len_without_is_empty)]
    pub const fn len(self) -> Option<u32> {
        self.len
    }

    /// The shared-space byte address of element 0 (for inline PTX).
    #[inline(always)]
    pub const fn shared_address(self) -> u32 {
        self.base
    }

    /// A generic pointer to element 0 (`cvta.shared.u64`), as [`shared_array!`] yields, for
    /// code that takes `*mut T`. Accesses through it are generic (`ld`, not `ld.shared`).
    #[inline(always)]
    pub fn as_mut_ptr(self) -> *mut T {
        on_gpu!("SharedArray::as_mut_ptr", {
            let pointer: *mut T;
            // SAFETY: converts an address between state spaces; no memory is touched.
            unsafe {
                core::arch::asm!(
                    "cvta.shared.u64 {p}, {a};",
                    p = out(reg64) pointer,
                    a = in(reg64) u64::from(self.base),
                    options(pure, nomem, nostack, preserves_flags),
                );
            }
            pointer
        })
    }

    /// The shared-space byte address of element `index`.
    #[inline(always)]
    fn address(self, index: u32) -> u32 {
        self.base + index * core::mem::size_of::<T>() as u32
    }

    /// Element `index` (`ld.shared.b32` for a 4-byte `T`, `.v4.b32` for 16 bytes, ...; other
    /// sizes by 4-, 2- or 1-byte pieces).
    ///
    /// # Safety
    /// `index` must lie inside the array; the element must hold a `T` written earlier (shared
    /// memory starts undefined), and another thread's write to it must be separated from this
    /// read by a barrier.
    #[inline(always)]
    pub unsafe fn load(self, index: u32) -> T {
        on_gpu!("SharedArray::load", {
            let address = self.address(index);
            // SAFETY: the caller keeps `index` in bounds and the element initialised; the array
            // is 16-byte aligned and element `index` starts at a multiple of its size, so each
            // width's address is aligned to it; each arm runs only where the sizes match.
            unsafe {
                match core::mem::size_of::<T>() {
                    1 => same_size_cast(load_shared_u8(address) as u8),
                    2 => same_size_cast(load_shared_b16(address)),
                    4 => same_size_cast(load_shared_b32(address)),
                    8 => same_size_cast(load_shared_b64(address)),
                    16 => same_size_cast(load_shared_b128(address)),
                    size => {
                        let mut value = core::mem::MaybeUninit::<T>::uninit();
                        let bytes = value.as_mut_ptr().cast::<u8>();
                        if size % 4 == 0 {
                            for i in (0..size).step_by(4) {
                                let piece = load_shared_b32(address + i as u32);
                                bytes.add(i).cast::<u32>().write_unaligned(piece);
                            }
                        } else if size % 2 == 0 {
                            for i in (0..size).step_by(2) {
                                let piece = load_shared_b16(address + i as u32);
                                bytes.add(i).cast::<u16>().write_unaligned(piece);
                            }
                        } else {
                            for i in 0..size {
                                *bytes.add(i) = load_shared_u8(address + i as u32) as u8;
                            }
                        }
                        value.assume_init()
                    }
                }
            }
        })
    }

    /// Writes element `index` (the widths of [`load`](Self::load)). `T: NoUninit` (no padding
    /// bytes): its bytes go through integer registers.
    ///
    /// # Safety
    /// `index` must lie inside the array; another thread's access to the element must be
    /// separated from this write by a barrier.
    #[inline(always)]
    pub unsafe fn store(self, index: u32, value: T)
    where
        T: bytemuck::NoUninit,
    {
        on_gpu!("SharedArray::store", {
            let address = self.address(index);
            // SAFETY: as in `load`; `T: NoUninit`, so every byte of `value` is initialised and
            // may be read as an integer.
            unsafe {
                match core::mem::size_of::<T>() {
                    1 => store_shared_u8(address, same_size_cast::<T, u8>(value) as u16),
                    2 => store_shared_b16(address, same_size_cast(value)),
                    4 => store_shared_b32(address, same_size_cast(value)),
                    8 => store_shared_b64(address, same_size_cast(value)),
                    16 => store_shared_b128(address, same_size_cast(value)),
                    size => {
                        let bytes = (&raw const value).cast::<u8>();
                        if size % 4 == 0 {
                            for i in (0..size).step_by(4) {
                                let piece = bytes.add(i).cast::<u32>().read_unaligned();
                                store_shared_b32(address + i as u32, piece);
                            }
                        } else if size % 2 == 0 {
                            for i in (0..size).step_by(2) {
                                let piece = bytes.add(i).cast::<u16>().read_unaligned();
                                store_shared_b16(address + i as u32, piece);
                            }
                        } else {
                            for i in 0..size {
                                store_shared_u8(address + i as u32, *bytes.add(i) as u16);
                            }
                        }
                    }
                }
            }
        })
    }
}

/// `load2`/`store2` (and `load4`/`store4`) of a [`SharedArray`] of scalars as the vector types:
/// (element, PTX type, register class, 2-lane vector[, 4-lane vector]).
macro_rules! shared_vectors {
    (@two $elem:ty, $ptx:literal, $reg:ident, $x2:ident) => {
        impl SharedArray<$elem> {
            #[doc = concat!("Elements `index` and `index + 1` in one access (`ld.shared.v2.", $ptx, "`).")]
            ///
            /// # Safety
            /// As [`load`](Self::load), for both elements; `index` must be even.
            #[inline(always)]
            pub unsafe fn load2(self, index: u32) -> $x2 {
                on_gpu!("SharedArray::load2", {
                    let (x, y);
                    // SAFETY: the caller's contract; `index` even keeps the address aligned.
                    unsafe {
                        core::arch::asm!(
                            concat!("ld.shared.v2.", $ptx, " {{{x}, {y}}}, [{a}];"),
                            x = out($reg) x,
                            y = out($reg) y,
                            a = in(reg32) self.address(index),
                            options(pure, readonly, nostack, preserves_flags),
                        );
                    }
                    $x2::new(x, y)
                })
            }

            #[doc = concat!("Writes elements `index` and `index + 1` in one access (`st.shared.v2.", $ptx, "`).")]
            ///
            /// # Safety
            /// As [`store`](Self::store), for both elements; `index` must be even.
            #[inline(always)]
            pub unsafe fn store2(self, index: u32, value: $x2) {
                on_gpu!("SharedArray::store2", {
                    let [x, y] = value.0;
                    // SAFETY: the caller's contract; `index` even keeps the address aligned.
                    unsafe {
                        core::arch::asm!(
                            concat!("st.shared.v2.", $ptx, " [{a}], {{{x}, {y}}};"),
                            a = in(reg32) self.address(index),
                            x = in($reg) x,
                            y = in($reg) y,
                            options(nostack, preserves_flags),
                        );
                    }
                })
            }
        }
    };
    (@four $elem:ty, $ptx:literal, $reg:ident, $x4:ident) => {
        impl SharedArray<$elem> {
            #[doc = concat!("Elements `index .. index + 4` in one access (`ld.shared.v4.", $ptx, "`).")]
            ///
            /// # Safety
            /// As [`load`](Self::load), for all four elements; `index` must be a multiple of 4.
            #[inline(always)]
            pub unsafe fn load4(self, index: u32) -> $x4 {
                on_gpu!("SharedArray::load4", {
                    let (x, y, z, w);
                    // SAFETY: the caller's contract; `index` a multiple of 4 keeps the address
                    // 16-byte aligned.
                    unsafe {
                        core::arch::asm!(
                            concat!("ld.shared.v4.", $ptx, " {{{x}, {y}, {z}, {w}}}, [{a}];"),
                            x = out($reg) x,
                            y = out($reg) y,
                            z = out($reg) z,
                            w = out($reg) w,
                            a = in(reg32) self.address(index),
                            options(pure, readonly, nostack, preserves_flags),
                        );
                    }
                    $x4::new(x, y, z, w)
                })
            }

            #[doc = concat!("Writes elements `index .. index + 4` in one access (`st.shared.v4.", $ptx, "`).")]
            ///
            /// # Safety
            /// As [`store`](Self::store), for all four elements; `index` must be a multiple of 4.
            #[inline(always)]
            pub unsafe fn store4(self, index: u32, value: $x4) {
                on_gpu!("SharedArray::store4", {
                    let [x, y, z, w] = value.0;
                    // SAFETY: the caller's contract; `index` a multiple of 4 keeps the address
                    // 16-byte aligned.
                    unsafe {
                        core::arch::asm!(
                            concat!("st.shared.v4.", $ptx, " [{a}], {{{x}, {y}, {z}, {w}}};"),
                            a = in(reg32) self.address(index),
                            x = in($reg) x,
                            y = in($reg) y,
                            z = in($reg) z,
                            w = in($reg) w,
                            options(nostack, preserves_flags),
                        );
                    }
                })
            }
        }
    };
}

shared_vectors!(@two f32, "f32", reg32, F32x2);
shared_vectors!(@four f32, "f32", reg32, F32x4);
shared_vectors!(@two u32, "u32", reg32, U32x2);
shared_vectors!(@four u32, "u32", reg32, U32x4);
shared_vectors!(@two i32, "s32", reg32, I32x2);
shared_vectors!(@four i32, "s32", reg32, I32x4);
shared_vectors!(@two f64, "f64", reg64, F64x2);
shared_vectors!(@two u64, "u64", reg64, U64x2);
shared_vectors!(@two i64, "s64", reg64, I64x2);

/// The atomics of a [`SharedArray`] (`atom.shared`, returning the old value), one per family
/// of [`atomic`](crate::atomic): (method, trait, trait method, CUDA C, effect).
macro_rules! shared_atomics {
    ($($name:ident, $Trait:ident, $method:ident, $cuda:literal, $effect:literal;)*) => {
        impl<T: Copy> SharedArray<T> {
            $(
                #[doc = concat!("`", $effect, "` on element `index` atomically, returning the old \
                    value (`atom.shared`, CUDA C's `", $cuda, "` on a `__shared__` address). \
                    For the types of [`atomic::", stringify!($Trait), "`](crate::atomic::",
                    stringify!($Trait), ").")]
                ///
                /// # Safety
                /// `index` must lie inside the array; other threads may access the element only
                /// atomically meanwhile.
                #[inline(always)]
                pub unsafe fn $name(self, index: u32, value: T) -> T
                where
                    T: crate::atomic::$Trait,
                {
                    // SAFETY: the caller keeps `index` in bounds; the element is aligned (see
                    // `load`).
                    unsafe { T::$method(self.address(index), value) }
                }
            )*

            /// `element -= value` atomically, returning the old value: [`fetch_add`](Self::fetch_add)
            /// of the negation (CUDA C's `atomicSub` on a `__shared__` address).
            ///
            /// # Safety
            /// As [`fetch_add`](Self::fetch_add).
            #[inline(always)]
            pub unsafe fn fetch_sub(self, index: u32, value: T) -> T
            where
                T: crate::atomic::AtomicSub,
            {
                // SAFETY: the caller's contract.
                unsafe { self.fetch_add(index, value.negated()) }
            }

            /// Compare-and-swap on element `index`: `if element == expected { element = new }`
            /// atomically, returning the old value (`atom.shared.cas`, CUDA C's `atomicCAS` on a
            /// `__shared__` address).
            ///
            /// # Safety
            /// `index` must lie inside the array; other threads may access the element only
            /// atomically meanwhile.
            #[inline(always)]
            pub unsafe fn compare_exchange(self, index: u32, expected: T, new: T) -> T
            where
                T: crate::atomic::AtomicCompareExchange,
            {
                // SAFETY: the caller keeps `index` in bounds; the element is aligned.
                unsafe { T::compare_exchange_shared(self.address(index), expected, new) }
            }
        }
    };
}

shared_atomics! {
    fetch_add, AtomicAdd, fetch_shared, "atomicAdd", "element += value";
    fetch_min, AtomicMin, fetch_shared, "atomicMin", "element = min(element, value)";
    fetch_max, AtomicMax, fetch_shared, "atomicMax", "element = max(element, value)";
    fetch_inc, AtomicInc, fetch_shared, "atomicInc",
        "element = if element >= value { 0 } else { element + 1 }";
    fetch_dec, AtomicDec, fetch_shared, "atomicDec",
        "element = if element == 0 || element > value { value } else { element - 1 }";
    fetch_and, AtomicAnd, fetch_shared, "atomicAnd", "element &= value";
    fetch_or, AtomicOr, fetch_shared, "atomicOr", "element |= value";
    fetch_xor, AtomicXor, fetch_shared, "atomicXor", "element ^= value";
    exchange, AtomicExchange, exchange_shared, "atomicExch", "element = value";
}
