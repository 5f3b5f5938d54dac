//! Check kernels: math (libdevice's functions, the fast intrinsics) and the 16-bit floats.

use ptxkit_device::half::{BF16, F16, F16x2};
use ptxkit_device::{kernel, math, thread};

/// The 16-bit float types and their host conversions, for the tests (which depend on this
/// crate, not on `ptxkit-device`).
pub use ptxkit_device::half;

/// Declares the functions a math kernel evaluates, by index (`FUNCTIONS[op]` names the one
/// that `evaluate(op, x, y)` runs), so the host and the kernel agree on the numbering.
macro_rules! function_table {
    ($table:ident, $evaluate:ident, $t:ty, $($name:literal => |$x:ident, $y:ident| $value:expr,)*) => {
        /// The functions the kernel evaluates, in the order of its `op` parameter.
        pub const $table: &[&str] = &[$($name),*];

        /// Function `op` of the table at (x, y) (`y` is ignored by one-argument functions).
        #[inline(always)]
        #[allow(unused_variables, unused_assignments)]
        fn $evaluate(op: u32, x: $t, y: $t) -> $t {
            let mut index = 0;
            $(
                if op == index {
                    let ($x, $y) = (x, y);
                    return $value;
                }
                index += 1;
            )*
            <$t>::NAN
        }
    };
}

function_table! {
    F32_FUNCTIONS, evaluate_f32, f32,
    "expf" => |x, y| math::expf(x),
    "exp2f" => |x, y| math::exp2f(x),
    "exp10f" => |x, y| math::exp10f(x),
    "expm1f" => |x, y| math::expm1f(x),
    "logf" => |x, y| math::logf(x),
    "log2f" => |x, y| math::log2f(x),
    "log10f" => |x, y| math::log10f(x),
    "log1pf" => |x, y| math::log1pf(x),
    "sinf" => |x, y| math::sinf(x),
    "cosf" => |x, y| math::cosf(x),
    "tanf" => |x, y| math::tanf(x),
    "sincosf.sin" => |x, y| math::sincosf(x).0,
    "sincosf.cos" => |x, y| math::sincosf(x).1,
    "asinf" => |x, y| math::asinf(x),
    "acosf" => |x, y| math::acosf(x),
    "atanf" => |x, y| math::atanf(x),
    "atan2f" => |x, y| math::atan2f(x, y),
    "sinhf" => |x, y| math::sinhf(x),
    "coshf" => |x, y| math::coshf(x),
    "tanhf" => |x, y| math::tanhf(x),
    "powf" => |x, y| math::powf(x, y),
    "sqrtf" => |x, y| math::sqrtf(x),
    "rsqrtf" => |x, y| math::rsqrtf(x),
    "cbrtf" => |x, y| math::cbrtf(x),
    "hypotf" => |x, y| math::hypotf(x, y),
    "erff" => |x, y| math::erff(x),
    "erfcf" => |x, y| math::erfcf(x),
    "lgammaf" => |x, y| math::lgammaf(x),
    "tgammaf" => |x, y| math::tgammaf(x),
    "floorf" => |x, y| math::floorf(x),
    "ceilf" => |x, y| math::ceilf(x),
    "truncf" => |x, y| math::truncf(x),
    "roundf" => |x, y| math::roundf(x),
    "fabsf" => |x, y| math::fabsf(x),
    "fminf" => |x, y| math::fminf(x, y),
    "fmaxf" => |x, y| math::fmaxf(x, y),
    "fmodf" => |x, y| math::fmodf(x, y),
    "copysignf" => |x, y| math::copysignf(x, y),
    "fmaf" => |x, y| math::fmaf(x, y, 0.25),
    "fast::__expf" => |x, y| math::fast::__expf(x),
    "fast::__logf" => |x, y| math::fast::__logf(x),
    "fast::__sinf" => |x, y| math::fast::__sinf(x),
    "fast::__cosf" => |x, y| math::fast::__cosf(x),
    "fast::rsqrtf" => |x, y| math::fast::rsqrtf(x),
    "fast::__fdividef" => |x, y| math::fast::__fdividef(x, y),
    "fast::__frcp_rn" => |x, y| math::fast::__frcp_rn(x),
    "fast::__fsqrt_rn" => |x, y| math::fast::__fsqrt_rn(x),
    "fast::__fdiv_rn" => |x, y| math::fast::__fdiv_rn(x, y),
    "fast::__fmaf_rn" => |x, y| math::fast::__fmaf_rn(x, y, 0.25),
    "fast::__saturatef" => |x, y| math::fast::__saturatef(x),
}

