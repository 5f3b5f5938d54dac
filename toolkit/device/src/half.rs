//! 16-bit floating-point storage types (`f16`, `bf16`) and their conversions.
//!
//! [`F16`] (IEEE binary16, CUDA's `__half`) and [`BF16`] (bfloat16, CUDA's
//! `__nv_bfloat16`) hold the 16 bits of a value: kernels load and store them, convert to `f32`
//! to compute, and back. They are `Pod`, so the host fills buffers of them; the conversions
//! work on both sides: on the GPU they are the hardware's (`cvt.rn.f16.f32`, `cvt.f32.f16`,
//! `cvt.rn.bf16.f32` from sm_80 on), on the host (and for bf16 before sm_80) the same
//! round-to-nearest-even in software, correct for NaN, infinities and subnormals.
//! [`F16x2`] is two halves in one 32-bit register, with the paired arithmetic of sm_53 on
//! (`add.rn.f16x2`, `mul.rn.f16x2`, `fma.rn.f16x2`), on the GPU only.

use bytemuck::{Pod, Zeroable};

/// An IEEE 754 binary16 value (CUDA's `__half`): 1 sign, 5 exponent and 10 fraction bits;
/// largest finite 65504, smallest normal 2^-14, smallest subnormal 2^-24.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Pod, Zeroable)]
pub struct F16(u16);

/// A bfloat16 value (CUDA's `__nv_bfloat16`): `f32`'s sign and 8 exponent bits with 7
/// fraction bits, i.e. the upper half of an `f32`.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Pod, Zeroable)]
pub struct BF16(u16);

impl F16 {
    /// +0.
    pub const ZERO: Self = Self(0);
    /// 1.
    pub const ONE: Self = Self(0x3c00);
    /// +∞.
    pub const INFINITY: Self = Self(0x7c00);
    /// The largest finite value, 65504.
    pub const MAX: Self = Self(0x7bff);

    /// The value with these bits.
    pub const fn from_bits(bits: u16) -> Self {
        Self(bits)
    }

    /// The value's bits.
    pub const fn to_bits(self) -> u16 {
        self.0
    }

    /// `x` rounded to the nearest `F16`, ties to even (CUDA's `__float2half_rn`): beyond
    /// 65520 in magnitude ∞, NaN stays NaN. On the GPU `cvt.rn.f16.f32`.
    #[inline(always)]
    pub fn from_f32(x: f32) -> Self {
        #[cfg(target_arch = "nvptx64")]
        {
            let bits: u16;
            // SAFETY: a conversion between registers: no memory, no traps.
            unsafe {
                core::arch::asm!(
                    "cvt.rn.f16.f32 {h}, {x};",
                    h = out(reg16) bits,
                    x = in(reg32) x,
                    options(pure, nomem, nostack, preserves_flags),
                )
            };
            Self(bits)
        }
        #[cfg(not(target_arch = "nvptx64"))]
        Self(f32_to_f16_bits(x))
    }

    /// The value as an `f32` (exact; CUDA's `__half2float`). On the GPU `cvt.f32.f16`.
    #[inline(always)]
    pub fn to_f32(self) -> f32 {
        #[cfg(target_arch = "nvptx64")]
        {
            let value: f32;
            // SAFETY: a conversion between registers: no memory, no traps.
            unsafe {
                core::arch::asm!(
                    "cvt.f32.f16 {x}, {h};",
                    x = out(reg32) value,
                    h = in(reg16) self.0,
                    options(pure, nomem, nostack, preserves_flags),
                )
            };
            value
        }
        #[cfg(not(target_arch = "nvptx64"))]
        f16_bits_to_f32(self.0)
    }

    /// Whether the value is a NaN.
    pub const fn is_nan(self) -> bool {
        self.0 & 0x7c00 == 0x7c00 && self.0 & 0x03ff != 0
    }
}

impl BF16 {
    /// +0.
    pub const ZERO: Self = Self(0);
    /// 1.
    pub const ONE: Self = Self(0x3f80);
    /// +∞.
    pub const INFINITY: Self = Self(0x7f80);

    /// The value with these bits.
    pub const fn from_bits(bits: u16) -> Self {
        Self(bits)
    }

    /// The value's bits.
    pub const fn to_bits(self) -> u16 {
        self.0
    }

