//! `unroll!`: a loop of constant trip count, unrolled as `#pragma unroll` does.
//!
//! ```ignore
//! let mut sum = 0.0;
//! ptxkit_device::unroll!(for k in 0..4 {
//!     sum += tile[k] * weights[k];
//! });
//! ```
//! is written out as four blocks, `k` a constant in each (`let k = 0;`, ...). The bounds are
//! integer literals (`0..N` with `N` a constant cannot be seen by a macro: write the number),
//! `a..b` or `a..=b`, with an optional suffix that types `k` (`0u32..4`); at most 1024
//! iterations. `break` and `continue` are rejected (use an `if` around the rest of the body).
//! LLVM unrolls most constant-count loops by itself; `unroll!` is for the ones it will not
//! (long bodies, loops whose index selects registers), and makes the unrolling visible.

/// `for i in a..b { body }` with integer-literal bounds, written out once per iteration (see
/// the module documentation of `ptxkit_device`'s `unroll`): CUDA C's `#pragma unroll`.
///
/// ```ignore
/// ptxkit_device::unroll!(for k in 0..4 {
///     sum += tile[k] * weights[k];
/// });
/// ```
// A `macro_rules!` that forwards to the proc macro `ptxkit_macros::unroll`: `#[macro_export]`
// puts it at the crate root although this module is private.
#[macro_export]
macro_rules! unroll {
    ($($loop:tt)*) => {
        $crate::debug::__unroll_proc_macro!($($loop)*)
    };
}
