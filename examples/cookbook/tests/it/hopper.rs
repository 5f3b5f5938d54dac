//! The Hopper kernels (TMA, `mbarrier` transactions, clusters) on an sm_90 GPU, on fresh random
//! inputs of odd sizes (partial tiles, partial chunks), against the CPU reference, bit for bit.

use std::sync::Arc;

use crate::common;

use cookbook::{HOPPER_IMAGES, cpu, hopper};
use ptxkit_host::Gpu;

fn open() -> Arc<Gpu> {
    common::open(&HOPPER_IMAGES)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_tma_transpose_equals_cpu() {
    let (gpu, mut r) = (open(), common::fresh());
    for (width, height) in [(4, 4), (36, 100), (1000, 996), (260, 68)] {
        let x = r.floats(width * height, -1.0, 1.0);
        let got = hopper::tma_transpose(&gpu, &x, width as u32, height as u32).unwrap();
        assert_eq!(got, cpu::transpose(&x, width, height), "{width}x{height}");
    }
    // A row TMA cannot address (not a multiple of 16 bytes) is refused in words.
    let error = hopper::tma_transpose(&gpu, &[0.0; 33 * 4], 33, 4).unwrap_err().to_string();
    assert!(error.contains("multiple of 16"), "{error}");
}

/// The smoothing by clusters that exchange their edge cells through distributed shared memory
/// (`st.async` counted on the neighbours' barriers, no cluster barrier in the loop): the CPU's
/// values bit for bit, from one segment to a thousand and from no step to 200 (each buffer's
/// barriers through a hundred phases), more clusters than run at once among them; a length
/// that is not whole segments is refused in words. `Gpu::resident_clusters` counts the
/// clusters of the kernel that run at once: at least one, at most the blocks that fit.
#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_cluster_smooth_equals_cpu() {
    let (gpu, mut r) = (open(), common::fresh());
    let segment = cookbook_kernels::EXCHANGE_SEGMENT as usize;
    for (segments, steps) in [(1, 0), (1, 1), (3, 2), (7, 5), (132, 200), (1000, 33)] {
        let x = r.floats(segments * segment, -1.0, 1.0);
        let got = hopper::cluster_smooth(&gpu, &x, steps).unwrap();
        assert_eq!(got, cpu::cluster_smooth(&x, segment, steps), "{segments} segments, {steps} steps");
    }
    let error = hopper::cluster_smooth(&gpu, &[0.0; 1000], 1).unwrap_err().to_string();
    assert!(error.contains("whole number of 1024-cell segments"), "{error}");
    let (kernel, block) = (cookbook_kernels::cluster_smooth_f32, cookbook_kernels::EXCHANGE_BLOCK);
    let resident = gpu.resident_clusters(kernel, block, (cookbook_kernels::EXCHANGE_CLUSTER, 1, 1)).unwrap();
    let sms = gpu
        .context()
        .attribute(
            ptxkit_host::cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
        )
        .unwrap() as u32;
    eprintln!("{resident} clusters of 4 blocks of 256 threads run at once on {sms} SMs");
    assert!(
        resident >= 1 && resident * cookbook_kernels::EXCHANGE_CLUSTER <= sms * (2048 / block),
        "{resident}"
    );
    assert!(resident < 1000, "the 1000-segment case is not more clusters than run at once: {resident}");
    // A block shape against the kernel's contract is refused before the driver is asked.
    assert!(gpu.resident_clusters(kernel, 128, (cookbook_kernels::EXCHANGE_CLUSTER, 1, 1)).is_err());
    assert!(
        gpu.resident_clusters(kernel, block, (9, 1, 1)).is_err(),
        "a cluster of 9 blocks is not portable"
    );
}

