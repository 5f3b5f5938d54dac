//! The CPU references against known answers, and the error bounds against `f32` computations
//! in other orders (what the GPU's results are held to).

use cookbook::{cpu, gpu, random::Random};

/// A fixed seed: these tests must not depend on the clock.
fn random() -> Random {
    Random::new(0x5eed_c00c_b00c)
}

#[test]
fn sum_bound_holds_for_f32_sums_in_several_orders() {
    let x = random().floats(4099, -1.0, 1.0);
    let (exact, bound) = cpu::sum(&x);
    assert!(bound > 0.0);
    let sequential: f32 = x.iter().sum();
    let reversed: f32 = x.iter().rev().sum();
    // Strided, as the kernel's grid-stride loop with 7 threads, then the partials.
    let strided: f32 = (0..7).map(|t| x.iter().skip(t).step_by(7).sum::<f32>()).sum();
    for got in [sequential, reversed, strided] {
        assert!((got as f64 - exact).abs() <= bound, "{got} vs {exact} ± {bound}");
    }
    assert_eq!(cpu::sum(&[1.0, 2.0, 3.5]), (6.5, 1.01 * 2.0 * cpu::F32_UNIT_ROUNDOFF * 6.5));
}

#[test]
fn transpose_moves_each_element_and_twice_is_the_identity() {
    // 3 columns, 2 rows.
    let input = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    assert_eq!(cpu::transpose(&input, 3, 2), [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    let (width, height) = (37, 53);
    let x = random().floats(width * height, -1.0, 1.0);
    assert_eq!(cpu::transpose(&cpu::transpose(&x, width, height), height, width), x);
}

#[test]
fn histogram_counts_every_byte() {
    let bins = cpu::histogram_256(&[0x0102_0304, 0x0101_0101, 0xff00_00ff]);
    assert_eq!((bins[1], bins[2], bins[3], bins[4], bins[0], bins[255]), (5, 1, 1, 1, 2, 2));
    let words = random().words(3001);
    assert_eq!(cpu::histogram_256(&words).iter().map(|&c| c as usize).sum::<usize>(), 4 * 3001);
}

#[test]
fn exclusive_scan_of_ones_counts_and_wraps() {
    assert_eq!(cpu::exclusive_scan(&[1; 5]), [0, 1, 2, 3, 4]);
    assert_eq!(cpu::exclusive_scan(&[u32::MAX, 2, 5]), [0, u32::MAX, 1]);
    assert!(cpu::exclusive_scan(&[]).is_empty());
}

#[test]
fn sgemm_reference_is_exact_on_small_integers_and_bounds_f32_dot_products() {
    // [1 2 3; 4 5 6] · [7 8; 9 10; 11 12] = [58 64; 139 154]
    let c = cpu::sgemm(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[7.0, 8.0, 9.0, 10.0, 11.0, 12.0], 2, 2, 3);
    assert_eq!(c.iter().map(|e| e.0).collect::<Vec<_>>(), [58.0, 64.0, 139.0, 154.0]);
    let (m, n, k) = (5, 7, 301);
    let mut r = random();
    let (a, b) = (r.floats(m * k, -1.0, 1.0), r.floats(k * n, -1.0, 1.0));
    for (i, (exact, bound)) in cpu::sgemm(&a, &b, m, n, k).into_iter().enumerate() {
        let (row, col) = (i / n, i % n);
        // FMAs along k, forwards and backwards.
        let forwards = (0..k).fold(0.0f32, |acc, p| a[row * k + p].mul_add(b[p * n + col], acc));
        let backwards = (0..k).rev().fold(0.0f32, |acc, p| a[row * k + p].mul_add(b[p * n + col], acc));
        for got in [forwards, backwards] {
            assert!((got as f64 - exact).abs() <= bound, "({row}, {col}): {got} vs {exact} ± {bound}");
        }
    }
}

/// The kernel's arithmetic in `f32` on the CPU, with a correctly rounded `1/√x` perturbed by
/// the approximate instruction's largest error: inside the reference's bound.
fn nbody_f32(bodies: &[[f32; 4]], i: usize, softening2: f32, rsqrt_error: f32) -> [f32; 3] {
    let me = bodies[i];
    let mut a = [0.0f32; 3];
    for other in bodies {
        let d = [0, 1, 2].map(|c| other[c] - me[c]);
        let d2 = d[0].mul_add(d[0], d[1].mul_add(d[1], d[2].mul_add(d[2], softening2)));
        let inverse = (1.0 / d2.sqrt()) * (1.0 + rsqrt_error);
        let s = other[3] * (inverse * inverse * inverse);
        for c in 0..3 {
            a[c] = d[c].mul_add(s, a[c]);
        }
    }
    a
}

#[test]
fn nbody_reference_matches_two_bodies_and_bounds_the_f32_kernel_arithmetic() {
    // Two bodies 2 apart on x, masses 3 and 5, no softening: a₀ = 5/4 towards +x, a₁ = 3/4 towards −x.
    let bodies = [[0.0, 0.0, 0.0, 3.0], [2.0, 0.0, 0.0, 5.0]];
    assert_eq!(cpu::nbody_acceleration(&bodies, 0, 0.0).0, [1.25, 0.0, 0.0]);
    assert_eq!(cpu::nbody_acceleration(&bodies, 1, 0.0).0, [-0.75, 0.0, 0.0]);
    let mut r = random();
    let bodies: Vec<[f32; 4]> = (0..301)
        .map(|_| [r.uniform(-1.0, 1.0), r.uniform(-1.0, 1.0), r.uniform(-1.0, 1.0), r.uniform(0.5, 1.5)])
        .collect();
    let softening2 = 1e-3;
    for i in [0, 150, 300] {
        let (exact, bound) = cpu::nbody_acceleration(&bodies, i, softening2);
        for error in [-cpu::RSQRT_APPROX_RELATIVE_ERROR as f32, 0.0, cpu::RSQRT_APPROX_RELATIVE_ERROR as f32]
        {
            let got = nbody_f32(&bodies, i, softening2, error);
            for c in 0..3 {
                assert!(
                    (got[c] as f64 - exact[c]).abs() <= bound[c],
                    "body {i}[{c}]: {} vs {} ± {}",
                    got[c],
                    exact[c],
                    bound[c]
                );
            }
        }
    }
}

#[test]
fn softmax_rows_sum_to_one_and_bound_the_f32_kernel_arithmetic() {
    // [0, ln 2] → [1/3, 2/3].
    let y = cpu::softmax_rows(&[0.0, std::f32::consts::LN_2], 2);
    assert!((y[0] - 1.0 / 3.0).abs() < 1e-7 && (y[1] - 2.0 / 3.0).abs() < 1e-7);
    let cols = 333;
    let x = random().floats(3 * cols, -8.0, 8.0);
    let y = cpu::softmax_rows(&x, cols);
    let bound = cpu::softmax_relative_bound(cols, 16.0);
    for (row, (xs, ys)) in x.chunks(cols).zip(y.chunks(cols)).enumerate() {
        assert!((ys.iter().sum::<f64>() - 1.0).abs() < 1e-12, "row {row}");
        // The kernel's order in f32: lanes stride by 32, then a butterfly of the 32 partials.
        let max = xs.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v));
        let lane_sums: Vec<f32> =
            (0..32).map(|lane| xs.iter().skip(lane).step_by(32).map(|&v| (v - max).exp()).sum()).collect();
        let sum: f32 = lane_sums.iter().sum();
        for (&xv, &yv) in xs.iter().zip(ys) {
            let got = (xv - max).exp() * (1.0 / sum);
            assert!((got as f64 - yv).abs() <= bound * yv, "row {row}: {got} vs {yv}");
        }
    }
}

