//! Check kernels: constant memory (`constant!`, `ConstantArray::load`).
//!
//! One thread per value (`n` values, any block size, a partial last block).

use ptxkit_device::{constant, kernel, thread};

/// How many coefficients [`CHECK_COEFFICIENTS`] holds (odd, so that `i % 37` wraps unevenly).
pub const COEFFICIENT_COUNT: usize = 37;

/// How many words [`CHECK_WORDS`] holds.
pub const WORD_COUNT: usize = 5;

constant!(
    /// The `f32` coefficients of [`const_scale_f32`], set by the host.
    pub CHECK_COEFFICIENTS: [f32; COEFFICIENT_COUNT]
);

constant!(
    /// The `u64` words of [`const_mix_u64`], set by the host.
    pub CHECK_WORDS: [u64; WORD_COUNT]
);

/// `out[i] = CHECK_COEFFICIENTS[i % 37] * x[i]` (`ld.const.f32`). One thread per value; bytes
/// per thread: 8 (x, out).
#[kernel]
pub unsafe fn const_scale_f32(x: *const f32, out: *mut f32, n: u32) {
    let i = thread::index_1d();
    if i >= n {
        return;
    }
    let coefficient = CHECK_COEFFICIENTS.load(i % COEFFICIENT_COUNT as u32);
    // SAFETY: `i < n` values of x and out (the host's contract).
    unsafe { *out.add(i as usize) = coefficient * *x.add(i as usize) };
}

/// `out[i] = CHECK_WORDS[i % 5] ^ x[i]` through the unchecked load (`ld.const.u64`). One
/// thread per value; bytes per thread: 16 (x, out).
#[kernel]
pub unsafe fn const_mix_u64(x: *const u64, out: *mut u64, n: u32) {
    let i = thread::index_1d();
    if i >= n {
        return;
    }
    // SAFETY: `i % 5 < 5` words; `i < n` values of x and out (the host's contract).
    unsafe {
        let word = CHECK_WORDS.load_unchecked(i % WORD_COUNT as u32);
        *out.add(i as usize) = word ^ *x.add(i as usize);
    }
}
