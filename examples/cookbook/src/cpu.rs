//! The CPU references: each kernel's result computed the plain way, and for the float kernels
//! the error bound a correct GPU result keeps to (its summation order differs from the
//! reference's).

/// The unit roundoff of `f32` (2⁻²⁴): one rounding changes a value by at most this fraction.
pub const F32_UNIT_ROUNDOFF: f64 = 1.0 / (1u64 << 24) as f64;

/// The sum of `x`, in `f64`, and the bound on any `f32` summation's error: summed in any order
/// with `n - 1` roundings, each of at most [`F32_UNIT_ROUNDOFF`] of a partial sum no larger than
/// `Σ|x|`, an `f32` sum lies within `(n - 1)·u·Σ|x|` of the exact one (to first order; the
/// factor 1.01 covers the rest for `n·u` ≪ 1).
pub fn sum(x: &[f32]) -> (f64, f64) {
    let exact: f64 = x.iter().map(|&v| v as f64).sum();
    let magnitude: f64 = x.iter().map(|&v| (v as f64).abs()).sum();
    let bound = 1.01 * x.len().saturating_sub(1) as f64 * F32_UNIT_ROUNDOFF * magnitude;
    (exact, bound)
}

/// `input` (`height` rows of `width`) transposed: `width` rows of `height`.
pub fn transpose(input: &[f32], width: usize, height: usize) -> Vec<f32> {
    assert_eq!(input.len(), width * height);
    let mut out = vec![0.0; input.len()];
    for y in 0..height {
        for x in 0..width {
            out[x * height + y] = input[y * width + x];
        }
    }
    out
}

/// How many times each byte value occurs among the bytes of `words` (each word's four bytes,
/// little-endian).
pub fn histogram_256(words: &[u32]) -> [u32; 256] {
    let mut bins = [0u32; 256];
    for word in words {
        for byte in word.to_le_bytes() {
            bins[byte as usize] += 1;
        }
    }
    bins
}

/// The exclusive prefix sum of `input` (wrapping, as `u32` arithmetic on the GPU).
pub fn exclusive_scan(input: &[u32]) -> Vec<u32> {
    let mut running = 0u32;
    input
        .iter()
        .map(|&v| {
            let before = running;
            running = running.wrapping_add(v);
            before
        })
        .collect()
}

/// Element (`row`, `col`) of `a · b` (`a` is `m × k`, `b` is `k × n`, row-major) in `f64`, and
/// the bound on an `f32` result's error: a dot product of length `k` accumulated with FMAs in
/// any order lies within `k·u·Σ|a_ip·b_pj|` of the exact one (×1.01, as [`sum`]).
pub fn sgemm_entry(a: &[f32], b: &[f32], n: usize, k: usize, row: usize, col: usize) -> (f64, f64) {
    let (mut exact, mut magnitude) = (0.0f64, 0.0f64);
    for p in 0..k {
        let product = a[row * k + p] as f64 * b[p * n + col] as f64;
        exact += product;
        magnitude += product.abs();
    }
    (exact, 1.01 * k as f64 * F32_UNIT_ROUNDOFF * magnitude)
}

/// `a · b` (`m × k` times `k × n`, row-major) in `f64`, each entry with its bound
/// ([`sgemm_entry`]).
pub fn sgemm(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<(f64, f64)> {
    assert_eq!((a.len(), b.len()), (m * k, k * n));
    (0..m * n).map(|i| sgemm_entry(a, b, n, k, i / n, i % n)).collect()
}

/// The relative error of the GPU's `rsqrt.approx.f32` (the PTX ISA: at most 2⁻²²·⁹, rounded up).
pub const RSQRT_APPROX_RELATIVE_ERROR: f64 = 1.5e-7;

/// The acceleration of body `i` (each body `[x, y, z, mass]`) from all of `bodies` under
/// softened gravity (G = 1): `Σ_j m_j·d_ij / (|d_ij|² + softening²)^{3/2}`, in `f64`, with
/// the bound on an `f32` result's error per component. Each term's relative error is below
/// `3·RSQRT + 16u`: the approximate reciprocal square root, cubed (3·RSQRT), and the roundings
/// (the differences, u each, twice over in |d|²; the three FMAs of |d|², halved by the square
/// root; the two multiplies of the cube, the mass, the final FMA: about 11.5u, rounded up). The
/// sum of `n` terms adds `n·u` of `Σ|term|`.
pub fn nbody_acceleration(bodies: &[[f32; 4]], i: usize, softening2: f32) -> ([f64; 3], [f64; 3]) {
    let me = bodies[i];
    let (mut acc, mut magnitude) = ([0.0f64; 3], [0.0f64; 3]);
    for other in bodies {
        let d = [0, 1, 2].map(|c| (other[c] - me[c]) as f64);
        let d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + softening2 as f64;
        if d2 == 0.0 {
            // A body on top of another without softening (itself): no direction, no force.
            continue;
        }
        let s = other[3] as f64 / (d2 * d2.sqrt());
        for c in 0..3 {
            acc[c] += d[c] * s;
            magnitude[c] += (d[c] * s).abs();
        }
    }
    let per_term = 3.0 * RSQRT_APPROX_RELATIVE_ERROR + 16.0 * F32_UNIT_ROUNDOFF;
    let relative = 1.01 * (per_term + bodies.len() as f64 * F32_UNIT_ROUNDOFF);
    (acc, magnitude.map(|m| relative * m + f32::MIN_POSITIVE as f64))
}

/// The softmax of each row of a `rows × cols` matrix, in `f64`: `exp(x - max) / Σ exp(x - max)`.
pub fn softmax_rows(input: &[f32], cols: usize) -> Vec<f64> {
    assert!(cols > 0 && input.len().is_multiple_of(cols));
    let mut out = Vec::with_capacity(input.len());
    for row in input.chunks(cols) {
        let max = row.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v)) as f64;
        let sum: f64 = row.iter().map(|&v| (v as f64 - max).exp()).sum();
        out.extend(row.iter().map(|&v| (v as f64 - max).exp() / sum));
    }
    out
}

