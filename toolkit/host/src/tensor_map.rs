//! TMA descriptors built on the host (`cuTensorMapEncodeTiled`) from a typed description, and
//! passed to a kernel's `*const TensorMap<T>` parameter (`ptxkit_device::tma`).
//!
//! ```ignore
//! // A row-major `height × width` f32 array, copied in 32 × 32 boxes.
//! let map = gpu.tensor_map(&input, TensorMapSpec::packed([width, height], [32, 32]))?;
//! gpu.launch(my_kernels::tile_kernel, cfg, (&map, ...))?;
//! ```
//!
//! The map lives in device memory (the kernel reads it by pointer; `ptxkit_device::tma` says
//! why not by value) and holds the buffer's address: [`DeviceTensorMap`] borrows the buffer, so
//! the buffer outlives the map. Accesses through the map are not tracked by cudarc's
//! per-buffer events: order them on one stream (as `Gpu` does, which turns that tracking off).

use std::marker::PhantomData;

use crate::{Context as _, Error, Gpu, KernelArg, Result, StagedBuffer, launch::stage_read};
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DeviceRepr, sys};
use ptxkit_device::half::{BF16, F16};
use ptxkit_device::tma::TensorMap;

/// An element type TMA moves, with the driver's name for it.
pub trait TmaElement: DeviceRepr {
    /// `cuTensorMapEncodeTiled`'s data type.
    const DATA_TYPE: sys::CUtensorMapDataType;
}

macro_rules! tma_elements {
    ($($ty:ty => $kind:ident),* $(,)?) => {
        $(impl TmaElement for $ty {
            const DATA_TYPE: sys::CUtensorMapDataType = sys::CUtensorMapDataType::$kind;
        })*
    };
}
tma_elements!(
    u8 => CU_TENSOR_MAP_DATA_TYPE_UINT8,
    u16 => CU_TENSOR_MAP_DATA_TYPE_UINT16,
    u32 => CU_TENSOR_MAP_DATA_TYPE_UINT32,
    i32 => CU_TENSOR_MAP_DATA_TYPE_INT32,
    u64 => CU_TENSOR_MAP_DATA_TYPE_UINT64,
    i64 => CU_TENSOR_MAP_DATA_TYPE_INT64,
    F16 => CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
    f32 => CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
    f64 => CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
    BF16 => CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
);

/// How TMA lays a box's rows out in shared memory (`CUtensorMapSwizzle`): densely, or with the
/// 16-byte chunks of each row permuted within 32-, 64- or 128-byte spans, as `wgmma`'s swizzled
/// layouts expect (`ptxkit_device::wgmma::SharedDescriptor::k_major_swizzle_128`, `_64`, `_32`), so that
/// reading a column of the box touches different banks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TmaSwizzle {
    /// Rows densely packed.
    #[default]
    None,
    /// 32-byte swizzle.
    B32,
    /// 64-byte swizzle.
    B64,
    /// 128-byte swizzle (rows of at most 128 bytes; the destination 1024-byte aligned).
    B128,
}

impl TmaSwizzle {
    /// The span the chunks are permuted within, in bytes (0: none).
    pub const fn bytes(self) -> u64 {
        match self {
            Self::None => 0,
            Self::B32 => 32,
            Self::B64 => 64,
            Self::B128 => 128,
        }
    }

    fn driver(self) -> sys::CUtensorMapSwizzle {
        match self {
            Self::None => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
            Self::B32 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_32B,
            Self::B64 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_64B,
            Self::B128 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
        }
    }
}

/// A tiled tensor map's description: an array of rank `R` (1 to 5; dimension 0 innermost) and
/// the box one copy moves. Elements outside the array read as zeros and are not written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorMapSpec<const R: usize> {
    /// The array's size in elements along each dimension, innermost first.
    pub dims: [u64; R],
    /// The bytes from one element to the next along each dimension, innermost first
    /// (`strides[0]` is the element's size; the others multiples of 16).
    pub strides: Option<[u64; R]>,
    /// The box's size in elements along each dimension (1 to 256 each; the innermost times the
    /// element's size a multiple of 16 bytes).
    pub box_dims: [u32; R],
    /// The box's layout in shared memory.
    pub swizzle: TmaSwizzle,
}

