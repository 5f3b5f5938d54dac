//! GPU tests of the heat kernels and variants against the CPU reference, on fresh random
//! fields at odd sizes. Run on a machine with a CUDA GPU:
//! `cargo test --release -p simulations --test it -- --ignored gpu_heat::`.

use crate::common::{fresh_seed, max_abs_diff, random_field};
use crate::gpu_helpers::{download, gpu, upload};
use cudarc::driver::CudaSlice;
use simulations::{
    Device,
    heat::{Heat, HeatEngine, HeatInit, HeatSetup, HeatVariant, cpu, cuda},
};

const N: [u32; 3] = [37, 41, 43];
const CELLS: usize = 37 * 41 * 43;

/// A field with zero faces (like every stage), random inside.
fn stage_like(seed: u64) -> Vec<f32> {
    let mut f = random_field(CELLS, seed, -1.0, 1.0);
    let mut zero = vec![0.0; CELLS];
    cpu::stage(&f.clone(), &mut zero, N, 1.0);
    for (value, s) in f.iter_mut().zip(&zero) {
        if *s == 0.0 {
            *value = 0.0;
        }
    }
    f
}

fn cpu_stage(f: &[f32], a: f32) -> Vec<f32> {
    let mut out = vec![0.0; f.len()];
    cpu::stage(f, &mut out, N, a);
    out
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn stencil_kernels_match_cpu() {
    let (gpu, seed) = (gpu(), fresh_seed());
    let (u, a) = (random_field(CELLS, seed, 0.0, 1.0), 0.13);
    let want = cpu_stage(&u, a);
    // One thread per cell and 2.5-D: bit-identical to the CPU (same expression).
    let mut out = upload(&gpu, &vec![f32::NAN; CELLS]);
    cuda::launch_laplacian(&gpu, &upload(&gpu, &u), &mut out, N, a).unwrap();
    assert_eq!(download(&gpu, &out), want);
    let mut out = upload(&gpu, &vec![0.0; CELLS]);
    cuda::launch_laplacian_tiled(&gpu, &upload(&gpu, &u), &mut out, N, a).unwrap();
    assert_eq!(download(&gpu, &out), want);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn stage_kernels_match_cpu() {
    let (gpu, seed) = (gpu(), fresh_seed());
    let (u, k, k1, a, c) =
        (random_field(CELLS, seed, 0.0, 1.0), stage_like(seed + 1), stage_like(seed + 2), 0.13, 0.7);
    // naive: the stencil of u + c·k, as the CPU forms it: bit-identical.
    let tmp: Vec<f32> = u.iter().zip(&k).map(|(&u, &k)| u + c * k).collect();
    let mut out = upload(&gpu, &vec![f32::NAN; CELLS]);
    cuda::launch_stage_naive(&gpu, &upload(&gpu, &u), &upload(&gpu, &k), &mut out, N, a, c).unwrap();
    assert_eq!(download(&gpu, &out), cpu_stage(&tmp, a));
    // reuse: k1 + c·a∇²k.
    let want: Vec<f32> = k1.iter().zip(cpu_stage(&k, a)).map(|(&k1, s)| k1 + c * s).collect();
    let mut out = upload(&gpu, &vec![f32::NAN; CELLS]);
    cuda::launch_stage_reuse(&gpu, &upload(&gpu, &k1), &upload(&gpu, &k), &mut out, N, a, c).unwrap();
    assert!(max_abs_diff(&download(&gpu, &out), &want) < 1e-5);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn update_kernels_match_cpu() {
    let (gpu, seed) = (gpu(), fresh_seed());
    let u = random_field(CELLS, seed, 0.0, 1.0);
    let ks: Vec<Vec<f32>> = (1..=4).map(|i| stage_like(seed + i)).collect();
    let dt = 0.05;
    let want: Vec<f32> = (0..CELLS)
        .map(|i| u[i] + dt / 6.0 * (ks[0][i] + 2.0 * ks[1][i] + 2.0 * ks[2][i] + ks[3][i]))
        .collect();
    let mut du = upload(&gpu, &u);
    let dk: Vec<CudaSlice<f32>> = ks.iter().map(|k| upload(&gpu, k)).collect();
    cuda::launch_rk4_update(&gpu, &mut du, &dk[0], &dk[1], &dk[2], &dk[3], dt).unwrap();
    assert_eq!(download(&gpu, &du), want);

    // The polynomial pass, both forms, against f64.
    let (a, v) = (0.13, &ks[..3]);
    let av3 = cpu_stage(&v[2], a);
    let want: Vec<f64> = (0..CELLS)
        .map(|i| {
            let d = f64::from(dt);
            let interior = av3[i] != 0.0 || v[2][i] != 0.0;
            if !interior {
                return f64::from(u[i]);
            }
            f64::from(u[i])
                + d * f64::from(v[0][i])
                + d * d / 2.0 * f64::from(v[1][i])
                + d.powi(3) / 6.0 * f64::from(v[2][i])
                + d.powi(4) / 24.0 * f64::from(av3[i])
        })
        .collect();
    let mut plain = upload(&gpu, &u);
    cuda::launch_poly_update(&gpu, &mut plain, &dk[0], &dk[1], &dk[2], N, a, dt).unwrap();
    let plain = download(&gpu, &plain);
    assert!(max_abs_diff(&plain, &want) < 1e-5);
    let mut tiled = upload(&gpu, &u);
    cuda::launch_poly_update_tiled(&gpu, &mut tiled, &dk[0], &dk[1], &dk[2], N, a, dt).unwrap();
    assert_eq!(download(&gpu, &tiled), plain, "2.5-D and one-thread-per-cell forms agree exactly");
}

/// The single-pass kernel on grids smaller than its tile and chunk, and spanning several
/// chunks, against the CPU after 3 steps.
#[test]
#[ignore = "needs a CUDA GPU"]
fn single_pass_matches_cpu_on_awkward_sizes() {
    let gpu = gpu();
    for n in [[3, 3, 3], [5, 4, 7], [33, 9, 70], [70, 17, 130]] {
        let mut setup = HeatSetup::cube(8, HeatInit::Blobs);
        setup.n = n;
        setup.boundary = 0.5;
        setup.seed = fresh_seed();
        let mut cpu_sim = Heat::new(&setup, &Device::Cpu, HeatVariant::Cpu).unwrap();
        cpu_sim.step(3).unwrap();
        let mut sim = Heat::new(&setup, &Device::Cuda(gpu.clone()), HeatVariant::Single).unwrap();
        sim.step(3).unwrap();
        let diff = max_abs_diff(&sim.field().unwrap(), &cpu_sim.field().unwrap());
        assert!(diff <= 2e-6, "{n:?}: {diff}");
    }
}

/// The single pass with its work cut into runs that start and end mid-column and span
/// several tile columns (one plane, 7), into one round of whole tile columns and runs over
/// the one left (8 blocks for 9 tiles), into rounds alone (one block for everything), and
/// ranges of output planes, against one CPU step.
#[test]
#[ignore = "needs a CUDA GPU"]
fn single_pass_runs_may_cross_tile_columns() {
    let (gpu, seed) = (gpu(), fresh_seed());
    let mut setup = HeatSetup::cube(8, HeatInit::Blobs);
    setup.n = [130, 60, 43];
    setup.boundary = 0.5;
    setup.seed = seed;
    let u = simulations::heat::initial_field(&setup);
    let mut cpu_sim = cpu::CpuHeat::new(&setup, u.clone());
    cpu_sim.step_once();
    let want = cpu_sim.field().unwrap();
    let work =
        130u32.div_ceil(kernels::heat::SINGLE_OUT_W) * 60u32.div_ceil(kernels::heat::SINGLE_OUT_H) * 43;
    for planes_per_block in [1, 7, 50, work] {
        let mut out = upload(&gpu, &vec![f32::NAN; u.len()]);
        let pass = cuda::SinglePass::with_resident(work.div_ceil(planes_per_block));
        pass.launch(
            &gpu,
            &upload(&gpu, &u),
            &mut out,
            setup.n,
            0..43,
            setup.a(),
            setup.dt,
            Default::default(),
        )
        .unwrap();
        let diff = max_abs_diff(&download(&gpu, &out), &want);
        assert!(diff <= 2e-6, "{planes_per_block} planes per block: {diff}");
    }
    // A range of output planes (what a slab of a split run writes): those planes equal the
    // CPU's, every other plane keeps what was there.
    let plane = 130 * 60;
    for (planes, resident) in [(0..4, 132), (5..9, 7), (4..39, 132), (39..43, 1), (21..22, 3)] {
        let mut out = upload(&gpu, &vec![f32::NAN; u.len()]);
        let pass = cuda::SinglePass::with_resident(resident);
        pass.launch(
            &gpu,
            &upload(&gpu, &u),
            &mut out,
            setup.n,
            planes.clone(),
            setup.a(),
            setup.dt,
            Default::default(),
        )
        .unwrap();
        let got = download(&gpu, &out);
        for z in 0..43usize {
            let (g, w) = (&got[z * plane..(z + 1) * plane], &want[z * plane..(z + 1) * plane]);
            if planes.contains(&(z as u32)) {
                let diff = max_abs_diff(g, w);
                assert!(diff <= 2e-6, "planes {planes:?}, plane {z}: {diff}");
            } else {
                assert!(g.iter().all(|x| x.is_nan()), "planes {planes:?}: plane {z} was written");
            }
        }
    }
}

/// The single pass with round signals ([`kernels::heat::RoundSignals`], the exchange by
/// rounds): with every halo row announced it writes the same bits as without, and each
/// launch counts every block once in each round's flag and once in the runs' flag; with a
/// row announced short of what the first round reads, a launch waits until it arrives.
#[test]
#[ignore = "needs a CUDA GPU"]
fn single_pass_counts_its_rounds_and_waits_for_halo_rows() {
    use cudarc::driver::DevicePtr as _;
    use kernels::heat::RoundSignals;
    let (gpu, seed) = (gpu(), fresh_seed());
    let mut setup = HeatSetup::cube(8, HeatInit::Blobs);
    setup.n = [130, 97, 43];
    setup.seed = seed;
    let u = upload(&gpu, &simulations::heat::initial_field(&setup));
    let cells = 130 * 97 * 43;
    // 4 blocks for the 15 tiles: 3 rounds of whole columns, then runs over the 3 left (with a
    // whole GPU's blocks there would be no round at all).
    let pass = cuda::SinglePass::with_resident(4);
    let march = pass.march(130, 97, 43);
    assert_eq!((march.blocks, march.columns_per_block), (4, 3), "{march:?}");
    let mut plain = upload(&gpu, &vec![f32::NAN; cells]);
    pass.launch(&gpu, &u, &mut plain, setup.n, 0..43, setup.a(), setup.dt, RoundSignals::default()).unwrap();
    let want = download(&gpu, &plain);
    let stream = gpu.stream();
    let rounds = march.columns_per_block as usize;
    let ny = 97;
    let mut flags: CudaSlice<u32> = stream.alloc_zeros(3 + rounds).unwrap();
    for launch in 1..=2u32 {
        let base = launch.wrapping_mul(0x9e37_79b9);
        stream.memcpy_htod(&[base + ny, base + ny], &mut flags.slice_mut(0..2)).unwrap();
        let signals = RoundSignals { flags: flags.device_ptr(stream).0, base, sides: 3 };
        let mut out = upload(&gpu, &vec![f32::NAN; cells]);
        pass.launch(&gpu, &u, &mut out, setup.n, 0..43, setup.a(), setup.dt, signals).unwrap();
        let got = download(&gpu, &out);
        assert!(got.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()), "launch {launch}");
        let counts = stream.clone_dtoh(&flags).unwrap();
        assert_eq!(counts[2..], vec![march.blocks * launch; rounds + 1], "{march:?}");
    }
    // Rows short of the first round's: the launch spins until the host announces them (from
    // a stream made before the launch: making one may synchronise the context).
    let other = gpu.context().new_stream().unwrap();
    let base = 77u32;
    stream.memcpy_htod(&[base, base + ny], &mut flags.slice_mut(0..2)).unwrap();
    let signals = RoundSignals { flags: flags.device_ptr(stream).0, base, sides: 1 };
    let mut out = upload(&gpu, &vec![f32::NAN; cells]);
    pass.launch(&gpu, &u, &mut out, setup.n, 0..43, setup.a(), setup.dt, signals).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    // SAFETY: a query of a live stream.
    let waiting = unsafe { cudarc::driver::sys::cuStreamQuery(stream.cu_stream()) };
    assert_eq!(waiting, cudarc::driver::sys::CUresult::CUDA_ERROR_NOT_READY, "the launch waits for row 0");
    // Announced from a stream of its own (this one is busy with the launch; a fork would
    // wait for it).
    other.memcpy_htod(&[base + ny], &mut flags.slice_mut(0..1)).unwrap();
    other.synchronize().unwrap();
    stream.synchronize().unwrap();
    let got = download(&gpu, &out);
    assert!(got.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()), "after the wait");
}

/// Every GPU variant against the CPU after 10 steps of a real field. Tolerance: 2e-6
/// absolute on values in [0, 1] (naive is bit-identical; reuse and the polynomial forms round
/// differently).
#[test]
#[ignore = "needs a CUDA GPU"]
fn every_variant_agrees_with_cpu_after_10_steps() {
    let gpu = gpu();
    for init in [HeatInit::Blobs, HeatInit::HotCube] {
        let mut setup = HeatSetup::cube(37, init);
        setup.n = N;
        setup.boundary = 0.25;
        setup.seed = fresh_seed();
        let mut cpu_sim = Heat::new(&setup, &Device::Cpu, HeatVariant::Cpu).unwrap();
        cpu_sim.step(10).unwrap();
        let want = cpu_sim.field().unwrap();
        for variant in [
            HeatVariant::Naive,
            HeatVariant::Reuse,
            HeatVariant::Fused,
            HeatVariant::Tiled,
            HeatVariant::Single,
        ] {
            let mut sim = Heat::new(&setup, &Device::Cuda(gpu.clone()), variant).unwrap();
            sim.step(10).unwrap();
            let got = sim.field().unwrap();
            let diff = max_abs_diff(&got, &want);
            eprintln!("{init:?} {}: max |Δu| after 10 steps {diff:e}", variant.name());
            assert!(diff <= 2e-6, "{}: {diff}", variant.name());
            if variant == HeatVariant::Naive {
                assert_eq!(got, want, "naive forms the stages exactly as the CPU does");
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn sine_mode_decays_as_the_exact_solution_on_the_gpu() {
    let gpu = gpu();
    let setup = HeatSetup::cube(33, HeatInit::Sine);
    for variant in [HeatVariant::Fused, HeatVariant::Tiled, HeatVariant::Single] {
        let mut sim = Heat::new(&setup, &Device::Cuda(gpu.clone()), variant).unwrap();
        sim.step(100).unwrap();
        let (_, rel) = simulations::heat::sine_error(&setup, &sim.field().unwrap(), sim.time()).unwrap();
        eprintln!("{}: relative error {rel:e}", variant.name());
        assert!(rel < 1e-4, "{}: {rel}", variant.name());
    }
}
