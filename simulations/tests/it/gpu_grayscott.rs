//! GPU tests: each kernel against the CPU reference on fresh random fields at odd sizes, and
//! whole runs against the CPU backend. Run on a machine with a CUDA GPU:
//! `cargo test --release -p simulations --test it -- --ignored gpu_grayscott::`.

use crate::common::*;
use crate::gpu_helpers::{download, gpu, upload};
use cudarc::driver::CudaSlice;
use kernels::colormap::MinMax;
use simulations::{
    Device,
    cuda::Gpu,
    grayscott::{
        self, GrayScott, Init, Setup, Variant, cpu,
        cuda::{self, FusedShape},
    },
    render::colormap,
};

/// An odd size, so partial blocks and the wrap-around at every edge are exercised.
const W: u32 = 257;
const H: u32 = 131;
const CELLS: usize = (W * H) as usize;

/// The bit patterns of a field (so that −0 and +0 differ, unlike `==` on floats).
fn bits(field: &[f32]) -> Vec<u32> {
    field.iter().map(|x| x.to_bits()).collect()
}

/// A buffer full of NaN, so an element the kernel forgets to write fails the comparison.
fn poisoned(gpu: &Gpu) -> CudaSlice<f32> {
    upload(gpu, &vec![f32::NAN; CELLS])
}

/// Two NaN-filled output fields (U and V) of `cells` cells; see [`poisoned`].
fn poisoned_pair(gpu: &Gpu, cells: usize) -> (CudaSlice<f32>, CudaSlice<f32>) {
    (upload(gpu, &vec![f32::NAN; cells]), upload(gpu, &vec![f32::NAN; cells]))
}

