//! GPU tests: each kernel against the CPU reference on fresh random fields at odd sizes, and
//! whole runs against the CPU backend. Run on a machine with a CUDA GPU:
//! `cargo test --release -- --ignored`.

mod common;

use std::sync::Arc;

use common::*;
use cudarc::driver::CudaSlice;
use host::{
    Device,
    cuda::Gpu,
    grayscott::{self, GrayScott, Init, Setup, Variant, cpu, cuda},
    render::colormap,
};
use kernels::colormap::MinMax;

/// An odd size, so partial blocks and the wrap-around at every edge are exercised.
const W: u32 = 257;
const H: u32 = 131;
const CELLS: usize = (W * H) as usize;

fn gpu() -> Arc<Gpu> {
    Gpu::open().expect("GPU tests need a CUDA GPU")
}

fn upload<T: cudarc::driver::DeviceRepr>(gpu: &Gpu, data: &[T]) -> CudaSlice<T> {
    gpu.stream().clone_htod(data).unwrap()
}

fn download<T: cudarc::driver::DeviceRepr + Default + Clone>(gpu: &Gpu, data: &CudaSlice<T>) -> Vec<T> {
    let out = gpu.stream().clone_dtoh(data).unwrap();
    gpu.synchronize().unwrap();
    out
}

/// A buffer full of NaN, so an element the kernel forgets to write fails the comparison.
fn poisoned(gpu: &Gpu) -> CudaSlice<f32> {
    upload(gpu, &vec![f32::NAN; CELLS])
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
    let u = random_field(CELLS, seed, 0.0, 1.0);
    let v = random_field(CELLS, seed + 1, 0.0, 1.0);
    let (mut un, mut vn) = (poisoned(&gpu), poisoned(&gpu));
    cuda::launch_fused(&gpu, &upload(&gpu, &u), &upload(&gpu, &v), &mut un, &mut vn, W, H, coral()).unwrap();
    let (want_u, want_v) = step_ref(&u, &v, W as usize, H as usize, &coral());
    let (got_u, got_v) = (download(&gpu, &un), download(&gpu, &vn));
    let (eu, ev) = (max_abs_diff(&got_u, &want_u), max_abs_diff(&got_v, &want_v));
    assert!(eu < 1e-5 && ev < 1e-5, "one fused step: |ΔU| {eu}, |ΔV| {ev}");
}

/// Both GPU variants agree with the CPU backend after 1,000 steps of a real pattern.
/// Tolerance: 1e-4 absolute. All three use the same IEEE float32 operations in the same
/// order (the PTX has no contracted FMAs), so in practice they agree exactly.
#[test]
#[ignore = "needs a CUDA GPU"]
fn thousand_steps_agree_with_cpu() {
    let gpu = gpu();
    let mut setup = Setup::new(W, H, coral());
    setup.init = Init::Spots;
    setup.seed = fresh_seed();
    let mut cpu_sim = GrayScott::new(&setup, &Device::Cpu, Variant::Fused).unwrap();
    cpu_sim.step(1000).unwrap();
    let (cu, cv) = cpu_sim.fields().unwrap();
    assert!(cv.iter().any(|&x| x > 0.1), "the pattern must be alive to be a test");
    for variant in [Variant::Fused, Variant::V1] {
        let mut sim = GrayScott::new(&setup, &Device::Cuda(gpu.clone()), variant).unwrap();
        sim.step(1000).unwrap();
        let (gu, gv) = sim.fields().unwrap();
        let (eu, ev) = (max_abs_diff(&gu, &cu), max_abs_diff(&gv, &cv));
        eprintln!("{variant:?} after 1000 steps: max |ΔU| {eu:e}, max |ΔV| {ev:e}");
        assert!(eu <= 1e-4 && ev <= 1e-4, "{variant:?}: |ΔU| {eu}, |ΔV| {ev}");
    }
}

fn gpu_levels(gpu: &Gpu, u: &[f32], v: &[f32]) -> (MinMax, Vec<u8>) {
    let (du, dv) = (upload(gpu, u), upload(gpu, v));
    let mut slots = upload(gpu, &[7u32; 4]);
    let mut levels = upload(gpu, &vec![0xAAu8; u.len()]);
    cuda::launch_min_max(gpu, &du, &dv, &mut slots).unwrap();
    cuda::launch_colormap(gpu, &du, &dv, &slots, &mut levels).unwrap();
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
    // 17 bytes per cell plus 64 MiB of slack: the largest side that fits, and one more.
    let fits = |side: u64| 17 * side * side + (64 << 20) <= free;
    for side in [1000u32, 30_000, grayscott::MAX_SIDE] {
        let result = cuda::check_fits(&gpu, side, side);
        assert_eq!(result.is_ok(), fits(side.into()), "side {side}: {result:?}");
        if let Err(e) = result {
            assert!(e.to_string().contains("of GPU memory"), "{e}");
        }
    }
}