    /// `x` rounded to the nearest `BF16`, ties to even (CUDA's `__float2bfloat16_rn`); NaN
    /// stays NaN. On the GPU `cvt.rn.bf16.f32` from sm_80 on, before it the same rounding in
    /// integer instructions.
    #[inline(always)]
    pub fn from_f32(x: f32) -> Self {
        #[cfg(all(target_arch = "nvptx64", target_feature = "sm_80"))]
        {
            let bits: u16;
            // SAFETY: a conversion between registers: no memory, no traps.
            unsafe {
                core::arch::asm!(
                    "cvt.rn.bf16.f32 {h}, {x};",
                    h = out(reg16) bits,
                    x = in(reg32) x,
                    options(pure, nomem, nostack, preserves_flags),
                )
            };
            Self(bits)
        }
        #[cfg(not(all(target_arch = "nvptx64", target_feature = "sm_80")))]
        Self(f32_to_bf16_bits(x))
    }

    /// The value as an `f32` (exact: the bits moved to the upper half; CUDA's
    /// `__bfloat162float`).
    #[inline(always)]
    pub fn to_f32(self) -> f32 {
        f32::from_bits(u32::from(self.0) << 16)
    }

    /// Whether the value is a NaN.
    pub const fn is_nan(self) -> bool {
        self.0 & 0x7f80 == 0x7f80 && self.0 & 0x007f != 0
    }
}

impl From<F16> for f32 {
    fn from(value: F16) -> f32 {
        value.to_f32()
    }
}

impl From<BF16> for f32 {
    fn from(value: BF16) -> f32 {
        value.to_f32()
    }
}

/// The bits of `x` rounded to binary16, ties to even: the host's conversion (and the
/// reference the GPU's is checked against).
pub const fn f32_to_f16_bits(x: f32) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exponent = ((bits >> 23) & 0xff) as i32;
    let fraction = bits & 0x007f_ffff;
    if exponent == 0xff {
        // ∞ stays ∞; a NaN stays a (quiet) NaN with the top of its payload.
        return if fraction == 0 { sign | 0x7c00 } else { sign | 0x7e00 | (fraction >> 13) as u16 };
    }
    let half_exponent = exponent - 127 + 15;
    if half_exponent >= 0x1f {
        return sign | 0x7c00;
    }
    if half_exponent <= 0 {
        // A subnormal half (or zero): below half the smallest subnormal everything rounds to 0.
        if half_exponent < -10 {
            return sign;
        }
        let significand = fraction | 0x0080_0000;
        let shift = (14 - half_exponent) as u32;
        let kept = significand >> shift;
        let dropped = significand & ((1 << shift) - 1);
        let halfway = 1 << (shift - 1);
        let round_up = dropped > halfway || (dropped == halfway && kept & 1 == 1);
        // A carry into the exponent field makes the smallest normal, as it should.
        return sign | (kept + round_up as u32) as u16;
    }
    let kept = ((half_exponent as u32) << 10) | (fraction >> 13);
    let dropped = fraction & 0x1fff;
    let round_up = dropped > 0x1000 || (dropped == 0x1000 && kept & 1 == 1);
    // A carry out of the largest finite value makes ∞, as it should.
    sign | (kept + round_up as u32) as u16
}

/// The `f32` of binary16 bits (exact): the host's conversion.
pub const fn f16_bits_to_f32(half: u16) -> f32 {
    let sign = ((half & 0x8000) as u32) << 16;
    let exponent = ((half >> 10) & 0x1f) as u32;
    let fraction = (half & 0x03ff) as u32;
    let bits = if exponent == 0x1f {
        // ∞, or a NaN with its payload (the quiet bit moves from bit 9 to bit 22).
        sign | 0x7f80_0000 | (fraction << 13)
    } else if exponent == 0 {
        if fraction == 0 {
            sign
        } else {
            // fraction · 2^-24: normalise so that its leading 1 becomes the implicit bit.
            let shift = fraction.leading_zeros() - 21;
            sign | ((113 - shift) << 23) | (((fraction << shift) & 0x03ff) << 13)
        }
    } else {
        sign | ((exponent + 112) << 23) | (fraction << 13)
    };
    f32::from_bits(bits)
}

