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
//!
//! With a factor first, the trip count may be known only at run time (CUDA C's
//! `#pragma unroll 4`):
//!
//! ```ignore
//! ptxkit_device::unroll!(4, for k in start..end {
//!     sum += row[k] * weights[k];
//! });
//! ```
//! is a loop whose iteration runs the body 4 times (`k` = `base`, `base + 1`, ...) while 4 or
//! more iterations are left, then the last 0 to 3 written out, each under its own test: one
//! loop in the PTX, the body 2N − 1 times in all. The bounds are any expressions of one
//! integer type, each evaluated once (`start` first); the range is half-open (`a..b`); the
//! factor is an integer literal from 1 to 64. `break` and `continue` are rejected as above.

/// `for i in a..b { body }` with integer-literal bounds, written out once per iteration (see
/// the module documentation of `ptxkit_device`'s `unroll`): CUDA C's `#pragma unroll`. With a
/// factor, `unroll!(N, for i in start..end { body })`, bounds known at run time: CUDA C's
/// `#pragma unroll N` (N iterations per trip of the loop, the rest written out).
///
/// ```ignore
/// ptxkit_device::unroll!(for k in 0..4 {
///     sum += tile[k] * weights[k];
/// });
/// ptxkit_device::unroll!(4, for k in 0..len {
///     sum += row[k] * weights[k];
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