/// The bound on an `f32` softmax entry's relative error for rows of `cols` values within
/// `spread` of their maximum: the sum of `cols` exponentials (`cols·u`), `expf`'s error (2
/// ulp, twice: in the sum and in the entry), the rounding of `x − max` magnified by the
/// exponential (`spread·u`) and of the final product and reciprocal (2u), doubled for safety.
pub fn softmax_relative_bound(cols: usize, spread: f64) -> f64 {
    2.0 * (cols as f64 + 4.0 * 2.0 + 2.0 * spread + 2.0) * F32_UNIT_ROUNDOFF
}

/// `a·x + y` with one rounding (a fused multiply-add), as the GPU kernels compute it: equal bit
/// for bit.
pub fn saxpy(a: f32, x: &[f32], y: &[f32]) -> Vec<f32> {
    assert_eq!(x.len(), y.len());
    x.iter().zip(y).map(|(&x, &y)| a.mul_add(x, y)).collect()
}

/// One Jacobi sweep of Laplace's equation on a `width × height` grid: each interior cell the
/// mean of its four neighbours, `0.25·((left + right) + (up + down))` in `f32`, the order the
/// kernels use (so equal bit for bit); boundary cells copied.
pub fn jacobi_5pt(input: &[f32], width: usize, height: usize) -> Vec<f32> {
    assert_eq!(input.len(), width * height);
    let mut out = input.to_vec();
    for y in 1..height.saturating_sub(1) {
        for x in 1..width.saturating_sub(1) {
            let i = y * width + x;
            out[i] = 0.25 * ((input[i - 1] + input[i + 1]) + (input[i - width] + input[i + width]));
        }
    }
    out
}