/// A chain of short kernels launched with programmatic dependence (each lets the next start at
/// once, and waits for the one before): the CPU's values bit for bit, and the ordinary
/// launches' too, on odd sizes up to 4 MB a step (the next step's blocks start while the step
/// before is still running).
#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_programmatic_chain_equals_cpu() {
    let (gpu, mut r) = (open(), common::fresh());
    for (n, steps) in [(1, 3), (257, 1), (100_003, 40), (1_000_003, 64)] {
        let x = r.floats(n, -1.0, 1.0);
        let (a, b) = (r.uniform(0.5, 1.0), r.uniform(-0.1, 0.1));
        let want = cpu::chain(&x, a, b, steps);
        assert_eq!(hopper::chain(&gpu, &x, (a, b), steps, true).unwrap(), want, "n = {n}, {steps} steps");
        assert_eq!(
            hopper::chain(&gpu, &x, (a, b), steps, false).unwrap(),
            want,
            "n = {n}, ordinary launches"
        );
    }
    assert!(hopper::chain(&gpu, &[], (1.0, 0.0), 5, true).unwrap().is_empty());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_bulk_scale_equals_cpu() {
    let (gpu, mut r) = (open(), common::fresh());
    for n in [1, 3, 4, 2047, 2048, 2049, 100_003] {
        let x = r.floats(n, -4.0, 4.0);
        let a = r.uniform(-2.0, 2.0);
        assert_eq!(hopper::bulk_scale(&gpu, a, &x).unwrap(), cpu::scale(a, &x), "n = {n}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_cluster_histogram_equals_cpu() {
    let (gpu, mut r) = (open(), common::fresh());
    for (n, clusters) in [(1, 1), (1023, 3), (1_000_003, 33)] {
        let values = r.words(n);
        assert_eq!(
            hopper::cluster_histogram(&gpu, &values, clusters).unwrap(),
            cpu::histogram_1024(&values),
            "n = {n}"
        );
    }
    // One hot bin: every thread of every block adds into one remote bin.
    let same = vec![777u32; 200_001];
    assert_eq!(hopper::cluster_histogram(&gpu, &same, 8).unwrap(), cpu::histogram_1024(&same));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_wgmma_gemm_is_within_the_tensor_core_bound() {
    use cookbook_kernels::BF16;
    let (gpu, mut r) = (open(), common::fresh());
    for (m, n, k) in [(1, 1, 8), (64, 64, 64), (67, 45, 72), (130, 257, 264), (512, 384, 1024)] {
        let a: Vec<BF16> = r.floats(m * k, -1.0, 1.0).into_iter().map(BF16::from_f32).collect();
        let b: Vec<BF16> = r.floats(n * k, -1.0, 1.0).into_iter().map(BF16::from_f32).collect();
        let widen = |v: &[BF16]| v.iter().map(|h| h.to_f32()).collect::<Vec<f32>>();
        let expected = cpu::gemm_nt(&widen(&a), &widen(&b), m, n, k);
        // A from shared memory through a descriptor, then from registers (`ldmatrix` first).
        for (form, got) in [
            ("shared A", hopper::wgmma_gemm(&gpu, &a, &b, m as u32, n as u32, k as u32).unwrap()),
            ("register A", hopper::wgmma_gemm_rs(&gpu, &a, &b, m as u32, n as u32, k as u32).unwrap()),
        ] {
            for (i, (&g, &(exact, bound))) in got.iter().zip(&expected).enumerate() {
                assert!(
                    (g as f64 - exact).abs() <= bound,
                    "{form} {m}x{n}x{k} ({}, {}): {g} vs {exact} ± {bound}",
                    i / n,
                    i % n
                );
            }
        }
    }
    let error = hopper::wgmma_gemm(&gpu, &[], &[], 0, 0, 12).unwrap_err().to_string();
    assert!(error.contains("not a multiple of 8"), "{error}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_gemm_tma_wgmma_is_within_the_tensor_core_bound() {
    use cookbook_kernels::BF16;
    let (gpu, mut r) = (open(), common::fresh());
    // Partial tiles in m and n, depths that are not a multiple of the 64 of a stage, and more
    // stages than the ring has slots (the ring wraps).
    for (m, n, k) in
        [(1, 1, 8), (128, 128, 64), (67, 45, 72), (130, 257, 264), (384, 640, 1024), (256, 128, 2056)]
    {
        let a: Vec<BF16> = r.floats(m * k, -1.0, 1.0).into_iter().map(BF16::from_f32).collect();
        let b: Vec<BF16> = r.floats(n * k, -1.0, 1.0).into_iter().map(BF16::from_f32).collect();
        let got = hopper::gemm_tma_wgmma(&gpu, &a, &b, m as u32, n as u32, k as u32).unwrap();
        let widen = |v: &[BF16]| v.iter().map(|h| h.to_f32()).collect::<Vec<f32>>();
        for (i, (&g, (exact, bound))) in
            got.iter().zip(cpu::gemm_nt(&widen(&a), &widen(&b), m, n, k)).enumerate()
        {
            assert!(
                (g as f64 - exact).abs() <= bound,
                "{m}x{n}x{k} ({}, {}): {g} vs {exact} ± {bound}",
                i / n,
                i % n
            );
        }
    }
    let error = hopper::gemm_tma_wgmma(&gpu, &[], &[], 0, 0, 12).unwrap_err().to_string();
    assert!(error.contains("not a multiple of 8"), "{error}");
}

/// `wgmma_swizzle_gemm_bf16` in `swizzle` on fresh inputs of several shapes (whole and partial
/// 64 × 64 tiles, depths that end inside a chunk), against the CPU within the tensor cores'
/// bound: the swizzle's `SharedDescriptor` on the GPU.
fn wgmma_swizzle_gemm_is_within_the_tensor_core_bound(swizzle: ptxkit_host::TmaSwizzle) {
    use cookbook_kernels::BF16;
    let (gpu, mut r) = (open(), common::fresh());
    for (m, n, k) in
        [(128, 192, 320), (64, 64, 64), (1, 1, 8), (67, 45, 72), (130, 257, 264), (192, 128, 1000)]
    {
        let a: Vec<BF16> = r.floats(m * k, -1.0, 1.0).into_iter().map(BF16::from_f32).collect();
        let b: Vec<BF16> = r.floats(n * k, -1.0, 1.0).into_iter().map(BF16::from_f32).collect();
        let got = hopper::wgmma_swizzle_gemm(&gpu, &a, &b, (m as u32, n as u32, k as u32), swizzle).unwrap();
        let widen = |v: &[BF16]| v.iter().map(|h| h.to_f32()).collect::<Vec<f32>>();
        for (i, (&g, (exact, bound))) in
            got.iter().zip(cpu::gemm_nt(&widen(&a), &widen(&b), m, n, k)).enumerate()
        {
            assert!(
                (g as f64 - exact).abs() <= bound,
                "{swizzle:?} {m}x{n}x{k} ({}, {}): {g} vs {exact} ± {bound}",
                i / n,
                i % n
            );
        }
    }
    let error = hopper::wgmma_swizzle_gemm(&gpu, &[], &[], (0, 0, 12), swizzle).unwrap_err().to_string();
    assert!(error.contains("not a multiple of 8"), "{error}");
    let none = ptxkit_host::TmaSwizzle::None;
    let error = hopper::wgmma_swizzle_gemm(&gpu, &[], &[], (0, 0, 8), none).unwrap_err().to_string();
    assert!(error.contains("a swizzle of 32, 64 or 128 bytes"), "{error}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_wgmma_swizzle_32_gemm_is_within_the_tensor_core_bound() {
    wgmma_swizzle_gemm_is_within_the_tensor_core_bound(ptxkit_host::TmaSwizzle::B32);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_wgmma_swizzle_64_gemm_is_within_the_tensor_core_bound() {
    wgmma_swizzle_gemm_is_within_the_tensor_core_bound(ptxkit_host::TmaSwizzle::B64);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_wgmma_swizzle_128_gemm_is_within_the_tensor_core_bound() {
    wgmma_swizzle_gemm_is_within_the_tensor_core_bound(ptxkit_host::TmaSwizzle::B128);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_cluster_reduce_is_the_kernels_order_and_within_the_sum_bound() {
    let (gpu, mut r) = (open(), common::fresh());
    let (cluster, block) = (cookbook_kernels::CLUSTER_REDUCE_CLUSTER as usize, 256);
    for (n, clusters) in [(1, 1), (255, 1), (2049, 1), (100_003, 1), (1_000_003, 33), (5_000_011, 0)] {
        let clusters = if clusters == 0 { hopper::cluster_reduce_clusters(n as u32) } else { clusters };
        let x = r.floats(n, -1.0, 1.0);
        let got = hopper::cluster_reduce(&gpu, &x, clusters).unwrap();
        let (exact, bound) = cpu::sum(&x);
        assert!(
            (got as f64 - exact).abs() <= bound,
            "n = {n}, {clusters} clusters: {got} vs {exact} ± {bound}"
        );
        if clusters == 1 {
            // One cluster, one atomic: the kernel's order exactly.
            let order = cpu::cluster_sum_order(&x, 1, cluster, block);
            assert_eq!(got, order, "n = {n}: the kernel's order gives {order}");
        }
    }
    // Small integers are exact in any order.
    let ints: Vec<f32> = (0..4099).map(|i| (i % 7) as f32).collect();
    let expected: f32 = ints.iter().sum();
    assert_eq!(hopper::cluster_reduce(&gpu, &ints, 2).unwrap(), expected);
    assert_eq!(hopper::cluster_reduce(&gpu, &[], 1).unwrap(), 0.0);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_tma_stencil_equals_cpu() {
    let (gpu, mut r) = (open(), common::fresh());
    // Partial tiles along every axis, one-cell grids, and grids smaller than the box.
    for (nx, ny, nz) in [(4, 1, 1), (36, 10, 9), (32, 8, 8), (100, 37, 21), (260, 67, 33), (4, 129, 3)] {
        let x = r.floats(nx * ny * nz, -1.0, 1.0);
        let got = hopper::tma_stencil(&gpu, &x, nx as u32, ny as u32, nz as u32).unwrap();
        let expected = cpu::jacobi_7pt(&x, nx, ny, nz);
        let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<u32>>();
        assert!(
            bits(&got) == bits(&expected),
            "{nx}x{ny}x{nz}: {:?}",
            got.iter().zip(&expected).position(|(a, b)| a != b)
        );
    }
    // A row TMA cannot address (not a multiple of 16 bytes) is refused in words.
    let error = hopper::tma_stencil(&gpu, &[0.0; 33 * 4 * 2], 33, 4, 2).unwrap_err().to_string();
    assert!(error.contains("not a multiple of 4"), "{error}");
}
