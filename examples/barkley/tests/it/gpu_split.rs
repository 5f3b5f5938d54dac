//! `barkley --split`/`--gpus` on the GPU (ignored without one; `cargo test --release -p barkley
//! --test it -- --ignored gpu_split::`): bands of rows on one GPU, and on two where there are two,
//! give every saved array bit-identical to the CPU's run in one part, with their halos copied
//! GPU to GPU (the run says so), and checkpoints move between split and unsplit GPU runs.

use std::process::Command;

/// Runs the binary (`BARKLEY_BIN` if set) on a 301 × 203 grid (uneven bands) with `args` in
/// `dir`; returns its stdout and stderr, failing the test if it failed.
fn barkley(dir: &std::path::Path, args: &[&str]) -> String {
    let binary = std::env::var_os("BARKLEY_BIN").unwrap_or(env!("CARGO_BIN_EXE_barkley").into());
    let out = Command::new(&binary)
        .current_dir(dir)
        .args(["--width", "301", "--height", "203", "-o", "picture.png"])
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {text}");
    print!("{text}");
    text
}

/// The arrays of a saved `.npz` in `dir`, as bits.
fn saved(dir: &std::path::Path, name: &str) -> Vec<(String, Vec<u32>)> {
    simulations::export::read_npz(&dir.join(name))
        .unwrap()
        .into_iter()
        .map(|a| (a.name, a.data.iter().map(|x| x.to_bits()).collect()))
        .collect()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn split_gpu_runs_are_bit_identical_to_one_part() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    // 1000 steps in chunks of 30 (frames): neither a multiple of the halo's 8 steps.
    let frames = ["--frame-every", "30", "--gif"];
    barkley(dir, &["--steps", "1000", "--cpu", "--save", "cpu.npz"]);
    let out = barkley(dir, &[&["--steps", "1000", "--save", "gpu.npz"][..], &frames, &["gpu.gif"]].concat());
    assert!(out.contains("on the GPU (") && !out.contains("parts"), "{out}");
    let out = barkley(
        dir,
        &[&["--steps", "1000", "--split", "3", "--save", "split.npz"][..], &frames, &["split.gif"]].concat(),
    );
    assert!(out.contains("on the GPU (") && out.contains("in 3 parts (halos GPU to GPU) in"), "{out}");
    let cpu = saved(dir, "cpu.npz");
    assert!(saved(dir, "gpu.npz") == cpu, "the GPU's run in one part differs from the CPU's");
    assert!(saved(dir, "split.npz") == cpu, "--split 3 on the GPU differs from one part");
    assert!(std::fs::read(dir.join("split.gif")).unwrap() == std::fs::read(dir.join("gpu.gif")).unwrap());

    // A split GPU run's checkpoint resumed in one part, and one part's resumed split.
    barkley(dir, &["--steps", "411", "--split", "2", "--checkpoint", "split.ck"]);
    let out = barkley(dir, &["--steps", "1000", "--resume", "split.ck", "--save", "from-split.npz"]);
    assert!(out.contains("resumed at step 411"), "{out}");
    barkley(dir, &["--steps", "397", "--checkpoint", "whole.ck"]);
    let out = barkley(
        dir,
        &["--steps", "1000", "--resume", "whole.ck", "--split", "5", "--save", "from-whole.npz"],
    );
    assert!(out.contains("resumed at step 397") && out.contains("in 5 parts (halos GPU to GPU)"), "{out}");
    assert!(saved(dir, "from-split.npz") == cpu, "a --split 2 checkpoint resumed in one part differs");
    assert!(saved(dir, "from-whole.npz") == cpu, "a checkpoint resumed in 5 parts differs");

    // Two GPUs where there are two.
    let present = ptxkit_host::device_count().unwrap();
    if present < 2 {
        println!("note: {present} CUDA GPU here: --gpus 2 not tested");
    } else {
        for (args, parts) in [(&["--gpus", "2"][..], "2"), (&["--gpus", "2", "--split", "5"][..], "5")] {
            let out = barkley(dir, &[&["--steps", "1000", "--save", "gpus.npz"][..], args].concat());
            let place = format!("in {parts} parts (halos GPU to GPU) in");
            assert!(out.contains("on 2 GPUs (") && out.contains(&place), "{out}");
            assert!(saved(dir, "gpus.npz") == cpu, "{args:?} differs from one part");
        }
    }
    // More GPUs than there are: one line, no output.
    let beyond = (present + 1).to_string();
    let binary = std::env::var_os("BARKLEY_BIN").unwrap_or(env!("CARGO_BIN_EXE_barkley").into());
    let out = Command::new(&binary)
        .current_dir(dir)
        .args(["--steps", "10", "--gpus", &beyond, "--save", "no.npz", "-o", "no.png"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let expected = format!("--gpus {beyond}: this machine has {present} CUDA GPU");
    assert!(!out.status.success() && stderr.contains(&expected), "{stderr}");
    assert!(!dir.join("no.npz").exists() && !dir.join("no.png").exists());
}