/// `a · bᵀ` (`a` is `m × k`, `b` is `n × k`, row-major: the half-precision GEMM's "NT" layout)
/// from values that are exact halves, in `f64`, each entry with the bound on a tensor-core
/// result's error: the products of two halves are exact in `f32`, and the tensor cores' f32
/// sums may truncate instead of rounding (up to 2u each, Fasi et al., "Numerical behavior of
/// NVIDIA tensor cores", 2021), so `2·k·u·Σ|a_ip·b_jp|` (×1.01, as [`sum`]).
pub fn gemm_nt(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<(f64, f64)> {
    assert_eq!((a.len(), b.len()), (m * k, n * k));
    (0..m * n)
        .map(|i| {
            let (row, col) = (i / n, i % n);
            let (mut exact, mut magnitude) = (0.0f64, 0.0f64);
            for p in 0..k {
                let product = a[row * k + p] as f64 * b[col * k + p] as f64;
                exact += product;
                magnitude += product.abs();
            }
            (exact, 2.02 * k as f64 * F32_UNIT_ROUNDOFF * magnitude)
        })
        .collect()
}

/// `a·x`, one rounding per element (as the bulk-copy kernel computes it).
pub fn scale(a: f32, x: &[f32]) -> Vec<f32> {
    x.iter().map(|&v| a * v).collect()
}

/// `steps` steps of `v ← a·v + b` on each value (a multiply, then an add, each rounded: the
/// chain kernel's order).
pub fn chain(x: &[f32], a: f32, b: f32, steps: u32) -> Vec<f32> {
    x.iter().map(|&v| (0..steps).fold(v, |v, _| a * v + b)).collect()
}

/// `steps` smoothing steps `(left + centre + right) · (1/3)` (in that order, in `f32`) of each
/// `segment`-cell segment of `x` on its own, zero outside it: `cluster_smooth_f32`'s result.
pub fn cluster_smooth(x: &[f32], segment: usize, steps: u32) -> Vec<f32> {
    let mut out = x.to_vec();
    for part in out.chunks_mut(segment.max(1)) {
        for _ in 0..steps {
            let before = part.to_vec();
            for (i, cell) in part.iter_mut().enumerate() {
                let left = if i > 0 { before[i - 1] } else { 0.0 };
                let right = before.get(i + 1).copied().unwrap_or(0.0);
                *cell = (left + before[i] + right) * (1.0 / 3.0);
            }
        }
    }
    out
}

/// How many of `values` fall in each of 1024 bins (`v % 1024`).
pub fn histogram_1024(values: &[u32]) -> Vec<u32> {
    let mut bins = vec![0u32; 1024];
    for &v in values {
        bins[(v % 1024) as usize] += 1;
    }
    bins
}

/// The sum of `x` in `f32` in `cluster_reduce_f32`'s order for a grid of `clusters` clusters
/// of `cluster` blocks of `block` threads (`block` a multiple of 32, at most 32 warps; `cluster`
/// at most 32): each thread's grid-stride sum, the warp's `shfl_xor` butterfly (offsets 16 down
/// to 1, lane 0's value), the block's warp sums by the same butterfly (lanes past the warps
/// 0), the cluster's block sums likewise, then the clusters' sums added in order (on the GPU
/// the atomics' order varies: with one cluster it is this value exactly). Within [`sum`]'s
/// bound, as every order is.
pub fn cluster_sum_order(x: &[f32], clusters: usize, cluster: usize, block: usize) -> f32 {
    assert!(block.is_multiple_of(32) && block / 32 <= 32 && (1..=32).contains(&cluster));
    /// Lane 0's value after the butterfly over 32 lanes.
    fn butterfly(mut lanes: [f32; 32]) -> f32 {
        let mut offset = 16;
        while offset > 0 {
            let before = lanes;
            for (l, lane) in lanes.iter_mut().enumerate() {
                *lane = before[l] + before[l ^ offset];
            }
            offset /= 2;
        }
        lanes[0]
    }
    let stride = clusters * cluster * block;
    let thread_sum = |g: usize| x.iter().skip(g).step_by(stride).fold(0.0f32, |acc, &v| acc + v);
    let mut total = 0.0f32;
    for c in 0..clusters {
        let mut block_sums = [0.0f32; 32];
        for (rank, block_sum) in block_sums.iter_mut().enumerate().take(cluster) {
            let first = (c * cluster + rank) * block;
            let mut warp_sums = [0.0f32; 32];
            for (w, warp_sum) in warp_sums.iter_mut().enumerate().take(block / 32) {
                *warp_sum = butterfly(std::array::from_fn(|l| thread_sum(first + w * 32 + l)));
            }
            *block_sum = butterfly(warp_sums);
        }
        total += butterfly(block_sums);
    }
    total
}

/// One Jacobi step of Laplace's equation on an `nx × ny × nz` grid (x innermost, then y),
/// zero outside the grid: every cell `(1/6)·(((west + east) + (south + north)) + (below +
/// above))` in `f32`, a neighbour past a face 0, in the order `tma_stencil_7pt` uses (so equal
/// bit for bit).
pub fn jacobi_7pt(input: &[f32], nx: usize, ny: usize, nz: usize) -> Vec<f32> {
    assert_eq!(input.len(), nx * ny * nz);
    const SIXTH: f32 = 1.0 / 6.0;
    let at = |x: usize, y: usize, z: usize, dx: isize, dy: isize, dz: isize| -> f32 {
        let (x, y, z) = (x as isize + dx, y as isize + dy, z as isize + dz);
        let inside =
            (0..nx as isize).contains(&x) && (0..ny as isize).contains(&y) && (0..nz as isize).contains(&z);
        if inside { input[(z as usize * ny + y as usize) * nx + x as usize] } else { 0.0 }
    };
    let mut out = vec![0.0; input.len()];
    for z in 0..nz {
        for y in 0..ny {
            for x in 0..nx {
                let (west, east) = (at(x, y, z, -1, 0, 0), at(x, y, z, 1, 0, 0));
                let (south, north) = (at(x, y, z, 0, -1, 0), at(x, y, z, 0, 1, 0));
                let (below, above) = (at(x, y, z, 0, 0, -1), at(x, y, z, 0, 0, 1));
                out[(z * ny + y) * nx + x] = SIXTH * (((west + east) + (south + north)) + (below + above));
            }
        }
    }
    out
}