#[test]
fn saxpy_is_one_fused_multiply_add() {
    assert_eq!(cpu::saxpy(2.0, &[1.0, -3.0], &[0.5, 1.0]), [2.5, -5.0]);
    // 1 + 2⁻²³ squared is 1 + 2⁻²² + 2⁻⁴⁶: a separate multiply rounds the last term away.
    let x = 1.0 + f32::EPSILON;
    assert_eq!(cpu::saxpy(x, &[x], &[-(1.0 + 2.0 * f32::EPSILON)]), [f32::EPSILON * f32::EPSILON]);
}

#[test]
fn jacobi_keeps_linear_fields_and_spreads_a_spike() {
    let (width, height) = (9, 7);
    let linear: Vec<f32> =
        (0..width * height).map(|i| (i % width) as f32 + 2.0 * (i / width) as f32).collect();
    assert_eq!(cpu::jacobi_5pt(&linear, width, height), linear);
    let mut spike = vec![0.0; width * height];
    spike[3 * width + 4] = 1.0;
    let out = cpu::jacobi_5pt(&spike, width, height);
    for (i, v) in out.iter().enumerate() {
        let expected = if [3 * width + 3, 3 * width + 5, 2 * width + 4, 4 * width + 4].contains(&i) {
            0.25
        } else {
            0.0
        };
        assert_eq!(*v, expected, "cell {i}");
    }
}