function_table! {
    F64_FUNCTIONS, evaluate_f64, f64,
    "exp" => |x, y| math::exp(x),
    "exp2" => |x, y| math::exp2(x),
    "exp10" => |x, y| math::exp10(x),
    "expm1" => |x, y| math::expm1(x),
    "log" => |x, y| math::log(x),
    "log2" => |x, y| math::log2(x),
    "log10" => |x, y| math::log10(x),
    "log1p" => |x, y| math::log1p(x),
    "sin" => |x, y| math::sin(x),
    "cos" => |x, y| math::cos(x),
    "tan" => |x, y| math::tan(x),
    "sincos.sin" => |x, y| math::sincos(x).0,
    "sincos.cos" => |x, y| math::sincos(x).1,
    "asin" => |x, y| math::asin(x),
    "acos" => |x, y| math::acos(x),
    "atan" => |x, y| math::atan(x),
    "atan2" => |x, y| math::atan2(x, y),
    "sinh" => |x, y| math::sinh(x),
    "cosh" => |x, y| math::cosh(x),
    "tanh" => |x, y| math::tanh(x),
    "pow" => |x, y| math::pow(x, y),
    "sqrt" => |x, y| math::sqrt(x),
    "rsqrt" => |x, y| math::rsqrt(x),
    "cbrt" => |x, y| math::cbrt(x),
    "hypot" => |x, y| math::hypot(x, y),
    "erf" => |x, y| math::erf(x),
    "erfc" => |x, y| math::erfc(x),
    "lgamma" => |x, y| math::lgamma(x),
    "tgamma" => |x, y| math::tgamma(x),
    "floor" => |x, y| math::floor(x),
    "ceil" => |x, y| math::ceil(x),
    "trunc" => |x, y| math::trunc(x),
    "round" => |x, y| math::round(x),
    "fabs" => |x, y| math::fabs(x),
    "fmin" => |x, y| math::fmin(x, y),
    "fmax" => |x, y| math::fmax(x, y),
    "fmod" => |x, y| math::fmod(x, y),
    "copysign" => |x, y| math::copysign(x, y),
    "fma" => |x, y| math::fma(x, y, 0.25),
    "fast::__drcp_rn" => |x, y| math::fast::__drcp_rn(x),
    "fast::__dsqrt_rn" => |x, y| math::fast::__dsqrt_rn(x),
    "fast::__fma_rn" => |x, y| math::fast::__fma_rn(x, y, 0.25),
}

/// out[i] = F32_FUNCTIONS[op](x[i], y[i]). Thread mapping: one thread per point, 1-D grid.
/// Bytes per point: 12.
#[kernel]
pub unsafe fn check_math_f32(op: u32, x: *const f32, y: *const f32, out: *mut f32, n: u32) {
    let i = thread::index_1d();
    if i < n {
        let i = i as usize;
        // SAFETY: i < n, the length of every buffer (the caller's promise).
        unsafe { *out.add(i) = evaluate_f32(op, *x.add(i), *y.add(i)) };
    }
}