impl<const R: usize> TensorMapSpec<R> {
    /// A densely packed array (`dims[0]` elements per row, rows one after another, ...).
    pub fn packed(dims: [u64; R], box_dims: [u32; R]) -> Self {
        Self { dims, strides: None, box_dims, swizzle: TmaSwizzle::None }
    }

    /// The same map with the box's rows swizzled in shared memory (the innermost box
    /// dimension at most the swizzle's span in bytes).
    pub fn with_swizzle(self, swizzle: TmaSwizzle) -> Self {
        Self { swizzle, ..self }
    }

    /// The same array with rows (and planes, ...) `strides` bytes apart (`strides[0]`: the
    /// element's size), e.g. a pitched allocation.
    pub fn with_strides(self, strides: [u64; R]) -> Self {
        Self { strides: Some(strides), ..self }
    }

    /// The byte strides of every dimension, checked against TMA's rules for elements of
    /// `element` bytes, and the bytes the array spans; or the first rule broken, in words.
    pub fn checked(&self, element: u64) -> std::result::Result<([u64; R], u64), String> {
        if R == 0 || R > 5 {
            return Err(format!("a tensor map has rank 1 to 5, not {R}"));
        }
        let strides = match self.strides {
            Some(strides) => strides,
            None => {
                let mut strides = [element; R];
                for d in 1..R {
                    strides[d] =
                        strides[d - 1].checked_mul(self.dims[d - 1]).ok_or("the array's size overflows")?;
                }
                strides
            }
        };
        if strides[0] != element {
            return Err(format!("the innermost stride is {} bytes, not the element's {element}", strides[0]));
        }
        for d in 0..R {
            if self.dims[d] == 0 || self.dims[d] > 1 << 32 {
                return Err(format!("dimension {d} has {} elements; TMA takes 1 to 2^32", self.dims[d]));
            }
            if self.box_dims[d] == 0 || self.box_dims[d] > 256 {
                return Err(format!("the box's dimension {d} is {}; TMA takes 1 to 256", self.box_dims[d]));
            }
            if d > 0 && (!strides[d].is_multiple_of(16) || strides[d] >= 1 << 40) {
                return Err(format!(
                    "dimension {d}'s stride is {} bytes; TMA needs a multiple of 16 below 2^40 \
                     (pad the rows, e.g. a width that is a multiple of {})",
                    strides[d],
                    16 / element.max(1)
                ));
            }
        }
        let inner = u64::from(self.box_dims[0]) * element;
        if !inner.is_multiple_of(16) {
            return Err(format!("the box's rows are {inner} bytes; TMA needs a multiple of 16"));
        }
        if self.swizzle != TmaSwizzle::None && inner > self.swizzle.bytes() {
            return Err(format!(
                "the box's rows are {inner} bytes, more than the {}-byte swizzle's span",
                self.swizzle.bytes()
            ));
        }
        let span = (0..R).try_fold(element, |end, d| {
            (self.dims[d] - 1).checked_mul(strides[d]).and_then(|extent| end.checked_add(extent))
        });
        let span = span.ok_or("the array's size overflows")?;
        Ok((strides, span))
    }
}

/// A tensor map in device memory for a kernel's `*const TensorMap<T>` parameter, borrowing the
/// buffer it describes.
pub struct DeviceTensorMap<'b, T> {
    map: CudaSlice<TensorMap<T>>,
    buffer: PhantomData<&'b CudaSlice<T>>,
}

impl<T> DeviceTensorMap<'_, T> {
    /// The encoded map (its 128 bytes, as the driver wrote them).
    pub fn device(&self) -> &CudaSlice<TensorMap<T>> {
        &self.map
    }
}