#[test]
fn launch_shapes_cover_the_data() {
    let reduce = gpu::reduce_config(1 << 26);
    assert_eq!((reduce.grid_dim.0, reduce.block_dim.0), (2048, 256));
    assert_eq!(gpu::reduce_config(1).grid_dim.0, 1);
    let transpose = gpu::transpose_config(33, 65);
    assert_eq!((transpose.grid_dim, transpose.block_dim), ((2, 3, 1), (32, 8, 1)));
    assert_eq!(gpu::scan_tiles_for(2048), 1);
    assert_eq!(gpu::scan_tiles_for(2049), 2);
    assert_eq!(gpu::scan_tiles_for(0), 1);
    assert!(
        gpu::sgemm_shape_ok(128, 64, 48)
            && !gpu::sgemm_shape_ok(100, 64, 48)
            && !gpu::sgemm_shape_ok(64, 64, 8)
    );
    assert_eq!(gpu::sgemm_config(128, 192).grid_dim, (3, 2, 1));
    // 8 rows per block: 17 rows take 3 blocks.
    assert_eq!(gpu::softmax_config(17).grid_dim.0, 3);
    assert_eq!(gpu::jacobi_config(33, 9).grid_dim, (2, 2, 1));
}

#[test]
fn gemm_nt_reference_is_exact_on_small_integers_and_reads_b_by_rows() {
    // A = [1 2; 3 4], B (n × k) = [5 6; 7 8]: A·Bᵀ = [1·5+2·6 1·7+2·8; 3·5+4·6 3·7+4·8].
    let c = cpu::gemm_nt(&[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0], 2, 2, 2);
    assert_eq!(c.iter().map(|e| e.0).collect::<Vec<_>>(), [17.0, 23.0, 39.0, 53.0]);
    // The bound: twice the rounded sum's, for tensor cores that truncate.
    assert_eq!(c[0].1, 2.02 * 2.0 * cpu::F32_UNIT_ROUNDOFF * 17.0);
    // A truncating f32 sum (each partial sum rounded toward zero) stays inside it.
    let (m, n, k) = (3, 4, 256);
    let mut r = random();
    let (a, b) = (r.floats(m * k, -1.0, 1.0), r.floats(n * k, -1.0, 1.0));
    let truncate = |x: f64| {
        let f = x as f32;
        if (f as f64).abs() > x.abs() { f32::from_bits(f.to_bits() - 1) } else { f }
    };
    for (i, (exact, bound)) in cpu::gemm_nt(&a, &b, m, n, k).into_iter().enumerate() {
        let (row, col) = (i / n, i % n);
        let mut sum = 0.0f32;
        for p in 0..k {
            sum = truncate(sum as f64 + a[row * k + p] as f64 * b[col * k + p] as f64);
        }
        assert!((sum as f64 - exact).abs() <= bound, "({row}, {col}): {sum} vs {exact} ± {bound}");
    }
}

#[test]
fn histogram_1024_counts_each_value_modulo_1024_and_scale_rounds_once() {
    let bins = cpu::histogram_1024(&[0, 1024, 1023, 5, 2053]);
    assert_eq!((bins[0], bins[1023], bins[5], bins[1]), (2, 1, 2, 0));
    assert_eq!(bins.iter().sum::<u32>(), 5);
    assert_eq!(cpu::scale(3.0, &[0.1, -2.0]), [3.0 * 0.1f32, -6.0]);
}

#[test]
fn hgemm_grid_has_a_block_per_64_by_64_tile_of_c() {
    assert_eq!(gpu::hgemm_config(65, 129).grid_dim, (3, 2, 1));
    assert_eq!(gpu::hgemm_config(64, 64).grid_dim, (1, 1, 1));
}

