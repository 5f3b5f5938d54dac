//! Math functions with libdevice's accuracy, and the fast approximate forms.
//!
//! The functions carry CUDA C's names (`expf` for `f32`, `exp` for `f64`, ...) and are NVIDIA's
//! libdevice (`libdevice.10.bc`, the bitcode library nvcc links for the same names): each one
//! calls `__nv_<name>`, which `ptxkit-build` links into the kernels from the CUDA toolkit
//! (`$PTXKIT_LIBDEVICE`, `$CUDA_HOME/nvvm/libdevice`, or the `.tools` copy that
//! `scripts/setup.sh` installs) and inlines; only the functions a kernel uses end up in its
//! PTX. The maximum errors are CUDA's (CUDA C++ Programming Guide, "Mathematical Functions"),
//! with IEEE denormals (libdevice's `__CUDA_FTZ` is 0). Rounding and sign functions, `fmin`,
//! `fmax`, `fabs`, `sqrt` and `fma` are exact (correctly rounded): single PTX instructions
//! (`sqrt.rn`, `fma.rn`, `min`, `max`, `abs`, `cvt.rmi`, ...).
//!
//! [`fast`] holds the approximate forms CUDA C calls intrinsics (`__expf`, `__sinf`,
//! `__fdividef`, ...): one or two hardware instructions each, much faster, much less
//! accurate (see each function).
//!
//! In a host build every function panics (kernel bodies are compiled for the host only to be
//! checked).