/// The GPU's one-instruction forms of the clamped update (an add and `cvt.sat`, one
/// `FADD.SAT`) and of the Laplacian's last step (a multiply-add by −4) give the CPU's bits for
/// every pair of special values (zeros of both signs, NaN, infinities, subnormals, the largest float, values
/// around one) and for random pairs: NaN as NaN, everything else bit for bit; the Laplacian
/// for every centre below 2¹²⁵ in magnitude (see `laplacian5`).
#[test]
#[ignore = "needs a CUDA GPU"]
fn exact_forms_match_cpu_on_special_values() {
    use kernels::{
        diagnostics::gray_scott_exact_forms,
        grayscott::{add_clamp01, laplacian5},
    };
    let (gpu, seed) = (gpu(), fresh_seed());
    let below_one = 1.0 - f32::EPSILON / 2.0;
    let mut specials = vec![
        0.0,
        -0.0,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        1.0,
        -1.0,
        below_one,
        1.0 + f32::EPSILON,
        f32::from_bits(1),
        -f32::from_bits(1),
        f32::MIN_POSITIVE,
        f32::MIN_POSITIVE / 3.0,
        f32::MAX,
        -f32::MAX,
        1e38,
        0.25,
        0.5,
        -0.5,
        2.0f32.powi(-25),
        -(2.0f32.powi(-25)),
        -(2.0f32.powi(-24)),
        3e-39,
    ];
    specials.extend(random_field(40, seed, -1.5, 1.5));
    let (a, b): (Vec<f32>, Vec<f32>) =
        specials.iter().flat_map(|&x| specials.iter().map(move |&y| (x, y))).unzip();
    let n = a.len();
    let (da, db) = (upload(&gpu, &a), upload(&gpu, &b));
    let mut sums = upload(&gpu, &vec![f32::NAN; n]);
    let mut laplacians = upload(&gpu, &vec![f32::NAN; 2 * n]);
    gpu.launch(
        gray_scott_exact_forms,
        simulations::cuda::grid_1d(n as u32, 128),
        (&da, &db, n as u32, &mut sums, &mut laplacians),
    )
    .unwrap();
    let (sums, laplacians) = (download(&gpu, &sums), download(&gpu, &laplacians));
    let same = |gpu: f32, cpu: f32| (gpu.is_nan() && cpu.is_nan()) || gpu.to_bits() == cpu.to_bits();
    for i in 0..n {
        let (x, y) = (a[i], b[i]);
        let cpu_sum = add_clamp01(x, y);
        assert_eq!(
            sums[i].to_bits(),
            cpu_sum.to_bits(),
            "add_clamp01({x:e}, {y:e}): GPU {:e}, CPU {cpu_sum:e}",
            sums[i]
        );
        // The multiply-add is exact while 4·centre does not overflow (fields are in [0, 1]).
        if x.abs() >= 2.0f32.powi(125) {
            continue;
        }
        for (gpu_value, cpu_value) in [
            (laplacians[2 * i], laplacian5(x, y, y, y, y)),
            (laplacians[2 * i + 1], laplacian5(x, y, x, y, x)),
        ] {
            assert!(
                same(gpu_value, cpu_value),
                "laplacian5 at ({x:e}, {y:e}): GPU {gpu_value:e}, CPU {cpu_value:e}"
            );
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn laplacian_kernel_matches_cpu() {
    let (gpu, seed) = (gpu(), fresh_seed());
    let u = random_field(CELLS, seed, 0.0, 1.0);
    let v = random_field(CELLS, seed + 1, 0.0, 1.0);
    let (du, dv) = (upload(&gpu, &u), upload(&gpu, &v));
    let (mut lu, mut lv) = (poisoned(&gpu), poisoned(&gpu));
    cuda::launch_laplacian(&gpu, &du, &dv, &mut lu, &mut lv, W, H).unwrap();
    let (lu, lv) = (download(&gpu, &lu), download(&gpu, &lv));
    // Same expression on both sides: bitwise equal.
    assert_eq!(lu, cpu::laplacian(&u, W, H));
    assert_eq!(lv, cpu::laplacian(&v, W, H));
    // And the independent f64 reference.
    assert!(max_abs_diff(&lu, &laplacian_ref(&u, W as usize, H as usize)) < 1e-5);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn update_kernel_matches_cpu() {
    let (gpu, seed) = (gpu(), fresh_seed());
    let (mut u, mut v) = (random_field(CELLS, seed, 0.0, 1.0), random_field(CELLS, seed + 1, 0.0, 1.0));
    let lu = random_field(CELLS, seed + 2, -2.0, 2.0);
    let lv = random_field(CELLS, seed + 3, -2.0, 2.0);
    let rates = coral();
    let (mut du, mut dv) = (upload(&gpu, &u), upload(&gpu, &v));
    cuda::launch_update(&gpu, &mut du, &mut dv, &upload(&gpu, &lu), &upload(&gpu, &lv), W, H, rates).unwrap();
    cpu::update(&mut u, &mut v, &lu, &lv, &rates);
    assert_eq!(download(&gpu, &du), u);
    assert_eq!(download(&gpu, &dv), v);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn fused_kernel_matches_reference_step() {
    let (gpu, seed) = (gpu(), fresh_seed());
    // One thread per cell, and marching shapes whose rows do not divide the height; widths of
    // 1 to 3 columns too.
    let one = |block, rows| FusedShape { block, rows, columns: 1 };
    let four = |block, rows| FusedShape { block, rows, columns: 4 };
    let shapes = [
        one((32, 8), 1),
        one((64, 2), 3),
        FusedShape::default(),
        one((256, 1), 16),
        four((32, 8), 1),
        four((64, 2), 3),
        four((128, 2), 4),
        four((256, 1), 16),
    ];
    // Widths that are multiples of 4 (for the float4 kernel) with heights not a multiple of
    // the rows or the block, and odd ones (the float4 shapes refuse them).
    for (w, h) in [(W, H), (1, 5), (3, 7), (2, 2), (260, 131), (4, 3), (8, 1), (516, 77)] {
        let cells = (w * h) as usize;
        let u = random_field(cells, seed, 0.0, 1.0);
        let v = random_field(cells, seed + 1, 0.0, 1.0);
        let (want_u, want_v) = step_ref(&u, &v, w as usize, h as usize, &coral());
        // The same operations as the CPU backend's step: the GPU must match it bit for bit.
        let mut cpu_sim = cpu::CpuGrayScott::new(w, h, coral(), u.clone(), v.clone());
        cpu_sim.step_once();
        let (cu, cv) = grayscott::Engine::fields(&mut cpu_sim).unwrap();
        for shape in shapes {
            let (mut un, mut vn) = poisoned_pair(&gpu, cells);
            let launched = cuda::launch_fused(
                &gpu,
                &upload(&gpu, &u),
                &upload(&gpu, &v),
                &mut un,
                &mut vn,
                w,
                h,
                coral(),
                shape,
            );
            if shape.columns == 4 && w % 4 != 0 {
                let err = launched.expect_err("four columns per thread need a width that is a multiple of 4");
                assert!(err.to_string().contains("multiple of 4"), "{err}");
                continue;
            }
            launched.unwrap();
            let (got_u, got_v) = (download(&gpu, &un), download(&gpu, &vn));
            let (eu, ev) = (max_abs_diff(&got_u, &want_u), max_abs_diff(&got_v, &want_v));
            assert!(eu < 1e-5 && ev < 1e-5, "{w}x{h}, one fused step with {shape}: |ΔU| {eu}, |ΔV| {ev}");
            assert_eq!((&got_u, &got_v), (&cu, &cv), "{w}x{h}, {shape}: not bit-identical to the CPU");
        }
    }
    // Only 1 and 4 columns per thread have kernels.
    let (mut un, mut vn) = poisoned_pair(&gpu, CELLS);
    let two = FusedShape { columns: 2, ..FusedShape::default() };
    let err =
        cuda::launch_fused(&gpu, &poisoned(&gpu), &poisoned(&gpu), &mut un, &mut vn, W, H, coral(), two)
            .expect_err("no kernel takes two columns per thread");
    assert!(err.to_string().contains("1 or 4 columns"), "{err}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn tiled_kernel_matches_cpu_step() {
    let (gpu, seed) = (gpu(), fresh_seed());
    let u = random_field(CELLS, seed, 0.0, 1.0);
    let v = random_field(CELLS, seed + 1, 0.0, 1.0);
    let (mut un, mut vn) = (poisoned(&gpu), poisoned(&gpu));
    cuda::launch_tiled(&gpu, &upload(&gpu, &u), &upload(&gpu, &v), &mut un, &mut vn, W, H, coral()).unwrap();
    let mut cpu_sim = cpu::CpuGrayScott::new(W, H, coral(), u, v);
    cpu_sim.step_once();
    let (cu, cv) = grayscott::Engine::fields(&mut cpu_sim).unwrap();
    assert_eq!(download(&gpu, &un), cu);
    assert_eq!(download(&gpu, &vn), cv);
}

/// The temporal kernel for every step count it takes, on grids smaller than, equal to, and
/// not a multiple of its tile: bit-identical to that many CPU steps.
#[test]
#[ignore = "needs a CUDA GPU"]
fn temporal_kernel_matches_cpu_for_every_step_count() {
    let (gpu, seed) = (gpu(), fresh_seed());
    let (tw, th) = kernels::grayscott::temporal_tile(8);
    for (w, h) in [(W, H), (5, 3), (tw * 3, th * 2), (tw + 1, 1)] {
        let cells = (w * h) as usize;
        let u = random_field(cells, seed, 0.0, 1.0);
        let v = random_field(cells, seed + 1, 0.0, 0.5);
        let mut cpu_sim = cpu::CpuGrayScott::new(w, h, coral(), u.clone(), v.clone());
        for steps in 1..=kernels::grayscott::TEMPORAL_MAX_STEPS {
            cpu_sim.step_once();
            let (cu, cv) = grayscott::Engine::fields(&mut cpu_sim).unwrap();
            let (mut un, mut vn) = poisoned_pair(&gpu, cells);
            cuda::launch_temporal(
                &gpu,
                &upload(&gpu, &u),
                &upload(&gpu, &v),
                &mut un,
                &mut vn,
                w,
                h,
                coral(),
                steps,
            )
            .unwrap();
            assert_eq!(download(&gpu, &un), cu, "{w}x{h}, {steps} steps: U");
            assert_eq!(download(&gpu, &vn), cv, "{w}x{h}, {steps} steps: V");
        }
    }
}

/// Each streaming kernel (1 to 8 steps, one and two cells per thread) with blocks of 1 to 4
/// warps and several chunk lengths on `sizes`, against that many CPU steps, bit for bit.
/// Outputs start as NaN, so a cell left unwritten fails.
fn check_streaming_kernels(sizes: &[(u32, u32)]) {
    use kernels::grayscott::STREAM_MAX_STEPS;
    let (gpu, seed) = (gpu(), fresh_seed());
    // (warps, chunk rows, cells per thread)
    let layouts = [
        (4, 64, 2),
        (1, 7, 2),
        (4, 33, 2),
        (1, 64, 2),
        (3, 5, 2),
        (2, 1, 2),
        (4, 64, 1),
        (1, 7, 1),
        (3, 33, 1),
        (2, 1, 1),
    ];
    // The layouts alternate between the presets' dt = 1 (the kernels' copy without the
    // multiplies by dt) and another dt, so each kernel runs both copies.
    let rates = [coral(), grayscott::Rates { dt: 0.9, ..coral() }];
    let mut checked = 0;
    for &(w, h) in sizes {
        let cells = (w * h) as usize;
        let u = random_field(cells, seed, 0.0, 1.0);
        let v = random_field(cells, seed + 1, 0.0, 0.5);
        let expected: Vec<Vec<(Vec<f32>, Vec<f32>)>> = rates
            .iter()
            .map(|&rates| {
                let mut cpu_sim = cpu::CpuGrayScott::new(w, h, rates, u.clone(), v.clone());
                (0..STREAM_MAX_STEPS)
                    .map(|_| {
                        cpu_sim.step_once();
                        grayscott::Engine::fields(&mut cpu_sim).unwrap()
                    })
                    .collect()
            })
            .collect();
        let (du, dv) = (upload(&gpu, &u), upload(&gpu, &v));
        for (layout, (warps, chunk, cols)) in layouts.into_iter().enumerate() {
            let which = layout % 2;
            for steps in 1..=STREAM_MAX_STEPS {
                let shape = cuda::StreamShape { steps, warps, chunk, cols };
                let (mut un, mut vn) = poisoned_pair(&gpu, cells);
                cuda::launch_streaming(&gpu, &du, &dv, &mut un, &mut vn, w, h, rates[which], shape, steps)
                    .unwrap();
                let (cu, cv) = &expected[which][steps as usize - 1];
                let (gu, gv) = (download(&gpu, &un), download(&gpu, &vn));
                let wrong = gu.iter().zip(cu).filter(|(a, b)| a.to_bits() != b.to_bits()).count();
                let dt = rates[which].dt;
                assert_eq!(wrong, 0, "{w}x{h}, {shape:?}, dt {dt}: {wrong} cells of U differ");
                assert!(
                    gv.iter().zip(cv).all(|(a, b)| a.to_bits() == b.to_bits()),
                    "{w}x{h}, {shape:?}, dt {dt}: V"
                );
                checked += 1;
            }
        }
    }
    eprintln!("streaming: {checked} (size, layout, steps) cases bit-identical to the CPU");
}

/// Small grids (also run under compute-sanitizer): not a multiple of any strip or chunk,
/// narrower than one strip, lower than the halo, a single row.
#[test]
#[ignore = "needs a CUDA GPU"]
fn streaming_kernels_match_cpu_on_small_grids() {
    let single_row = kernels::grayscott::stream_strip(1, 4, 2) + 1;
    check_streaming_kernels(&[(67, 45), (5, 3), (single_row, 1)]);
}

/// Larger grids: several strips and chunks, partial ones at the right and bottom.
#[test]
#[ignore = "needs a CUDA GPU"]
fn streaming_kernels_match_cpu_on_larger_grids() {
    check_streaming_kernels(&[(W, H), (1100, 70), (600, 129)]);
}

/// Every GPU variant agrees with the CPU backend after 1,000 steps of a real pattern, at an
/// odd size and at a multiple of the tiles, stepping in uneven chunks (graphs of several
/// lengths and parities). Tolerance: 1e-4 absolute. All use the same IEEE float32 operations
/// in the same order (the PTX has no contracted FMAs), so in practice they agree exactly.
#[test]
#[ignore = "needs a CUDA GPU"]
fn every_variant_agrees_with_cpu_after_1000_steps() {
    let gpu = gpu();
    let (tw, th) = kernels::grayscott::temporal_tile(8);
    for (w, h) in [(1000, 777), (tw * 4, th * 6)] {
        let mut setup = Setup::new(w, h, coral());
        setup.init = Init::Spots;
        setup.seed = fresh_seed();
        let chunks = [1u32, 7, 8, 50, 300, 634];
        assert_eq!(chunks.iter().sum::<u32>(), 1000);
        let mut cpu_sim = GrayScott::new(&setup, &Device::Cpu, Variant::Cpu).unwrap();
        cpu_sim.step(1000).unwrap();
        let (cu, cv) = cpu_sim.fields().unwrap();
        assert!(cv.iter().any(|&x| x > 0.1), "the pattern must be alive to be a test");
        for variant in Variant::ALL.iter().copied().filter(|v| v.is_gpu()) {
            let mut sim = GrayScott::new(&setup, &Device::Cuda(gpu.clone()), variant).unwrap();
            for chunk in chunks {
                sim.step(chunk).unwrap();
            }
            let (gu, gv) = sim.fields().unwrap();
            let (eu, ev) = (max_abs_diff(&gu, &cu), max_abs_diff(&gv, &cv));
            eprintln!("{w}x{h} {} after 1000 steps: max |ΔU| {eu:e}, max |ΔV| {ev:e}", variant.name());
            assert!(eu <= 1e-4 && ev <= 1e-4, "{w}x{h} {}: |ΔU| {eu}, |ΔV| {ev}", variant.name());
            assert!(
                bits(&gu) == bits(&cu) && bits(&gv) == bits(&cv),
                "{w}x{h} {}: not bit-identical",
                variant.name()
            );
        }
        // The fused step with four columns per thread (float4), bit for bit.
        let mut sim = GrayScott::new(&setup, &Device::Cuda(gpu.clone()), Variant::Fused).unwrap();
        let shape = FusedShape { block: (64, 2), rows: 3, columns: 4 };
        sim.cuda_engine().expect("a CUDA run").set_fused_shape(shape);
        for chunk in chunks {
            sim.step(chunk).unwrap();
        }
        let (gu, gv) = sim.fields().unwrap();
        assert!(
            bits(&gu) == bits(&cu) && bits(&gv) == bits(&cv),
            "{w}x{h} fused with {shape}: not bit-identical to the CPU after 1000 steps"
        );
    }
}

/// Chains of one-cell streaming launches (1, 2 and 5 steps each; launched one by one and from
/// step graphs) with programmatic dependent launch allowed and forbidden, against the CPU bit
/// for bit. On Hopper the allowed runs launch the `_pdl` kernels, each starting while the one
/// before it finishes: a kernel touching the fields before its wait would read cells the step
/// before had not written yet. A Hopper GPU must take that path (the last kernel launched is a
/// `_pdl` one), any other must not.
#[test]
#[ignore = "needs a CUDA GPU"]
fn programmatic_streaming_chains_equal_the_cpu() {
    /// Puts the process-wide setting back however the test ends.
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            cuda::set_programmatic_streaming(self.0);
        }
    }
    let _restore = Restore(cuda::set_programmatic_streaming(true));
    let gpu = gpu();
    let hopper = gpu.compute_capability().0 >= 9;
    // The presets' dt = 1 (the kernels' copy without the multiplies by dt) and another dt.
    let seed = fresh_seed();
    let setups: Vec<(Setup, Vec<f32>, Vec<f32>)> = [1.0, 0.9]
        .into_iter()
        .map(|dt| {
            let mut setup = Setup::new(515, 300, grayscott::Rates { dt, ..coral() });
            setup.init = Init::Spots;
            setup.seed = seed;
            let mut cpu_sim = GrayScott::new(&setup, &Device::Cpu, Variant::Cpu).unwrap();
            cpu_sim.step(12 * 20).unwrap();
            let (cu, cv) = cpu_sim.fields().unwrap();
            assert!(cv.iter().any(|&x| x > 0.1), "the pattern must be alive to be a test");
            (setup, cu, cv)
        })
        .collect();
    for allowed in [true, false] {
        cuda::set_programmatic_streaming(allowed);
        assert_eq!(
            cuda::programmatic_streaming(&gpu),
            allowed && hopper,
            "allowed {allowed}, Hopper {hopper}"
        );
        for steps in [1, 2, 5] {
            for (graphs, (setup, cu, cv)) in
                [true, false].into_iter().flat_map(|g| setups.iter().map(move |s| (g, s)))
            {
                let mut sim = GrayScott::new(setup, &Device::Cuda(gpu.clone()), Variant::Streaming).unwrap();
                let engine = sim.cuda_engine().unwrap();
                engine.set_graphs(graphs);
                engine.set_stream_shape(cuda::StreamShape { steps, warps: 3, chunk: 8, cols: 1 });
                for _ in 0..12 {
                    sim.step(20).unwrap();
                }
                let last = simulations::cuda::last_launched().unwrap_or_default();
                assert_eq!(last.contains("_pdl_"), allowed && hopper, "the last kernel launched: {last}");
                let (gu, gv) = sim.fields().unwrap();
                let what = format!(
                    "programmatic {}, {steps} steps a launch, graphs {graphs}, dt {}: {last}",
                    allowed && hopper,
                    setup.rates.dt
                );
                assert!(
                    bits(&gu) == bits(cu) && bits(&gv) == bits(cv),
                    "{what}: not bit-identical to the CPU"
                );
                eprintln!("{what}: 240 steps bit-identical to the CPU");
            }
        }
    }
}

/// Replaying the same step graph many times (and with graphs off) equals the CPU.
#[test]
#[ignore = "needs a CUDA GPU"]
fn graph_replays_agree_with_cpu() {
    let gpu = gpu();
    let mut setup = Setup::new(W, H, coral());
    setup.init = Init::Spots;
    setup.seed = fresh_seed();
    let mut cpu_sim = GrayScott::new(&setup, &Device::Cpu, Variant::Cpu).unwrap();
    cpu_sim.step(23 * 20).unwrap();
    let (cu, cv) = cpu_sim.fields().unwrap();
    for variant in Variant::ALL.iter().copied().filter(|v| v.is_gpu()) {
        for graphs in [true, false] {
            let mut sim = GrayScott::new(&setup, &Device::Cuda(gpu.clone()), variant).unwrap();
            sim.cuda_engine().unwrap().set_graphs(graphs);
            // An odd number of steps per temporal launch: 20 = 3 + 3 + ... + 2.
            sim.cuda_engine().unwrap().set_temporal_steps(3);
            let shape = cuda::StreamShape { steps: 3, ..Default::default() };
            sim.cuda_engine().unwrap().set_stream_shape(shape);
            for _ in 0..23 {
                sim.step(20).unwrap();
            }
            let (gu, gv) = sim.fields().unwrap();
            let (eu, ev) = (max_abs_diff(&gu, &cu), max_abs_diff(&gv, &cv));
            eprintln!("{} graphs {graphs}: 23 x 20 steps: max |ΔU| {eu:e}, max |ΔV| {ev:e}", variant.name());
            assert!(eu <= 1e-4 && ev <= 1e-4, "{} graphs {graphs}: |ΔU| {eu}, |ΔV| {ev}", variant.name());
        }
    }
}

/// The reduction and colormap kernels over a batch of frames equal the CPU frame by frame.
#[test]
#[ignore = "needs a CUDA GPU"]
fn batched_colormap_matches_cpu_per_frame() {
    let (gpu, seed) = (gpu(), fresh_seed());
    let frames = 4usize;
    let u = random_field(CELLS * frames, seed, 0.2, 1.0);
    let v: Vec<f32> = random_field(CELLS * frames, seed + 1, 0.0, 1.0)
        .iter()
        .enumerate()
        .map(|(i, x)| x * (1 + i / CELLS) as f32 / frames as f32)
        .collect();
    let (du, dv) = (upload(&gpu, &u), upload(&gpu, &v));
    let mut slots = upload(&gpu, &vec![7u32; 4 * frames]);
    let mut levels = upload(&gpu, &vec![0xAAu8; CELLS * frames]);
    cuda::launch_min_max(&gpu, &du, &dv, CELLS as u32, frames as u32, &mut slots).unwrap();
    cuda::launch_colormap(&gpu, &du, &dv, CELLS as u32, frames as u32, &slots, &mut levels).unwrap();
    let (slots, levels) = (download(&gpu, &slots), download(&gpu, &levels));
    for f in 0..frames {
        let range = f * CELLS..(f + 1) * CELLS;
        let want_range = colormap::min_max(&u[range.clone()], &v[range.clone()]);
        assert_eq!(MinMax::from_slots(slots[4 * f..4 * f + 4].try_into().unwrap()), want_range, "frame {f}");
        let mut want = vec![0u8; CELLS];
        colormap::levels_cpu(&u[range.clone()], &v[range.clone()], &mut want);
        assert_levels_match(&levels[range], &want);
    }
}

/// Frames from every GPU frame path (asynchronous copies, v2's batches, v0's host colormap)
/// equal the CPU's frames of the same steps, in order, and decode to the same colours.
#[test]
#[ignore = "needs a CUDA GPU"]
fn frame_pipelines_match_cpu_frames_in_order() {
    let gpu = gpu();
    let mut setup = Setup::new(W, H, grayscott::preset("mitosis").unwrap().rates());
    setup.init = Init::Spots;
    setup.seed = fresh_seed();
    let frames_of = |device: &Device, variant: Variant| {
        let mut sim = GrayScott::new(&setup, device, variant).unwrap();
        let mut frames = Vec::new();
        for _ in 0..23 {
            sim.step(20).unwrap();
            sim.snapshot().unwrap();
            frames.extend(sim.collect(false).unwrap());
        }
        frames.extend(sim.collect(true).unwrap());
        frames
    };
    let want = frames_of(&Device::Cpu, Variant::Cpu);
    assert_eq!(want.len(), 23);
    let palette = simulations::render::palette("cyberpunk").unwrap();
    for variant in [Variant::Fused, Variant::V1, Variant::V2, Variant::V0, Variant::Temporal] {
        let got = frames_of(&Device::Cuda(gpu.clone()), variant);
        assert_eq!(got.len(), want.len(), "{}", variant.name());
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_levels_match(g, w);
            assert_eq!(palette.to_rgb(g), palette.to_rgb(w), "{} frame {k}: colours", variant.name());
        }
    }
}

fn gpu_levels(gpu: &Gpu, u: &[f32], v: &[f32]) -> (MinMax, Vec<u8>) {
    let (du, dv) = (upload(gpu, u), upload(gpu, v));
    let mut slots = upload(gpu, &[7u32; 4]);
    let mut levels = upload(gpu, &vec![0xAAu8; u.len()]);
    let cells = u.len() as u32;
    cuda::launch_min_max(gpu, &du, &dv, cells, 1, &mut slots).unwrap();
    cuda::launch_colormap(gpu, &du, &dv, cells, 1, &slots, &mut levels).unwrap();
    let slots: [u32; 4] = download(gpu, &slots).try_into().unwrap();
    (MinMax::from_slots(slots), download(gpu, &levels))
}

fn assert_levels_match(gpu_levels: &[u8], cpu_levels: &[u8]) {
    let worst = gpu_levels.iter().zip(cpu_levels).map(|(&a, &b)| a.abs_diff(b)).max().unwrap();
    let differing = gpu_levels.iter().zip(cpu_levels).filter(|(a, b)| a != b).count();
    eprintln!("colormap: {differing} cells differ, by at most {worst} level(s)");
    assert!(worst <= 1, "GPU and CPU colormaps differ by {worst} levels");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn colormap_kernels_match_cpu_on_random_fields() {
    let (gpu, seed) = (gpu(), fresh_seed());
    // Several sizes: one cell, less than a block, odd, and more than the reduction grid.
    for cells in [1usize, 200, CELLS, 1024 * 256 * 3 + 17] {
        let u = random_field(cells, seed, 0.2, 1.0);
        let v = random_field(cells, seed + 1, 0.0, 0.45);
        let (range, levels) = gpu_levels(&gpu, &u, &v);
        assert_eq!(range, colormap::min_max(&u, &v), "{cells} cells");
        let mut want = vec![0u8; cells];
        colormap::levels_cpu(&u, &v, &mut want);
        assert_levels_match(&levels, &want);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn colormap_matches_cpu_on_a_real_pattern_and_falls_back_to_u() {
    let gpu = gpu();
    let mut setup = Setup::new(W, H, grayscott::preset("mitosis").unwrap().rates());
    setup.init = Init::Ring;
    let mut sim = GrayScott::new(&setup, &Device::Cuda(gpu.clone()), Variant::Fused).unwrap();
    sim.step(500).unwrap();
    let (u, v) = sim.fields().unwrap();
    let mut got = vec![0u8; CELLS];
    sim.levels(&mut got).unwrap();
    let mut want = vec![0u8; CELLS];
    colormap::levels_cpu(&u, &v, &mut want);
    assert_levels_match(&got, &want);

    // V flat: the frame shows U.
    let u: Vec<f32> = random_field(CELLS, fresh_seed(), 0.0, 1.0);
    let (_, levels) = gpu_levels(&gpu, &u, &vec![0.25; CELLS]);
    colormap::levels_cpu(&u, &vec![0.25; CELLS], &mut want);
    assert_levels_match(&levels, &want);
    assert!(levels.iter().any(|&l| l > 200));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cuda_memory_check_agrees_with_free_memory() {
    let gpu = gpu();
    let (free, _) = gpu.memory().unwrap();
    // BYTES_PER_CELL per cell plus 64 MiB of slack.
    let fits = |side: u64| cuda::BYTES_PER_CELL * side * side + (64 << 20) <= free;
    for side in [1000u32, 30_000, grayscott::MAX_SIDE] {
        let result = cuda::check_fits(&gpu, side, side, Variant::Fused);
        assert_eq!(result.is_ok(), fits(side.into()), "side {side}: {result:?}");
        if let Err(e) = result {
            assert!(e.to_string().contains("of GPU memory"), "{e}");
        }
    }
}

/// The parameter map's batched kernel (`gray_scott_map`): every tile of a GPU map is bit for
/// bit the CPU map's tile, and a tile is the single CPU simulation with its rates. Odd tile
/// side (partial blocks and bands) and enough tiles for several z slices.
#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_map_tiles_match_single_cpu_simulations_bit_for_bit() {
    use simulations::grayscott::map::{MapSetup, ParameterMap};
    let setup = MapSetup { tiles: 9, side: 45, ..MapSetup::default() };
    let steps = 1000;
    let mut gpu_map = ParameterMap::new(&setup, &Device::Cuda(gpu())).unwrap();
    gpu_map.step(steps).unwrap();
    let (gu, gv) = gpu_map.fields().unwrap();
    let mut cpu_map = ParameterMap::new(&setup, &Device::Cpu).unwrap();
    cpu_map.step(steps).unwrap();
    let (cu, cv) = cpu_map.fields().unwrap();
    let bits = |x: &[f32]| x.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&gu), bits(&cu), "U: GPU map against CPU map");
    assert_eq!(bits(&gv), bits(&cv), "V: GPU map against CPU map");
    let cells = setup.tile_cells();
    for t in [0, setup.tile(4, 4), setup.tile_count() - 1] {
        let mut single = GrayScott::new(&setup.tile_setup(t), &Device::Cpu, Variant::Cpu).unwrap();
        single.step(steps).unwrap();
        let (su, sv) = single.fields().unwrap();
        assert_eq!(bits(&gu[t * cells..(t + 1) * cells]), bits(&su), "U of tile {t}");
        assert_eq!(bits(&gv[t * cells..(t + 1) * cells]), bits(&sv), "V of tile {t}");
    }
}
