//! Each kernel on a GPU, on fresh random inputs (the seed printed) of odd sizes (partial blocks,
//! partial tiles, partial warps), against the CPU reference: bit for bit where the arithmetic
//! is exact or in the same order, within the derived bound where a float sum's order differs.

use std::sync::Arc;

use crate::common;

use cookbook::{
    IMAGES, cpu,
    gpu::{self, Flavour},
    random::Random,
};
use ptxkit_host::Gpu;

fn open() -> Arc<Gpu> {
    common::open(&IMAGES)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_reduce_sum_is_within_the_summation_bound() {
    let (gpu, mut r) = (open(), common::fresh());
    for n in [1, 31, 257, 100_003, 3_000_017] {
        let x = r.floats(n, -1.0, 1.0);
        let got = gpu::reduce_sum(&gpu, &x).unwrap();
        let (exact, bound) = cpu::sum(&x);
        println!("n = {n}: {got} vs {exact} (bound {bound:.3e})");
        assert!((got as f64 - exact).abs() <= bound, "n = {n}: {got} vs {exact} ± {bound}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_transpose_equals_cpu() {
    let (gpu, mut r) = (open(), common::fresh());
    for (width, height) in [(1, 1), (33, 65), (257, 31), (1000, 999)] {
        let x = r.floats(width * height, -1.0, 1.0);
        let got = gpu::transpose(&gpu, &x, width as u32, height as u32).unwrap();
        assert_eq!(got, cpu::transpose(&x, width, height), "{width}x{height}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_histogram_equals_cpu() {
    let (gpu, mut r) = (open(), common::fresh());
    for n in [1, 255, 4097, 1_000_003] {
        let words = r.words(n);
        assert_eq!(gpu::histogram_256(&gpu, &words).unwrap(), cpu::histogram_256(&words), "n = {n}");
    }
    // One hot bin: every thread's shared atomics hit the same address.
    let same = vec![0x4242_4242u32; 100_001];
    assert_eq!(gpu::histogram_256(&gpu, &same).unwrap(), cpu::histogram_256(&same));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_scan_equals_cpu() {
    let (gpu, mut r) = (open(), common::fresh());
    // Partial tiles, exactly one tile, more than 1024 tiles (the sums' block loops twice),
    // and values that wrap.
    for n in [1, 7, 2048, 2049, 100_003, 1024 * 2048 + 4099] {
        let x: Vec<u32> = (0..n).map(|_| r.next_u32() >> 8).collect();
        assert_eq!(gpu::exclusive_scan(&gpu, &x).unwrap(), cpu::exclusive_scan(&x), "n = {n}");
    }
    let big = r.words(70_001);
    assert_eq!(gpu::exclusive_scan(&gpu, &big).unwrap(), cpu::exclusive_scan(&big), "wrapping");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_sgemm_is_within_the_dot_product_bound() {
    let (gpu, mut r) = (open(), common::fresh());
    for (m, n, k) in [(64, 64, 16), (192, 320, 48), (128, 64, 1040)] {
        let (a, b) = (r.floats(m * k, -1.0, 1.0), r.floats(k * n, -1.0, 1.0));
        let got = gpu::sgemm(&gpu, &a, &b, (m as u32, n as u32, k as u32)).unwrap();
        for (i, (&g, (exact, bound))) in got.iter().zip(cpu::sgemm(&a, &b, m, n, k)).enumerate() {
            assert!(
                (g as f64 - exact).abs() <= bound,
                "{m}x{n}x{k} at ({}, {}): {g} vs {exact} ± {bound}",
                i / n,
                i % n
            );
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_nbody_is_within_the_bound() {
    let (gpu, mut r) = (open(), common::fresh());
    let softening2 = 1e-3;
    for n in [1, 255, 257, 1001] {
        let bodies: Vec<[f32; 4]> = (0..n)
            .map(|_| [r.uniform(-1.0, 1.0), r.uniform(-1.0, 1.0), r.uniform(-1.0, 1.0), r.uniform(0.5, 1.5)])
            .collect();
        let got = gpu::nbody_accelerations(&gpu, &bodies, softening2).unwrap();
        for (i, g) in got.iter().enumerate() {
            let (exact, bound) = cpu::nbody_acceleration(&bodies, i, softening2);
            for c in 0..3 {
                assert!(
                    (g[c] as f64 - exact[c]).abs() <= bound[c],
                    "n = {n}, body {i}[{c}]: {} vs {} ± {}",
                    g[c],
                    exact[c],
                    bound[c]
                );
            }
            assert_eq!(g[3], 0.0);
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_softmax_is_within_the_bound() {
    let (gpu, mut r) = (open(), common::fresh());
    for (rows, cols) in [(1, 1), (17, 31), (9, 1000), (3, 4097)] {
        let x = r.floats(rows * cols, -8.0, 8.0);
        let got = gpu::softmax_rows(&gpu, &x, rows as u32, cols as u32).unwrap();
        let bound = cpu::softmax_relative_bound(cols, 16.0);
        for (i, (&g, e)) in got.iter().zip(cpu::softmax_rows(&x, cols)).enumerate() {
            assert!((g as f64 - e).abs() <= bound * e, "{rows}x{cols} at {i}: {g} vs {e}");
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_saxpy_safe_and_raw_equal_cpu_bit_for_bit() {
    let (gpu, mut r) = (open(), common::fresh());
    for n in [1, 255, 257, 100_003] {
        let (x, y) = (r.floats(n, -1.0, 1.0), r.floats(n, -1.0, 1.0));
        let a = r.uniform(-2.0, 2.0);
        let expected = cpu::saxpy(a, &x, &y);
        for flavour in [Flavour::Safe, Flavour::Raw] {
            let got = gpu::saxpy(&gpu, flavour, a, &x, &y).unwrap();
            assert!(bits_equal(&got, &expected), "{flavour:?}, n = {n}");
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_jacobi_safe_and_raw_equal_cpu_bit_for_bit() {
    let (gpu, mut r) = (open(), common::fresh());
    // Grids with no interior (1×1, 2×3, a row, a column), the smallest with one (3×3),
    // partial blocks.
    for (width, height) in [(1, 1), (2, 3), (17, 1), (1, 17), (3, 3), (33, 9), (257, 131)] {
        let x = r.floats(width * height, -1.0, 1.0);
        let expected = cpu::jacobi_5pt(&x, width, height);
        for flavour in [Flavour::Safe, Flavour::Raw] {
            let got = gpu::jacobi_5pt(&gpu, flavour, &x, width as u32, height as u32).unwrap();
            assert!(bits_equal(&got, &expected), "{flavour:?}, {width}x{height}");
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_hgemm_f16_and_bf16_are_within_the_tensor_core_bound() {
    let (gpu, mut r) = (open(), common::fresh());
    fn check<H: gpu::HalfInput>(gpu: &Gpu, r: &mut Random, (m, n, k): (usize, usize, usize), what: &str) {
        // Inputs rounded to halves first: the reference multiplies the same values.
        let a: Vec<H> = r.floats(m * k, -1.0, 1.0).into_iter().map(H::from_f32).collect();
        let b: Vec<H> = r.floats(n * k, -1.0, 1.0).into_iter().map(H::from_f32).collect();
        let got = gpu::hgemm(gpu, &a, &b, m as u32, n as u32, k as u32).unwrap();
        let widen = |v: &[H]| v.iter().map(|h| h.to_f32()).collect::<Vec<f32>>();
        let expected = cpu::gemm_nt(&widen(&a), &widen(&b), m, n, k);
        for (i, (&g, &(exact, bound))) in got.iter().zip(&expected).enumerate() {
            assert!(
                (g as f64 - exact).abs() <= bound,
                "{what} {m}x{n}x{k} ({}, {}): {g} vs {exact} ± {bound}",
                i / n,
                i % n
            );
        }
    }
    for shape in [(1, 1, 8), (64, 64, 32), (67, 45, 72), (130, 257, 264), (512, 384, 1024)] {
        check::<cookbook_kernels::F16>(&gpu, &mut r, shape, "f16");
        check::<cookbook_kernels::BF16>(&gpu, &mut r, shape, "bf16");
    }
    let error = gpu::hgemm::<cookbook_kernels::F16>(&gpu, &[], &[], 0, 0, 12).unwrap_err().to_string();
    assert!(error.contains("not a multiple of 8"), "{error}");
}

fn bits_equal(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_kernels_from_the_ptx_equal_the_cubin_bit_for_bit() {
    let cubin = open();
    let ptx = Gpu::open_with(0, &IMAGES, true).expect("a CUDA GPU");
    println!("against {}", ptx.image());
    let mut r = common::fresh();
    let (a, b) = (r.floats(128 * 48, -1.0, 1.0), r.floats(48 * 192, -1.0, 1.0));
    let shape = (128, 192, 48);
    assert!(bits_equal(
        &gpu::sgemm(&cubin, &a, &b, shape).unwrap(),
        &gpu::sgemm(&ptx, &a, &b, shape).unwrap()
    ));
    let x = r.floats(9 * 1000, -8.0, 8.0);
    assert!(bits_equal(
        &gpu::softmax_rows(&cubin, &x, 9, 1000).unwrap(),
        &gpu::softmax_rows(&ptx, &x, 9, 1000).unwrap()
    ));
    let bodies: Vec<[f32; 4]> =
        (0..300).map(|_| [r.uniform(-1.0, 1.0), r.uniform(-1.0, 1.0), r.uniform(-1.0, 1.0), 1.0]).collect();
    let flat = |v: Vec<[f32; 4]>| v.into_iter().flatten().collect::<Vec<f32>>();
    assert!(bits_equal(
        &flat(gpu::nbody_accelerations(&cubin, &bodies, 1e-3).unwrap()),
        &flat(gpu::nbody_accelerations(&ptx, &bodies, 1e-3).unwrap())
    ));
    let words = r.words(100_003);
    assert_eq!(gpu::exclusive_scan(&cubin, &words).unwrap(), gpu::exclusive_scan(&ptx, &words).unwrap());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_jacobi_tiled_safe_and_raw_equal_cpu_bit_for_bit() {
    let (gpu, mut r) = (open(), common::fresh());
    // Single cells and rows, partial tiles in x and y, exact tiles (64×16), a wide thin grid.
    for (width, height) in [(1, 1), (2, 3), (1, 17), (33, 9), (64, 16), (257, 131), (1000, 3), (1031, 519)] {
        let x = r.floats(width * height, -1.0, 1.0);
        let expected = cpu::jacobi_5pt(&x, width, height);
        for flavour in [Flavour::Safe, Flavour::Raw] {
            let got = gpu::jacobi_5pt_tiled(&gpu, flavour, &x, width as u32, height as u32).unwrap();
            assert!(bits_equal(&got, &expected), "{flavour:?}, {width}x{height}");
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_scan_lookback_equals_cpu() {
    let (gpu, mut r) = (open(), common::fresh());
    // One element, partial tiles, exactly one and two tiles, one past, thousands of tiles
    // (look-backs longer than one window of 32), and sizes that are no multiple of the tile.
    for n in [1, 7, 2047, 2048, 2049, 4096, 65 * 2048 + 1, 100_003, 1024 * 2048 + 4099, 5_000_011] {
        let x: Vec<u32> = (0..n).map(|_| r.next_u32() >> 8).collect();
        assert_eq!(gpu::exclusive_scan_lookback(&gpu, &x).unwrap(), cpu::exclusive_scan(&x), "n = {n}");
    }
    // Values that wrap.
    let big = r.words(70_001);
    assert_eq!(gpu::exclusive_scan_lookback(&gpu, &big).unwrap(), cpu::exclusive_scan(&big), "wrapping");
    // Repeated on one set of buffers (the state zeroed by each launch): the order in which
    // blocks publish differs from run to run, the result must not.
    let n = (1 << 24) + 3;
    let host: Vec<u32> = (0..n).map(|_| r.next_u32() >> 12).collect();
    let expected = cpu::exclusive_scan(&host);
    let input = gpu::upload(&gpu, &host).unwrap();
    let mut state = gpu::zeros::<u64>(&gpu, gpu::scan_lookback_state_len(n as u32)).unwrap();
    let mut output = gpu::zeros::<u32>(&gpu, n).unwrap();
    for run in 0..5 {
        gpu::scan_lookback_launch(&gpu, &input, &mut state, &mut output).unwrap();
        assert_eq!(gpu::download(&gpu, &output).unwrap(), expected, "run {run}");
    }
}