#[test]
fn cluster_sum_order_is_the_kernels_butterflies_and_within_the_sum_bound() {
    // Small integers: every order is exact.
    let ints: Vec<f32> = (1..=5000).map(|i| i as f32).collect();
    assert_eq!(cpu::cluster_sum_order(&ints, 2, 8, 256), 12_502_500.0);
    assert_eq!(cpu::cluster_sum_order(&ints, 3, 2, 64), 12_502_500.0);
    assert_eq!(cpu::cluster_sum_order(&[], 1, 8, 256), 0.0);
    // The butterfly's order, not a sequential one: lanes 1 and 3 meet first (1 + 1 = 2), then
    // 2²⁴ + 2 is exact; a sequential sum loses both ones to rounding (2²⁴ + 1 ties to 2²⁴).
    let order = [16_777_216.0f32, 1.0, 0.0, 1.0];
    assert_eq!(order.iter().sum::<f32>(), 16_777_216.0);
    assert_eq!(cpu::cluster_sum_order(&order, 1, 8, 256), 16_777_218.0);
    // Random values, several shapes: within the bound any f32 order keeps.
    let x = random().floats(100_003, -1.0, 1.0);
    let (exact, bound) = cpu::sum(&x);
    for (clusters, cluster, block) in [(1, 8, 256), (5, 8, 256), (3, 2, 64), (1, 1, 32)] {
        let got = cpu::cluster_sum_order(&x, clusters, cluster, block);
        assert!(
            (got as f64 - exact).abs() <= bound,
            "{clusters}×{cluster}×{block}: {got} vs {exact} ± {bound}"
        );
    }
}

#[test]
fn jacobi_7pt_is_zero_outside_the_grid_and_spreads_a_spike_along_each_axis() {
    // A field of ones: each cell (1/6)·(its neighbours inside the grid).
    let (nx, ny, nz) = (8, 3, 5);
    let ones = cpu::jacobi_7pt(&vec![1.0; nx * ny * nz], nx, ny, nz);
    for z in 0..nz {
        for y in 0..ny {
            for x in 0..nx {
                let inside = |v: usize, n: usize| (v > 0) as u32 + (v + 1 < n) as u32;
                let count = inside(x, nx) + inside(y, ny) + inside(z, nz);
                let expected = (1.0f32 / 6.0) * count as f32;
                assert_eq!(ones[(z * ny + y) * nx + x], expected, "({x}, {y}, {z})");
            }
        }
    }
    assert_eq!(ones[(2 * ny + 1) * nx + 3], 1.0, "an interior cell: six sixths");
    // A spike at (1, 2, 3) of a 5 × 4 × 6 grid reaches its six neighbours only.
    let (nx, ny, nz) = (5, 4, 6);
    let index = |x: usize, y: usize, z: usize| (z * ny + y) * nx + x;
    let mut spike = vec![0.0; nx * ny * nz];
    spike[index(1, 2, 3)] = 1.0;
    let out = cpu::jacobi_7pt(&spike, nx, ny, nz);
    let neighbours =
        [index(0, 2, 3), index(2, 2, 3), index(1, 1, 3), index(1, 3, 3), index(1, 2, 2), index(1, 2, 4)];
    for (i, v) in out.iter().enumerate() {
        let expected = if neighbours.contains(&i) { 1.0 / 6.0 } else { 0.0 };
        assert_eq!(*v, expected, "cell {i}");
    }
}

#[test]
fn hopper_reduction_and_stencil_launches_cover_the_data_and_refuse_rows_tma_cannot_address() {
    use cookbook::hopper;
    assert_eq!(hopper::cluster_reduce_clusters(1), 1);
    assert_eq!(hopper::cluster_reduce_clusters(1 << 26), 256);
    let (config, cluster) = hopper::cluster_reduce_config(3);
    assert_eq!((config.grid_dim, config.block_dim, cluster), ((24, 1, 1), (256, 1, 1), (8, 1, 1)));
    let stencil = hopper::tma_stencil_config(36, 9, 17);
    assert_eq!((stencil.grid_dim, stencil.block_dim), ((2, 2, 3), (32, 8, 1)));
    // The box is the 32 × 8 × 8 tile and a halo of one, its rows rounded up to 16 bytes.
    let spec = hopper::tma_stencil_spec(36, 9, 17);
    assert_eq!((spec.dims, spec.box_dims), ([36, 9, 17], [40, 10, 10]));
    assert!(spec.checked(4).is_ok());
    assert!(hopper::tma_stencil_check(36 * 9 * 17, 36, 9, 17).is_ok());
    for (cells, (nx, ny, nz), says) in [
        (33 * 2 * 2, (33, 2, 2), "nx = 33 is not a multiple of 4"),
        (10, (4, 2, 2), "10 cells, expected 4 × 2 × 2 = 16"),
        (0, (4, 0, 2), "an empty grid"),
    ] {
        let error = hopper::tma_stencil_check(cells, nx, ny, nz).unwrap_err().to_string();
        assert!(error.contains(says), "{error}");
    }
}