/// Declares libdevice functions and wraps each in a safe function of CUDA C's name.
/// Each wrapper is what `on_gpu!` expands to (a macro cannot pass a `stringify!` as its
/// literal).
macro_rules! libdevice {
    ($(
        $(#[$doc:meta])*
        fn $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty = $nv:ident;
    )*) => {
        #[cfg(target_arch = "nvptx64")]
        unsafe extern "C" {
            $(fn $nv($($arg: $ty),*) -> $ret;)*
        }
        $(
            $(#[$doc])*
            #[inline(always)]
            pub fn $name($($arg: $ty),*) -> $ret {
                #[cfg(target_arch = "nvptx64")]
                // SAFETY: libdevice's math functions are pure functions of their arguments,
                // defined for every input (NaN, infinities and out-of-domain values included).
                return unsafe { $nv($($arg),*) };
                #[cfg(not(target_arch = "nvptx64"))]
                crate::host::device_only(stringify!($name))
            }
        )*
    };
}

libdevice! {
    /// e^x. Max error 2 ulp.
    fn expf(x: f32) -> f32 = __nv_expf;
    /// 2^x. Max error 2 ulp.
    fn exp2f(x: f32) -> f32 = __nv_exp2f;
    /// 10^x. Max error 2 ulp.
    fn exp10f(x: f32) -> f32 = __nv_exp10f;
    /// e^x − 1, accurate near 0. Max error 1 ulp.
    fn expm1f(x: f32) -> f32 = __nv_expm1f;
    /// Natural logarithm. Max error 1 ulp.
    fn logf(x: f32) -> f32 = __nv_logf;
    /// Base-2 logarithm. Max error 1 ulp.
    fn log2f(x: f32) -> f32 = __nv_log2f;
    /// Base-10 logarithm. Max error 2 ulp.
    fn log10f(x: f32) -> f32 = __nv_log10f;
    /// ln(1 + x), accurate near 0. Max error 1 ulp.
    fn log1pf(x: f32) -> f32 = __nv_log1pf;
    /// Sine (radians). Max error 2 ulp.
    fn sinf(x: f32) -> f32 = __nv_sinf;
    /// Cosine (radians). Max error 2 ulp.
    fn cosf(x: f32) -> f32 = __nv_cosf;
    /// Tangent (radians). Max error 4 ulp.
    fn tanf(x: f32) -> f32 = __nv_tanf;
    /// Arc sine. Max error 2 ulp.
    fn asinf(x: f32) -> f32 = __nv_asinf;
    /// Arc cosine. Max error 2 ulp.
    fn acosf(x: f32) -> f32 = __nv_acosf;
    /// Arc tangent. Max error 2 ulp.
    fn atanf(x: f32) -> f32 = __nv_atanf;
    /// The angle of (x, y), `atan(y / x)` in the right quadrant. Max error 3 ulp.
    fn atan2f(y: f32, x: f32) -> f32 = __nv_atan2f;
    /// Hyperbolic sine. Max error 3 ulp.
    fn sinhf(x: f32) -> f32 = __nv_sinhf;
    /// Hyperbolic cosine. Max error 2 ulp.
    fn coshf(x: f32) -> f32 = __nv_coshf;
    /// Hyperbolic tangent. Max error 2 ulp.
    fn tanhf(x: f32) -> f32 = __nv_tanhf;
    /// x^y. Max error 4 ulp.
    fn powf(x: f32, y: f32) -> f32 = __nv_powf;
    /// Square root, correctly rounded (`sqrt.rn.f32`).
    fn sqrtf(x: f32) -> f32 = __nv_sqrtf;
    /// 1/√x. Max error 2 ulp.
    fn rsqrtf(x: f32) -> f32 = __nv_rsqrtf;
    /// Cube root. Max error 1 ulp.
    fn cbrtf(x: f32) -> f32 = __nv_cbrtf;
    /// √(x² + y²) without overflow in between. Max error 3 ulp.
    fn hypotf(x: f32, y: f32) -> f32 = __nv_hypotf;
    /// Error function. Max error 2 ulp.
    fn erff(x: f32) -> f32 = __nv_erff;
    /// Complementary error function 1 − erf(x). Max error 4 ulp.
    fn erfcf(x: f32) -> f32 = __nv_erfcf;
    /// ln |Γ(x)|. Max error 6 ulp outside −10.001 < x < −2.264 (larger inside).
    fn lgammaf(x: f32) -> f32 = __nv_lgammaf;
    /// Γ(x). Max error 5 ulp.
    fn tgammaf(x: f32) -> f32 = __nv_tgammaf;
    /// Largest integer ≤ x (exact).
    fn floorf(x: f32) -> f32 = __nv_floorf;
    /// Smallest integer ≥ x (exact).
    fn ceilf(x: f32) -> f32 = __nv_ceilf;
    /// x rounded towards zero (exact).
    fn truncf(x: f32) -> f32 = __nv_truncf;
    /// x rounded to the nearest integer, halfway cases away from zero (exact).
    fn roundf(x: f32) -> f32 = __nv_roundf;
    /// |x| (exact).
    fn fabsf(x: f32) -> f32 = __nv_fabsf;
    /// The smaller of x and y; the other if one is NaN (exact).
    fn fminf(x: f32, y: f32) -> f32 = __nv_fminf;
    /// The larger of x and y; the other if one is NaN (exact).
    fn fmaxf(x: f32, y: f32) -> f32 = __nv_fmaxf;
    /// Remainder of x / y with x's sign, `x − trunc(x / y)·y` (exact).
    fn fmodf(x: f32, y: f32) -> f32 = __nv_fmodf;
    /// |x| with y's sign (exact).
    fn copysignf(x: f32, y: f32) -> f32 = __nv_copysignf;
    /// x·y + z rounded once (`fma.rn.f32`).
    fn fmaf(x: f32, y: f32, z: f32) -> f32 = __nv_fmaf;

    /// e^x. Max error 1 ulp.
    fn exp(x: f64) -> f64 = __nv_exp;
    /// 2^x. Max error 1 ulp.
    fn exp2(x: f64) -> f64 = __nv_exp2;
    /// 10^x. Max error 1 ulp.
    fn exp10(x: f64) -> f64 = __nv_exp10;
    /// e^x − 1, accurate near 0. Max error 1 ulp.
    fn expm1(x: f64) -> f64 = __nv_expm1;
    /// Natural logarithm. Max error 1 ulp.
    fn log(x: f64) -> f64 = __nv_log;
    /// Base-2 logarithm. Max error 1 ulp.
    fn log2(x: f64) -> f64 = __nv_log2;
    /// Base-10 logarithm. Max error 1 ulp.
    fn log10(x: f64) -> f64 = __nv_log10;
    /// ln(1 + x), accurate near 0. Max error 1 ulp.
    fn log1p(x: f64) -> f64 = __nv_log1p;
    /// Sine (radians). Max error 2 ulp.
    fn sin(x: f64) -> f64 = __nv_sin;
    /// Cosine (radians). Max error 2 ulp.
    fn cos(x: f64) -> f64 = __nv_cos;
    /// Tangent (radians). Max error 2 ulp.
    fn tan(x: f64) -> f64 = __nv_tan;
    /// Arc sine. Max error 2 ulp.
    fn asin(x: f64) -> f64 = __nv_asin;
    /// Arc cosine. Max error 2 ulp.
    fn acos(x: f64) -> f64 = __nv_acos;
    /// Arc tangent. Max error 2 ulp.
    fn atan(x: f64) -> f64 = __nv_atan;
    /// The angle of (x, y), `atan(y / x)` in the right quadrant. Max error 2 ulp.
    fn atan2(y: f64, x: f64) -> f64 = __nv_atan2;
    /// Hyperbolic sine. Max error 2 ulp.
    fn sinh(x: f64) -> f64 = __nv_sinh;
    /// Hyperbolic cosine. Max error 1 ulp.
    fn cosh(x: f64) -> f64 = __nv_cosh;
    /// Hyperbolic tangent. Max error 1 ulp.
    fn tanh(x: f64) -> f64 = __nv_tanh;
    /// x^y. Max error 2 ulp.
    fn pow(x: f64, y: f64) -> f64 = __nv_pow;
    /// Square root, correctly rounded (`sqrt.rn.f64`).
    fn sqrt(x: f64) -> f64 = __nv_sqrt;
    /// 1/√x. Max error 1 ulp.
    fn rsqrt(x: f64) -> f64 = __nv_rsqrt;
    /// Cube root. Max error 1 ulp.
    fn cbrt(x: f64) -> f64 = __nv_cbrt;
    /// √(x² + y²) without overflow in between. Max error 2 ulp.
    fn hypot(x: f64, y: f64) -> f64 = __nv_hypot;
    /// Error function. Max error 2 ulp.
    fn erf(x: f64) -> f64 = __nv_erf;
    /// Complementary error function 1 − erf(x). Max error 5 ulp.
    fn erfc(x: f64) -> f64 = __nv_erfc;
    /// ln |Γ(x)|. Max error 4 ulp outside −11.0001 < x < −2.2637 (larger inside).
    fn lgamma(x: f64) -> f64 = __nv_lgamma;
    /// Γ(x). Max error 10 ulp.
    fn tgamma(x: f64) -> f64 = __nv_tgamma;
    /// Largest integer ≤ x (exact).
    fn floor(x: f64) -> f64 = __nv_floor;
    /// Smallest integer ≥ x (exact).
    fn ceil(x: f64) -> f64 = __nv_ceil;
    /// x rounded towards zero (exact).
    fn trunc(x: f64) -> f64 = __nv_trunc;
    /// x rounded to the nearest integer, halfway cases away from zero (exact).
    fn round(x: f64) -> f64 = __nv_round;
    /// |x| (exact).
    fn fabs(x: f64) -> f64 = __nv_fabs;
    /// The smaller of x and y; the other if one is NaN (exact).
    fn fmin(x: f64, y: f64) -> f64 = __nv_fmin;
    /// The larger of x and y; the other if one is NaN (exact).
    fn fmax(x: f64, y: f64) -> f64 = __nv_fmax;
    /// Remainder of x / y with x's sign, `x − trunc(x / y)·y` (exact).
    fn fmod(x: f64, y: f64) -> f64 = __nv_fmod;
    /// |x| with y's sign (exact).
    fn copysign(x: f64, y: f64) -> f64 = __nv_copysign;
    /// x·y + z rounded once (`fma.rn.f64`).
    fn fma(x: f64, y: f64, z: f64) -> f64 = __nv_fma;
}

#[cfg(target_arch = "nvptx64")]
unsafe extern "C" {
    fn __nv_sincosf(x: f32, sin: *mut f32, cos: *mut f32);
    fn __nv_sincos(x: f64, sin: *mut f64, cos: *mut f64);
}

/// (sin x, cos x) at once, cheaper than both apart (x in radians). Max error 2 ulp each.
#[inline(always)]
pub fn sincosf(x: f32) -> (f32, f32) {
    on_gpu!("sincosf", {
        let (mut sin, mut cos) = (0.0, 0.0);
        // SAFETY: libdevice writes one f32 through each pointer, both to live locals.
        unsafe { __nv_sincosf(x, &mut sin, &mut cos) };
        (sin, cos)
    })
}

/// (sin x, cos x) at once, cheaper than both apart (x in radians). Max error 2 ulp each.
#[inline(always)]
pub fn sincos(x: f64) -> (f64, f64) {
    on_gpu!("sincos", {
        let (mut sin, mut cos) = (0.0, 0.0);
        // SAFETY: libdevice writes one f64 through each pointer, both to live locals.
        unsafe { __nv_sincos(x, &mut sin, &mut cos) };
        (sin, cos)
    })
}

/// CUDA C's fast intrinsics: approximate forms of the math functions, one or two hardware
/// instructions each (the special function unit's `ex2.approx`, `lg2.approx`, `sin.approx`,
/// ...), and the single-instruction forms with an explicit rounding (`__fmaf_rn`, ...).
/// Denormal inputs and results are kept (no `.ftz`), as in the rest of this crate.
pub mod fast {
    /// One PTX instruction `op dst, src;` on `f32` registers.
    macro_rules! unary_f32 {
        ($(#[$doc:meta])* $name:ident, $instruction:literal) => {
            $(#[$doc])*
            #[inline(always)]
            pub fn $name(x: f32) -> f32 {
                #[cfg(not(target_arch = "nvptx64"))]
                crate::host::device_only(stringify!($name));
                #[cfg(target_arch = "nvptx64")]
                {
                    let result: f32;
                    // SAFETY: an arithmetic instruction on registers: no memory, no traps.
                    unsafe {
                        core::arch::asm!(
                            concat!($instruction, " {r}, {x};"),
                            r = out(reg32) result,
                            x = in(reg32) x,
                            options(pure, nomem, nostack, preserves_flags),
                        )
                    };
                    result
                }
            }
        };
    }

    /// One PTX instruction `op dst, a, b;` on `f32` registers.
    macro_rules! binary_f32 {
        ($(#[$doc:meta])* $name:ident, $instruction:literal) => {
            $(#[$doc])*
            #[inline(always)]
            pub fn $name(x: f32, y: f32) -> f32 {
                #[cfg(not(target_arch = "nvptx64"))]
                crate::host::device_only(stringify!($name));
                #[cfg(target_arch = "nvptx64")]
                {
                    let result: f32;
                    // SAFETY: an arithmetic instruction on registers: no memory, no traps.
                    unsafe {
                        core::arch::asm!(
                            concat!($instruction, " {r}, {x}, {y};"),
                            r = out(reg32) result,
                            x = in(reg32) x,
                            y = in(reg32) y,
                            options(pure, nomem, nostack, preserves_flags),
                        )
                    };
                    result
                }
            }
        };
    }

    /// One PTX instruction on `f64` registers, one or two operands.
    macro_rules! unary_f64 {
        ($(#[$doc:meta])* $name:ident, $instruction:literal) => {
            $(#[$doc])*
            #[inline(always)]
            pub fn $name(x: f64) -> f64 {
                #[cfg(not(target_arch = "nvptx64"))]
                crate::host::device_only(stringify!($name));
                #[cfg(target_arch = "nvptx64")]
                {
                    let result: f64;
                    // SAFETY: an arithmetic instruction on registers: no memory, no traps.
                    unsafe {
                        core::arch::asm!(
                            concat!($instruction, " {r}, {x};"),
                            r = out(reg64) result,
                            x = in(reg64) x,
                            options(pure, nomem, nostack, preserves_flags),
                        )
                    };
                    result
                }
            }
        };
    }

    unary_f32!(
        /// 2^x (`ex2.approx.f32`): max error 2 ulp over the whole range (CUDA's `exp2f` with
        /// `-use_fast_math`).
        exp2f,
        "ex2.approx.f32"
    );
    unary_f32!(
        /// log₂ x (`lg2.approx.f32`): max absolute error 2^-22.6 for x in [0.5, 2], else 2 ulp
        /// (CUDA's `__log2f`).
        __log2f,
        "lg2.approx.f32"
    );
    unary_f32!(
        /// sin x (`sin.approx.f32`): max absolute error 2^-21.41 for x in [−π, π], worse
        /// outside (CUDA's `__sinf`).
        __sinf,
        "sin.approx.f32"
    );
    unary_f32!(
        /// cos x (`cos.approx.f32`): max absolute error 2^-21.19 for x in [−π, π], worse
        /// outside (CUDA's `__cosf`).
        __cosf,
        "cos.approx.f32"
    );
    unary_f32!(
        /// 1/√x (`rsqrt.approx.f32`): max error 2 ulp (CUDA's `rsqrtf` is this instruction).
        rsqrtf,
        "rsqrt.approx.f32"
    );
    unary_f32!(
        /// √x (`sqrt.approx.f32`), as nvcc's `sqrtf` with `-prec-sqrt=false`.
        sqrtf,
        "sqrt.approx.f32"
    );
    unary_f32!(
        /// 1/x (`rcp.approx.f32`), as nvcc's `1.0f / x` with `-prec-div=false`.
        rcpf,
        "rcp.approx.f32"
    );
    unary_f32!(
        /// 1/x, correctly rounded to nearest even (`rcp.rn.f32`; CUDA's `__frcp_rn`).
        __frcp_rn,
        "rcp.rn.f32"
    );
    unary_f32!(
        /// √x, correctly rounded to nearest even (`sqrt.rn.f32`; CUDA's `__fsqrt_rn`).
        __fsqrt_rn,
        "sqrt.rn.f32"
    );
    unary_f32!(
        /// x clamped to [0, 1], NaN to 0 (`cvt.sat.f32.f32`; CUDA's `__saturatef`).
        __saturatef,
        "cvt.sat.f32.f32"
    );
    binary_f32!(
        /// x / y (`div.approx.f32`): max error 2 ulp for |y| in [2^-126, 2^126], 0 when |y| is
        /// larger (CUDA's `__fdividef`).
        __fdividef,
        "div.approx.f32"
    );
    binary_f32!(
        /// x / y, correctly rounded to nearest even (`div.rn.f32`; CUDA's `__fdiv_rn`).
        __fdiv_rn,
        "div.rn.f32"
    );
    unary_f64!(
        /// 1/x, correctly rounded to nearest even (`rcp.rn.f64`; CUDA's `__drcp_rn`).
        __drcp_rn,
        "rcp.rn.f64"
    );
    unary_f64!(
        /// √x, correctly rounded to nearest even (`sqrt.rn.f64`; CUDA's `__dsqrt_rn`).
        __dsqrt_rn,
        "sqrt.rn.f64"
    );

    /// log₂ e, the factor that turns e^x into 2^(x·log₂ e).
    const LOG2_E: f32 = core::f32::consts::LOG2_E;
    /// ln 2, the factor that turns log₂ into ln.
    const LN_2: f32 = core::f32::consts::LN_2;
    /// log₁₀ 2, the factor that turns log₂ into log₁₀.
    const LOG10_2: f32 = core::f32::consts::LOG10_2;

    /// e^x as `ex2.approx.f32` after a multiply (CUDA's `__expf`): max error
    /// 2 + 1.16·|x| ulp (the rounding of x·log₂ e grows with x).
    #[inline(always)]
    pub fn __expf(x: f32) -> f32 {
        exp2f(x * LOG2_E)
    }

    /// 10^x as `ex2.approx.f32` after a multiply (CUDA's `__exp10f`): max error
    /// 2 + 1.92·|x| ulp.
    #[inline(always)]
    pub fn __exp10f(x: f32) -> f32 {
        exp2f(x * core::f32::consts::LOG2_10)
    }

    /// ln x as `lg2.approx.f32` and a multiply (CUDA's `__logf`): max absolute error
    /// 2^-21.41 for x in [0.5, 2], else 3 ulp.
    #[inline(always)]
    pub fn __logf(x: f32) -> f32 {
        __log2f(x) * LN_2
    }

    /// log₁₀ x as `lg2.approx.f32` and a multiply (CUDA's `__log10f`): max absolute error
    /// 2^-22 for x in [0.5, 2], else 3 ulp.
    #[inline(always)]
    pub fn __log10f(x: f32) -> f32 {
        __log2f(x) * LOG10_2
    }

    /// tan x as `__sinf(x) / __cosf(x)` with `div.approx.f32` (CUDA's `__tanf`).
    #[inline(always)]
    pub fn __tanf(x: f32) -> f32 {
        __fdividef(__sinf(x), __cosf(x))
    }

    /// (sin x, cos x) with `sin.approx.f32` and `cos.approx.f32` (CUDA's `__sincosf`).
    #[inline(always)]
    pub fn __sincosf(x: f32) -> (f32, f32) {
        (__sinf(x), __cosf(x))
    }

    /// x^y as 2^(y·log₂ x) with the approximate instructions (CUDA's `__powf`); x > 0.
    #[inline(always)]
    pub fn __powf(x: f32, y: f32) -> f32 {
        exp2f(y * __log2f(x))
    }

    /// x·y + z rounded once to nearest even (`fma.rn.f32`; CUDA's `__fmaf_rn`).
    #[inline(always)]
    pub fn __fmaf_rn(x: f32, y: f32, z: f32) -> f32 {
        on_gpu!("__fmaf_rn", {
            let result: f32;
            // SAFETY: an arithmetic instruction on registers: no memory, no traps.
            unsafe {
                core::arch::asm!(
                    "fma.rn.f32 {r}, {x}, {y}, {z};",
                    r = out(reg32) result,
                    x = in(reg32) x,
                    y = in(reg32) y,
                    z = in(reg32) z,
                    options(pure, nomem, nostack, preserves_flags),
                )
            };
            result
        })
    }

    /// x·y + z rounded once to nearest even (`fma.rn.f64`; CUDA's `__fma_rn`).
    #[inline(always)]
    pub fn __fma_rn(x: f64, y: f64, z: f64) -> f64 {
        on_gpu!("__fma_rn", {
            let result: f64;
            // SAFETY: an arithmetic instruction on registers: no memory, no traps.
            unsafe {
                core::arch::asm!(
                    "fma.rn.f64 {r}, {x}, {y}, {z};",
                    r = out(reg64) result,
                    x = in(reg64) x,
                    y = in(reg64) y,
                    z = in(reg64) z,
                    options(pure, nomem, nostack, preserves_flags),
                )
            };
            result
        })
    }
}
