//! Vector types (2- and 4-wide) for 8- and 16-byte loads and stores: CUDA C's `float2`,
//! `float4`, `uint4`, `double2`, ... Named as cuda-oxide's `vector` module names them
//! (`F32x4` is `float4`).
//!
//! Each is `#[repr(C)]` over its lanes, aligned to its size, so that one value moves in one
//! memory transaction (`ld.global.v4.f32`, see [`memory::load_vector`](crate::memory::load_vector)
//! and [`SharedArray::load4`](crate::SharedArray::load4)). They are `bytemuck::Pod`, and with
//! this crate's `host` feature (which `ptxkit-host` enables) cudarc's `DeviceRepr` and
//! `ValidAsZeroBits`: a host allocates a `CudaSlice<F32x4>` (`alloc_zeros`, `clone_htod`) and
//! passes it for a kernel's `*const F32x4` parameter.

/// A group of `LANES` values of `Elem`, moved in one memory transaction.
///
/// # Safety
/// An implementor is `#[repr(C)]`, holds exactly `LANES` values of `Elem` and nothing else, and
/// is aligned to its size (`size_of::<Elem>() * LANES`). Only this module's types implement it.
pub unsafe trait Vector: Copy + bytemuck::Pod {
    /// The type of each lane.
    type Elem: Copy;
    /// The number of lanes.
    const LANES: usize;
}

/// Implements cudarc's `DeviceRepr` and `ValidAsZeroBits` for plain-data types of this crate
/// in host builds with the `host` feature (the orphan rule keeps an application from doing it).
/// For the vector types here and the half types of [`half`](crate::half):
/// `crate::vector::host_device_repr!(F16, Bf16);`.
macro_rules! host_device_repr {
    ($($ty:ty),* $(,)?) => {
        $(
            // SAFETY: the type is `bytemuck::Pod` (plain data, no padding, no pointers), so its
            // host bytes are a valid device value, and all-zero bytes are a valid value.
            #[cfg(all(feature = "host", not(target_arch = "nvptx64")))]
            unsafe impl cudarc::driver::DeviceRepr for $ty {}
            // SAFETY: as above: every bit pattern, all zeros included, is a valid value.
            #[cfg(all(feature = "host", not(target_arch = "nvptx64")))]
            unsafe impl cudarc::driver::ValidAsZeroBits for $ty {}
        )*
    };
}
// Used by `half` (the 16-bit float types), kept in one place.
#[allow(unused_imports)]
pub(crate) use host_device_repr;

/// Defines one vector type: the struct, [`Vector`], constructors and the host impls.
macro_rules! vector_type {
    ($(#[$doc:meta])* $name:ident, $elem:ty, $align:literal, [$($lane:ident),+]) => {
        $(#[$doc])*
        #[repr(C, align($align))]
        #[derive(Clone, Copy, Debug, PartialEq, Default, bytemuck::Pod, bytemuck::Zeroable)]
        pub struct $name(pub [$elem; vector_type!(@count $($lane)+)]);

        // SAFETY: `repr(C)` over exactly `LANES` values of `$elem`, aligned to its size (the
        // `const` assertion below).
        unsafe impl Vector for $name {
            type Elem = $elem;
            const LANES: usize = vector_type!(@count $($lane)+);
        }

        const _: () = assert!(
            core::mem::size_of::<$name>() == $align && core::mem::align_of::<$name>() == $align
        );

        impl $name {
            /// A vector of these lanes, first to last (CUDA C's `make_…`).
            #[inline(always)]
            #[must_use]
            pub const fn new($($lane: $elem),+) -> Self {
                Self([$($lane),+])
            }

            /// A vector of these lanes.
            #[inline(always)]
            #[must_use]
            pub const fn from_array(lanes: [$elem; vector_type!(@count $($lane)+)]) -> Self {
                Self(lanes)
            }

            /// Every lane `value`.
            #[inline(always)]
            #[must_use]
            pub const fn splat(value: $elem) -> Self {
                Self([value; vector_type!(@count $($lane)+)])
            }

            /// The lanes, first to last.
            #[inline(always)]
            #[must_use]
            pub const fn to_array(self) -> [$elem; vector_type!(@count $($lane)+)] {
                self.0
            }
        }

        impl From<[$elem; vector_type!(@count $($lane)+)]> for $name {
            #[inline(always)]
            fn from(lanes: [$elem; vector_type!(@count $($lane)+)]) -> Self {
                Self(lanes)
            }
        }

        impl From<$name> for [$elem; vector_type!(@count $($lane)+)] {
            #[inline(always)]
            fn from(vector: $name) -> Self {
                vector.0
            }
        }

        host_device_repr!($name);
    };
    (@count $a:ident $b:ident) => { 2 };
    (@count $a:ident $b:ident $c:ident $d:ident) => { 4 };
}

vector_type!(
    /// Two `f32` in 8 bytes: CUDA C's `float2`.
    F32x2,
    f32,
    8,
    [x, y]
);
vector_type!(
    /// Four `f32` in 16 bytes: CUDA C's `float4`.
    F32x4,
    f32,
    16,
    [x, y, z, w]
);
vector_type!(
    /// Two `u32` in 8 bytes: CUDA C's `uint2`.
    U32x2,
    u32,
    8,
    [x, y]
);
vector_type!(
    /// Four `u32` in 16 bytes: CUDA C's `uint4`.
    U32x4,
    u32,
    16,
    [x, y, z, w]
);
vector_type!(
    /// Two `i32` in 8 bytes: CUDA C's `int2`.
    I32x2,
    i32,
    8,
    [x, y]
);
vector_type!(
    /// Four `i32` in 16 bytes: CUDA C's `int4`.
    I32x4,
    i32,
    16,
    [x, y, z, w]
);
vector_type!(
    /// Two `f64` in 16 bytes: CUDA C's `double2`.
    F64x2,
    f64,
    16,
    [x, y]
);
vector_type!(
    /// Two `u64` in 16 bytes: CUDA C's `ulonglong2`.
    U64x2,
    u64,
    16,
    [x, y]
);
vector_type!(
    /// Two `i64` in 16 bytes: CUDA C's `longlong2`.
    I64x2,
    i64,
    16,
    [x, y]
);
