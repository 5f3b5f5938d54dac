//! Barkley through the simulations library's driver, on the CPU (these run in CI): every output it
//! gets with no code of its own, and `--resume` bit-identical to an uninterrupted run.

use crate::common;

use std::{fs, path::Path, process::Command};

use crate::common::saved;

use barkley::{Field, Model, step_cpu};
use simulations::checkpoint::{Checkpoint, Simulation};

/// Runs `barkley --cpu --width 40 --height 24` with `args` in `dir`; returns (success, stdout
/// and stderr).
fn barkley(dir: &Path, args: &[&str]) -> (bool, String) {
    common::barkley_cpu(dir, (40, 24), args)
}

#[test]
fn every_output_comes_from_the_driver() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "--steps",
        "60",
        "--frame-every",
        "20",
        "--gif",
        "b.gif",
        "--mp4",
        "b.mp4",
        "--png-dir",
        "frames",
        "--png",
        "last.png",
        "--save",
        "b.npz",
        "--checkpoint",
        "b.ck",
    ];
    let (ok, out) = barkley(dir.path(), &args);
    assert!(ok, "{out}");
    for file in ["picture.png", "b.gif", "b.mp4", "last.png", "b.npz", "b.ck"] {
        assert!(dir.path().join(file).is_file(), "{file} missing: {out}");
        assert!(out.contains(file), "the summary does not name {file}: {out}");
    }
    let frames: Vec<_> = fs::read_dir(dir.path().join("frames")).unwrap().collect();
    assert_eq!(frames.len(), 3, "frames at steps 20, 40 and 60");
    let gif = gif::DecodeOptions::new().read_info(fs::File::open(dir.path().join("b.gif")).unwrap()).unwrap();
    assert_eq!(gif.width(), 40);
    // --save holds the fields of the run, as the CPU reference gives them.
    let model = Model::default();
    let mut field = Field::broken_wave(40, 24, &model);
    step_cpu(&mut field, &model.coefficients(), 60);
    let bits = |x: &[f32]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(
        saved(&dir.path().join("b.npz")),
        [("u".into(), bits(&field.u)), ("v".into(), bits(&field.v))]
    );
    let checkpoint = Checkpoint::read(&dir.path().join("b.ck")).unwrap();
    assert_eq!((checkpoint.simulation, checkpoint.steps), (Simulation::Model("barkley".into()), 60));
}

#[test]
fn a_resumed_run_is_bit_identical_to_an_uninterrupted_one() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, out) = barkley(dir.path(), &["--steps", "70", "--save", "whole.npz"]);
    assert!(ok, "{out}");
    let (ok, out) = barkley(dir.path(), &["--steps", "30", "--checkpoint", "half.ck", "--save", "half.npz"]);
    assert!(ok, "{out}");
    let (ok, out) = barkley(dir.path(), &["--steps", "70", "--resume", "half.ck", "--save", "resumed.npz"]);
    assert!(ok && out.contains("resumed at step 30"), "{out}");
    let resumed = saved(&dir.path().join("resumed.npz"));
    assert!(saved(&dir.path().join("whole.npz")) == resumed, "resume differs");
    // The resumed run did step on: equal to an uninterrupted run, but not to the half-way state.
    assert!(saved(&dir.path().join("half.npz")) != resumed, "the resumed run did not change the state");
    // A checkpoint of another simulation or size is refused with one line, nothing written.
    Checkpoint::new(Simulation::Heat, [40, 24, 1], 5, Vec::new()).write(&dir.path().join("heat.ck")).unwrap();
    let (ok, out) = barkley(dir.path(), &["--steps", "70", "--resume", "heat.ck", "--save", "no.npz"]);
    assert!(!ok && out.contains("this is a heat checkpoint; it cannot resume a barkley run"), "{out}");
    let (ok, out) = Command::new(env!("CARGO_BIN_EXE_barkley"))
        .current_dir(dir.path())
        .args([
            "--cpu", "--width", "41", "--height", "24", "--steps", "70", "--resume", "half.ck", "-o",
            "no.png",
        ])
        .output()
        .map(|o| (o.status.success(), String::from_utf8_lossy(&o.stderr).into_owned()))
        .unwrap();
    assert!(!ok && out.contains("40x24"), "{out}");
    assert!(!dir.path().join("no.npz").exists() && !dir.path().join("no.png").exists());
}
