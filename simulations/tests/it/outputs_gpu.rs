//! Checkpoints on the GPU: for every CUDA variant of every simulation, N steps, checkpoint,
//! resume in a new simulation, M more steps equals the same steps uninterrupted, bit for bit.
//! Run on a machine with a CUDA GPU:
//! `cargo test --release -p simulations --test it -- --ignored outputs_gpu::`.

use simulations::{
    Device,
    grayscott::{GrayScott, Init, Setup, Variant, preset},
    heat::{Heat, HeatInit, HeatSetup, HeatVariant},
    physarum::{Physarum, PhysarumSetup, PhysarumVariant},
};

fn device() -> Device {
    Device::Cuda(simulations::cuda::open().expect("GPU tests need a CUDA GPU"))
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("gpu-ckpt-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn grayscott_resumes_bit_identically_on_every_gpu_variant() {
    let device = device();
    let dir = scratch("gs");
    let mut setup = Setup::new(333, 217, preset("coral").unwrap().rates());
    setup.init = Init::Spots;
    for variant in Variant::ALL.iter().copied().filter(|v| v.is_gpu()) {
        let path = dir.join(format!("{}.ckpt", variant.name()));
        // The same step calls on both sides (temporal blocking splits each call into launches).
        let mut straight = GrayScott::new(&setup, &device, variant).unwrap();
        straight.step(301).unwrap();
        straight.save_checkpoint(&path).unwrap();
        straight.step(250).unwrap();

        let mut resumed = GrayScott::new(&setup, &device, variant).unwrap();
        resumed.resume_from(&path).unwrap();
        resumed.step(250).unwrap();
        let ((u1, v1), (u2, v2)) = (straight.fields().unwrap(), resumed.fields().unwrap());
        assert_eq!(bits(&u1), bits(&u2), "{}: U", variant.name());
        assert_eq!(bits(&v1), bits(&v2), "{}: V", variant.name());
        assert_eq!(resumed.steps_done(), 551);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn heat_resumes_bit_identically_on_every_gpu_variant() {
    let device = device();
    let dir = scratch("heat");
    let mut setup = HeatSetup::cube(37, HeatInit::Blobs);
    setup.n = [37, 29, 23];
    setup.boundary = 0.1;
    let variants =
        [HeatVariant::Naive, HeatVariant::Reuse, HeatVariant::Fused, HeatVariant::Tiled, HeatVariant::Single];
    for variant in variants {
        let path = dir.join(format!("{}.ckpt", variant.name()));
        let mut straight = Heat::new(&setup, &device, variant).unwrap();
        straight.step(17).unwrap();
        straight.save_checkpoint(&path).unwrap();
        straight.step(12).unwrap();

        let mut resumed = Heat::new(&setup, &device, variant).unwrap();
        resumed.resume_from(&path).unwrap();
        resumed.step(12).unwrap();
        assert_eq!(bits(&straight.field().unwrap()), bits(&resumed.field().unwrap()), "{}", variant.name());
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn physarum_resumes_bit_identically_on_every_gpu_variant() {
    let device = device();
    let dir = scratch("physarum");
    let setup =
        PhysarumSetup { width: 333, height: 217, agents: 20_011, jitter: 0.3, ..PhysarumSetup::default() };
    for variant in PhysarumVariant::GPU {
        let path = dir.join(format!("{}.ckpt", variant.name()));
        // 21 steps: the optimized variant's agents are binned at step 16 on the straight run,
        // and come back in id order on the resumed one.
        let mut straight = Physarum::new(&setup, &device, variant).unwrap();
        straight.step(21).unwrap();
        straight.save_checkpoint(&path).unwrap();
        straight.step(19).unwrap();

        let mut resumed = Physarum::new(&setup, &device, variant).unwrap();
        resumed.resume_from(&path).unwrap();
        resumed.step(19).unwrap();
        let name = variant.name();
        assert_eq!(bits(&straight.trail().unwrap()), bits(&resumed.trail().unwrap()), "{name}: trail");
        let (a, b) = (straight.agents().unwrap(), resumed.agents().unwrap());
        assert_eq!(bits(&a.heading), bits(&b.heading), "{name}: headings");
        assert_eq!((bits(&a.y), bits(&a.x)), (bits(&b.y), bits(&b.x)), "{name}: positions");
    }
}