#[test]
fn tiled_stencil_and_look_back_scan_shapes_cover_the_data() {
    // The tiled stencil: blocks of 32×8 (the kernels place their tile by it), a 34×10 tile.
    assert_eq!(cookbook_kernels::TILED_BLOCK, (32, 8));
    assert_eq!(cookbook_kernels::TILED_TILE, (34, 10));
    let tiled = gpu::jacobi_tiled_config(33, 9);
    assert_eq!((tiled.grid_dim, tiled.block_dim), ((2, 2, 1), (32, 8, 1)));
    assert_eq!(gpu::jacobi_tiled_config(8192, 8192).grid_dim, (256, 1024, 1));
    // The look-back scan: a block of 256 per tile of 2048, a status word per tile and the
    // ticket after them.
    assert_eq!(cookbook_kernels::LOOKBACK_TILE, 2048);
    assert_eq!(gpu::scan_lookback_tiles(2048), 1);
    assert_eq!(gpu::scan_lookback_tiles(2049), 2);
    assert_eq!(gpu::scan_lookback_tiles(0), 1);
    assert_eq!(gpu::scan_lookback_config(1 << 26).grid_dim, (32_768, 1, 1));
    assert_eq!(gpu::scan_lookback_config(5).block_dim, (256, 1, 1));
    assert_eq!(gpu::scan_lookback_state_len(4097), 4);
}

#[test]
fn look_back_status_words_keep_flag_and_value_apart() {
    use cookbook_kernels::{LOOKBACK_FLAG_AGGREGATE as AGGREGATE, LOOKBACK_FLAG_PREFIX as PREFIX};
    // The kernel's tests: `word >> 32 != 0` (a flag is set), `word >= PREFIX` (an inclusive
    // prefix), `word as u32` (the value). An aggregate of u32::MAX is not a prefix; a prefix
    // of 0 is one; a zeroed word has no flag.
    for value in [0u32, 1, 0x8000_0000, u32::MAX] {
        let (aggregate, prefix) = (AGGREGATE | value as u64, PREFIX | value as u64);
        assert!(aggregate >> 32 != 0 && aggregate < PREFIX, "{value:#x}");
        assert!(prefix >> 32 != 0 && prefix >= PREFIX, "{value:#x}");
        assert_eq!((aggregate as u32, prefix as u32), (value, value));
    }
    assert_eq!(0u64 >> 32, 0);
}

/// The cluster smoothing's reference on a case worked by hand: a spike of 3 in the middle of
/// a 4-cell segment spreads to 1, 1, 1 after one step (each `3 · (1/3)` rounds to exactly 1),
/// the segment's ends see zero beyond them, and the next segment is smoothed on its own.
#[test]
fn cluster_smooth_spreads_a_spike_within_its_segment_only() {
    let x = [0.0, 3.0, 0.0, 0.0, 6.0, 0.0, 0.0, 0.0];
    assert_eq!(cpu::cluster_smooth(&x, 4, 0), x);
    assert_eq!(cpu::cluster_smooth(&x, 4, 1), [1.0, 1.0, 1.0, 0.0, 2.0, 2.0, 0.0, 0.0]);
    // Step two: (0 + 1 + 1)/3, (1 + 1 + 1)/3, (1 + 1 + 0)/3, (1 + 0)/3; (2 + 2)/3, ...
    let third = 1.0f32 / 3.0;
    let two_thirds = 2.0f32 * third;
    assert_eq!(
        cpu::cluster_smooth(&x, 4, 2),
        [two_thirds, 1.0, two_thirds, third, 4.0 * third, 4.0 * third, 2.0 * third, 0.0]
    );
}