impl<T> KernelArg<*const TensorMap<T>> for &DeviceTensorMap<'_, T> {
    type Staged<'s>
        = StagedBuffer<'s, 1>
    where
        Self: 's;
    fn stage<'s>(&'s mut self, stream: &'s CudaStream) -> Self::Staged<'s> {
        let (pointer, _, sync) = stage_read(&self.map, stream);
        StagedBuffer::new([pointer], sync)
    }
}

impl Gpu {
    /// Encodes a tiled tensor map of `buffer` as `spec` describes it (`cuTensorMapEncodeTiled`:
    /// no interleave, `spec`'s swizzle, L2 promotion of 128 bytes, zeros outside the array) and copies
    /// it to the GPU. Refused with [`Error::InvalidLaunch`] where `spec` breaks a TMA rule (the
    /// message says which) or spans more than `buffer`.
    pub fn tensor_map<'b, T: TmaElement, const R: usize>(
        &self,
        buffer: &'b CudaSlice<T>,
        spec: TensorMapSpec<R>,
    ) -> Result<DeviceTensorMap<'b, T>> {
        let element = std::mem::size_of::<T>() as u64;
        let invalid = |why: String| Error::InvalidLaunch(format!("tensor map {spec:?}: {why}"));
        let (strides, span) = spec.checked(element).map_err(invalid)?;
        let bytes = buffer.len() as u64 * element;
        if span > bytes {
            return Err(invalid(format!("the array spans {span} bytes, the buffer holds {bytes}")));
        }
        let (address, _sync) = buffer.device_ptr(self.stream());
        let element_strides = [1u32; R];
        let mut encoded = sys::CUtensorMap { opaque: [0; 16] };
        // SAFETY: every pointer is to an array of `R` (or `R - 1` strides: the driver reads
        // ranks above the innermost) valid values checked above; `encoded` is a 64-byte aligned
        // 128-byte map the call writes; the address is the buffer's, which holds the span.
        unsafe {
            sys::cuTensorMapEncodeTiled(
                &mut encoded,
                T::DATA_TYPE,
                R as u32,
                address as *mut std::ffi::c_void,
                spec.dims.as_ptr(),
                strides[1..].as_ptr(),
                spec.box_dims.as_ptr(),
                element_strides.as_ptr(),
                sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
                spec.swizzle.driver(),
                sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
            )
            .result()
        }
        .context(|| format!("encoding the tensor map {spec:?}"))?;
        let map = TensorMap::<T>::from_encoded(encoded.opaque);
        let map = self.stream().clone_htod(&[map]).context(|| "copying a tensor map to the GPU".into())?;
        Ok(DeviceTensorMap { map, buffer: PhantomData })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packed_map_has_the_strides_of_its_rows_and_spans_the_array() {
        let spec = TensorMapSpec::packed([36, 10], [32, 32]);
        assert_eq!(spec.checked(4), Ok(([4, 144], 1440)));
        let spec = TensorMapSpec::packed([8, 3, 2], [8, 1, 1]);
        assert_eq!(spec.checked(2), Ok(([2, 16, 48], 96)));
    }

    #[test]
    fn a_map_that_breaks_a_tma_rule_is_refused_in_words() {
        let error = |spec: TensorMapSpec<2>| spec.checked(4).unwrap_err();
        assert!(error(TensorMapSpec::packed([33, 4], [32, 4])).contains("stride is 132 bytes"));
        assert!(error(TensorMapSpec::packed([32, 4], [3, 4])).contains("rows are 12 bytes"));
        assert!(error(TensorMapSpec::packed([32, 4], [32, 300])).contains("1 to 256"));
        assert!(error(TensorMapSpec::packed([0, 4], [4, 4])).contains("1 to 2^32"));
        assert!(error(TensorMapSpec::packed([32, 4], [32, 4]).with_strides([8, 128])).contains("innermost"));
        assert!(TensorMapSpec::packed([], []).checked(4).unwrap_err().contains("rank 1 to 5"));
        let swizzled = TensorMapSpec::packed([128, 64], [64, 64]).with_swizzle(TmaSwizzle::B128);
        assert!(swizzled.checked(2).is_ok());
        assert!(swizzled.checked(4).unwrap_err().contains("more than the 128-byte swizzle's span"));
    }
}