/// The bits of `x` rounded to bfloat16, ties to even: the host's conversion.
pub const fn f32_to_bf16_bits(x: f32) -> u16 {
    let bits = x.to_bits();
    if x.is_nan() {
        // Quiet, with the top of the payload.
        return ((bits >> 16) | 0x0040) as u16;
    }
    let round = 0x7fff + ((bits >> 16) & 1);
    // Overflow of the largest finite values carries into ∞, as it should.
    ((bits + round) >> 16) as u16
}

/// Two [`F16`] in one 32-bit register (CUDA's `__half2`): `lo` in the low 16 bits.
#[repr(C, align(4))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Pod, Zeroable)]
pub struct F16x2 {
    /// The low half (`.x` in CUDA).
    pub lo: F16,
    /// The high half (`.y` in CUDA).
    pub hi: F16,
}

/// One paired-half PTX instruction on `.b32` registers, two or three operands.
macro_rules! f16x2_op {
    ($(#[$doc:meta])* $name:ident($($operand:ident),+), $instruction:literal) => {
        $(#[$doc])*
        #[inline(always)]
        pub fn $name(self, $($operand: Self),+) -> Self {
            #[cfg(target_arch = "nvptx64")]
            {
                let result: u32;
                // SAFETY: arithmetic on registers: no memory, no traps.
                unsafe {
                    core::arch::asm!(
                        concat!($instruction, " {r}, {a}", $(", {", stringify!($operand), "}",)+ ";"),
                        r = out(reg32) result,
                        a = in(reg32) self.to_bits(),
                        $($operand = in(reg32) $operand.to_bits(),)+
                        options(pure, nomem, nostack, preserves_flags),
                    )
                };
                Self::from_bits(result)
            }
            #[cfg(not(target_arch = "nvptx64"))]
            crate::host::device_only(stringify!($name))
        }
    };
}

impl F16x2 {
    /// The pair (lo, hi).
    pub const fn new(lo: F16, hi: F16) -> Self {
        Self { lo, hi }
    }

    /// Both halves from `f32`s, each rounded to nearest even (CUDA's `__floats2half2_rn`).
    #[inline(always)]
    pub fn from_f32s(lo: f32, hi: f32) -> Self {
        Self { lo: F16::from_f32(lo), hi: F16::from_f32(hi) }
    }

    /// Both halves as `f32`s (exact).
    #[inline(always)]
    pub fn to_f32s(self) -> (f32, f32) {
        (self.lo.to_f32(), self.hi.to_f32())
    }

    /// The register's bits: `lo` in bits 0..16, `hi` in bits 16..32.
    pub const fn to_bits(self) -> u32 {
        self.lo.to_bits() as u32 | (self.hi.to_bits() as u32) << 16
    }

    /// The pair from a register's bits (`lo` in bits 0..16).
    pub const fn from_bits(bits: u32) -> Self {
        Self { lo: F16::from_bits(bits as u16), hi: F16::from_bits((bits >> 16) as u16) }
    }

    f16x2_op!(
        /// Lane-wise `self + other`, rounded to nearest even (`add.rn.f16x2`, CUDA's
        /// `__hadd2`). GPU only.
        add_rn(other),
        "add.rn.f16x2"
    );
    f16x2_op!(
        /// Lane-wise `self · other`, rounded to nearest even (`mul.rn.f16x2`, CUDA's
        /// `__hmul2`). GPU only.
        mul_rn(other),
        "mul.rn.f16x2"
    );
    f16x2_op!(
        /// Lane-wise `self · b + c`, rounded once (`fma.rn.f16x2`, CUDA's `__hfma2`). GPU
        /// only.
        fma_rn(b, c),
        "fma.rn.f16x2"
    );
}

impl core::ops::Add for F16x2 {
    type Output = Self;
    /// [`F16x2::add_rn`] (GPU only).
    #[inline(always)]
    fn add(self, other: Self) -> Self {
        self.add_rn(other)
    }
}

impl core::ops::Mul for F16x2 {
    type Output = Self;
    /// [`F16x2::mul_rn`] (GPU only).
    #[inline(always)]
    fn mul(self, other: Self) -> Self {
        self.mul_rn(other)
    }
}

// A host allocates `CudaSlice<F16>` and `CudaSlice<BF16>` (feature `host`), as it does the
// vector types.
crate::vector::host_device_repr!(F16, BF16);
