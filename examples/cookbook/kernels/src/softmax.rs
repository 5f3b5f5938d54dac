//! 7. Softmax over the rows of a matrix.

use ptxkit_device::{kernel, math, thread, warp};

/// Threads per block: 8 warps, so 8 rows per block.
pub const SOFTMAX_BLOCK: u32 = 256;

/// The maximum of `value` over the warp, in every lane (a butterfly of `shfl_xor`).
#[inline(always)]
fn warp_max(mut value: f32) -> f32 {
    let mut offset = warp::SIZE / 2;
    while offset > 0 {
        value = math::fmaxf(value, warp::shfl_xor(warp::FULL_MASK, value, offset, warp::SIZE));
        offset /= 2;
    }
    value
}

/// The sum of `value` over the warp, in every lane.
#[inline(always)]
fn warp_sum(mut value: f32) -> f32 {
    let mut offset = warp::SIZE / 2;
    while offset > 0 {
        value += warp::shfl_xor(warp::FULL_MASK, value, offset, warp::SIZE);
        offset /= 2;
    }
    value
}

/// `output[r][c] = exp(input[r][c] − max_r) / Σ_c exp(input[r][c] − max_r)` for a
/// `rows × cols` row-major matrix.
///
/// Thread mapping: one warp per row (8 rows per block of 256); the lanes stride along the row,
/// then reduce its maximum and its sum of exponentials with `warp::shfl_xor` butterflies.
/// Bytes per element: 8 to and from memory (one read, one write; the row is read three
/// times, the second and third from cache). Shows: warp reductions, `math::expf` (libdevice's,
/// as nvcc's `expf`), and that a warp leaves together (whole rows past the end return before
/// any shuffle).
#[kernel(launch_bounds(256))]
pub unsafe fn softmax_rows(input: *const f32, output: *mut f32, rows: u32, cols: u32) {
    let lane = warp::lane();
    let row = thread::block_idx_x() * (SOFTMAX_BLOCK / warp::SIZE) + thread::thread_idx_x() / warp::SIZE;
    if row >= rows {
        return;
    }
    let start = row as usize * cols as usize;
    // SAFETY: the host passes `rows × cols` elements in each buffer; `row < rows`, so the row
    // lies inside both.
    let (x, y) = unsafe { (input.add(start), output.add(start)) };
    let mut max = f32::NEG_INFINITY;
    let mut c = lane;
    while c < cols {
        // SAFETY: c < cols, inside the row.
        max = math::fmaxf(max, unsafe { *x.add(c as usize) });
        c += warp::SIZE;
    }
    let max = warp_max(max);
    let mut sum = 0.0f32;
    let mut c = lane;
    while c < cols {
        // SAFETY: as above.
        sum += math::expf(unsafe { *x.add(c as usize) } - max);
        c += warp::SIZE;
    }
    let inverse = 1.0 / warp_sum(sum);
    let mut c = lane;
    while c < cols {
        // SAFETY: as above; each element of the row is written by one lane.
        unsafe { *y.add(c as usize) = math::expf(*x.add(c as usize) - max) * inverse };
        c += warp::SIZE;
    }
}