/// out[i] = F64_FUNCTIONS[op](x[i], y[i]). Thread mapping: one thread per point, 1-D grid.
/// Bytes per point: 24.
#[kernel]
pub unsafe fn check_math_f64(op: u32, x: *const f64, y: *const f64, out: *mut f64, n: u32) {
    let i = thread::index_1d();
    if i < n {
        let i = i as usize;
        // SAFETY: i < n, the length of every buffer (the caller's promise).
        unsafe { *out.add(i) = evaluate_f64(op, *x.add(i), *y.add(i)) };
    }
}

/// One kernel per function whose PTX a test inspects: out[0] = f(x[0], y[0]) (one thread).
macro_rules! single_function_kernels {
    ($($(#[$doc:meta])* $name:ident($t:ty) = |$x:ident, $y:ident| $value:expr;)*) => {$(
        $(#[$doc])*
        /// Thread mapping: thread 0 of block 0 evaluates it once. Bytes: 3 values.
        #[kernel]
        #[allow(unused_variables)]
        pub unsafe fn $name(x: *const $t, y: *const $t, out: *mut $t) {
            if thread::index_1d() == 0 {
                // SAFETY: each buffer holds at least one value (the caller's promise).
                unsafe {
                    let ($x, $y) = (*x, *y);
                    *out = $value;
                }
            }
        }
    )*};
}

single_function_kernels! {
    /// `math::expf`: libdevice inlined (`ex2.approx` at its core, no `.extern .func __nv_`).
    check_expf(f32) = |x, y| math::expf(x);
    /// `math::sin` (f64): libdevice's slow path for huge arguments stays a local function.
    check_sin(f64) = |x, y| math::sin(x);
    /// `math::fmaf`: `fma.rn.f32`.
    check_fmaf(f32) = |x, y| math::fmaf(x, y, 1.0);
    /// `math::fma`: `fma.rn.f64`.
    check_fma(f64) = |x, y| math::fma(x, y, 1.0);
    /// `math::sqrtf`: `sqrt.rn.f32`.
    check_sqrtf(f32) = |x, y| math::sqrtf(x);
    /// `math::fminf`: `min.f32`.
    check_fminf(f32) = |x, y| math::fminf(x, y);
    /// `math::fabsf`: `abs.f32`.
    check_fabsf(f32) = |x, y| math::fabsf(x);
    /// `math::fast::__expf`: a multiply, then `ex2.approx.f32`.
    check_fast_expf(f32) = |x, y| math::fast::__expf(x);
    /// `math::fast::__logf`: `lg2.approx.f32`.
    check_fast_logf(f32) = |x, y| math::fast::__logf(x);
    /// `math::fast::__sinf`: `sin.approx.f32`.
    check_fast_sinf(f32) = |x, y| math::fast::__sinf(x);
    /// `math::fast::rsqrtf`: `rsqrt.approx.f32`.
    check_fast_rsqrtf(f32) = |x, y| math::fast::rsqrtf(x);
    /// `math::fast::__fdividef`: `div.approx.f32`.
    check_fast_fdividef(f32) = |x, y| math::fast::__fdividef(x, y);
    /// `math::fast::__frcp_rn`: `rcp.rn.f32`.
    check_fast_frcp_rn(f32) = |x, y| math::fast::__frcp_rn(x);
    /// The other fast forms, for their instructions (`sqrt.approx.f32`, `rcp.approx.f32`,
    /// `cos.approx.f32`, ...) and for `ptxas` to assemble.
    check_fast_others(f32) = |x, y| {
        let (sin, cos) = math::fast::__sincosf(x);
        math::fast::sqrtf(x) + math::fast::rcpf(y) + math::fast::__exp10f(x) + math::fast::__log10f(y)
            + math::fast::__tanf(x) + math::fast::__powf(y, x) + sin * cos
    };
}

/// The 16-bit floats through the GPU's conversions: for each i, `f16_bits[i]` =
/// `F16::from_f32(x[i])`, `bf16_bits[i]` = `BF16::from_f32(x[i])`, and `back[i]` the f32 of
/// the f16 bits `halves[i]` (`F16::to_f32`), `bf16_back[i]` that of the bf16 bits `halves[i]`.
/// Thread mapping: one thread per element, 1-D grid. Bytes per element: 18.
#[kernel]
pub unsafe fn check_half_conversions(
    x: *const f32,
    halves: *const u16,
    f16_bits: *mut u16,
    bf16_bits: *mut u16,
    back: *mut f32,
    bf16_back: *mut f32,
    n: u32,
) {
    let i = thread::index_1d();
    if i < n {
        let i = i as usize;
        // SAFETY: i < n, the length of every buffer (the caller's promise).
        unsafe {
            *f16_bits.add(i) = F16::from_f32(*x.add(i)).to_bits();
            *bf16_bits.add(i) = BF16::from_f32(*x.add(i)).to_bits();
            *back.add(i) = F16::from_bits(*halves.add(i)).to_f32();
            *bf16_back.add(i) = BF16::from_bits(*halves.add(i)).to_f32();
        }
    }
}

/// Paired halves: `sum[i] = a[i] + b[i]`, `product[i] = a[i] · b[i]`,
/// `fused[i] = a[i] · b[i] + c[i]` lane-wise on `F16x2` (`add.rn.f16x2`, `mul.rn.f16x2`,
/// `fma.rn.f16x2`), each element the bits of a pair. Thread mapping: one thread per pair,
/// 1-D grid. Bytes per pair: 24.
#[kernel]
pub unsafe fn check_half2_arithmetic(
    a: *const u32,
    b: *const u32,
    c: *const u32,
    sum: *mut u32,
    product: *mut u32,
    fused: *mut u32,
    n: u32,
) {
    let i = thread::index_1d();
    if i < n {
        let i = i as usize;
        // SAFETY: i < n, the length of every buffer (the caller's promise).
        unsafe {
            let (a, b, c) =
                (F16x2::from_bits(*a.add(i)), F16x2::from_bits(*b.add(i)), F16x2::from_bits(*c.add(i)));
            *sum.add(i) = (a + b).to_bits();
            *product.add(i) = a.mul_rn(b).to_bits();
            *fused.add(i) = a.fma_rn(b, c).to_bits();
        }
    }
}

/// `unroll!`: out[i] = Σ_{k<32} x[32·i + k] · (k + 1), summed in order of k, the loop over k
/// written out 32 times (no loop left in the PTX). Thread mapping: one thread per output,
/// 1-D grid. Bytes per output: 132.
#[kernel]
pub unsafe fn check_unroll(x: *const f32, out: *mut f32, n: u32) {
    let i = thread::index_1d();
    if i < n {
        let row = i as usize * 32;
        let mut sum = 0.0f32;
        ptxkit_device::unroll!(for k in 0..32 {
            // SAFETY: row + k < 32·n, the length of x (the caller's promise).
            sum += unsafe { *x.add(row + k) } * (k + 1) as f32;
        });
        // SAFETY: i < n, the length of out (the caller's promise).
        unsafe { *out.add(i as usize) = sum };
    }
}

/// `unroll!` by 4 with a run-time trip count: out[i] = Σ_{k<len} x[len·i + k] · (k + 1),
/// summed in order of k, the loop over k run 4 iterations at a time and the last `len % 4`
/// written out one at a time under a test each. Thread mapping: one thread per output, 1-D
/// grid. Bytes per output: 4·len + 4.
#[kernel]
pub unsafe fn check_unroll_by_4(x: *const f32, out: *mut f32, n: u32, len: u32) {
    let i = thread::index_1d();
    if i < n {
        let row = i as usize * len as usize;
        let mut sum = 0.0f32;
        ptxkit_device::unroll!(
            4,
            for k in 0..len as usize {
                // SAFETY: row + k < len·n, the length of x (the caller's promise).
                sum += unsafe { *x.add(row + k) } * (k + 1) as f32;
            }
        );
        // SAFETY: i < n, the length of out (the caller's promise).
        unsafe { *out.add(i as usize) = sum };
    }
}
