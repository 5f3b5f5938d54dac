//! The GPU against the CPU reference, bit for bit. Run on a machine with a CUDA GPU:
//! `cargo test --release -p barkley --test it -- --ignored gpu::`.

use std::process::Command;

use barkley::{Field, IMAGES, Model, step_cpu, step_gpu};
use ptxkit_host::Gpu;

/// The broken wave with noise in [−0.05, 0.05) (clamped to u in [0, 1], v ≥ 0) from a fresh seed (xorshift64*) on every value, so
/// each run compares new inputs; prints the seed.
fn noisy_broken_wave(width: u32, height: u32) -> Field {
    let mut seed = std::time::SystemTime::UNIX_EPOCH.elapsed().unwrap().as_nanos() as u64 | 1;
    println!("{width}x{height}: seed {seed:#x}");
    let mut noise = move || {
        seed ^= seed >> 12;
        seed ^= seed << 25;
        seed ^= seed >> 27;
        (seed.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 40) as f32 / (1u64 << 24) as f32 * 0.1 - 0.05
    };
    let mut field = Field::broken_wave(width, height, &Model::default());
    // Clamped to the model's range: an excitable medium pushed below u = 0 by the explicit
    // step's stiff reaction term (dt/ε = 1) loses its waves.
    field.u.iter_mut().for_each(|x| *x = (*x + noise()).clamp(0.0, 1.0));
    field.v.iter_mut().for_each(|x| *x = (*x + noise()).max(0.0));
    field
}

/// Where two fields differ in their bits (so −0 and +0, or two NaNs, differ too).
fn differences(gpu: &[f32], cpu: &[f32]) -> Vec<(usize, f32, f32)> {
    let pairs = gpu.iter().zip(cpu).enumerate();
    pairs.filter(|(_, (g, c))| g.to_bits() != c.to_bits()).map(|(i, (g, c))| (i, *g, *c)).collect()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_steps_are_bit_identical_to_the_cpu() {
    let coefficients = Model::default().coefficients();
    // The cubin for this GPU (where there is one), then the PTX the driver compiles.
    for force_ptx in [false, true] {
        let gpu = Gpu::open_with(0, &IMAGES, force_ptx).expect("a CUDA GPU");
        println!("{} ({})", gpu.name(), gpu.image());
        // Odd sizes: partial blocks in both directions, and every edge of the no-flux boundary.
        for (width, height, steps) in [(257, 131, 1000), (33, 9, 1001), (8, 300, 777)] {
            // A fresh start whose waves survive (noise can, rarely, extinguish them).
            let (mut on_cpu, mut on_gpu, mut excited) = (None, None, 0);
            for _ in 0..5 {
                let start = noisy_broken_wave(width, height);
                let mut cpu = start.clone();
                step_cpu(&mut cpu, &coefficients, steps);
                excited = cpu.u.iter().filter(|&&u| u > 0.5).count();
                (on_cpu, on_gpu) = (Some(cpu), Some(start));
                if excited > 0 || width < 100 {
                    break;
                }
            }
            let (on_cpu, mut on_gpu) = (on_cpu.unwrap(), on_gpu.unwrap());
            step_gpu(&gpu, &mut on_gpu, &coefficients, steps).unwrap();
            println!("{width}x{height}, {steps} steps: {excited} excited cells");
            assert!(excited > 0 || width < 100, "the waves died out: the comparison would be trivial");
            for (name, g, c) in [("u", &on_gpu.u, &on_cpu.u), ("v", &on_gpu.v, &on_cpu.v)] {
                let wrong = differences(g, c);
                let first = &wrong[..3.min(wrong.len())];
                assert!(
                    wrong.is_empty(),
                    "{name}: {} cells differ, first (index, gpu, cpu): {first:?}",
                    wrong.len()
                );
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_command_draws_the_same_picture_on_the_gpu_as_on_the_cpu() {
    // BARKLEY_BIN: where the command was copied to (scripts/stage-gpu.sh), else where cargo built it.
    let binary = std::env::var_os("BARKLEY_BIN").unwrap_or(env!("CARGO_BIN_EXE_barkley").into());
    let dir = tempfile::tempdir().unwrap();
    let run = |extra: &[&str], name: &str| {
        let path = dir.path().join(name);
        let out = Command::new(&binary)
            .args(["--width", "301", "--height", "203", "--steps", "3000", "-o"])
            .arg(&path)
            .args(extra)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
        print!("{stdout}");
        (stdout, std::fs::read(path).unwrap())
    };
    let (gpu_says, gpu_png) = run(&[], "gpu.png");
    let (_, cpu_png) = run(&["--cpu"], "cpu.png");
    assert!(gpu_says.contains("on the GPU"), "{gpu_says}");
    assert!(gpu_png == cpu_png, "the pictures differ");
}

/// Through the driver on the GPU: `--save` equals the CPU's, and a run resumed on the GPU
/// from a checkpoint the GPU wrote equals the uninterrupted one, bit for bit.
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_driver_saves_and_resumes_gpu_runs_bit_identically() {
    let binary = std::env::var_os("BARKLEY_BIN").unwrap_or(env!("CARGO_BIN_EXE_barkley").into());
    let dir = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| {
        let out = Command::new(&binary)
            .current_dir(dir.path())
            .args(["--width", "301", "--height", "203", "-o", "picture.png"])
            .args(extra)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{extra:?}: {text}");
        print!("{text}");
        text
    };
    assert!(run(&["--steps", "1000", "--save", "gpu.npz", "--gif", "gpu.gif"]).contains("on the GPU"));
    run(&["--steps", "1000", "--save", "cpu.npz", "--cpu"]);
    run(&["--steps", "400", "--checkpoint", "half.ck"]);
    assert!(
        run(&["--steps", "1000", "--resume", "half.ck", "--save", "resumed.npz"])
            .contains("resumed at step 400")
    );
    let read = |name: &str| {
        let arrays = simulations::export::read_npz(&dir.path().join(name)).unwrap();
        arrays
            .into_iter()
            .map(|a| (a.name, a.data.iter().map(|x| x.to_bits()).collect::<Vec<_>>()))
            .collect::<Vec<_>>()
    };
    assert!(read("gpu.npz") == read("cpu.npz"), "GPU and CPU saves differ");
    assert!(read("gpu.npz") == read("resumed.npz"), "the resumed GPU run differs");
}
