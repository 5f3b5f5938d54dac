//! `barkley --split P` on the CPU (these run in CI): the bands of rows exchange halos through
//! the simulations library's generic split, and every output is bit-identical to the run in
//! one part; checkpoints move between split and unsplit runs; mistakes are refused with one
//! line.

use crate::common;

use std::{fs, path::Path};

use crate::common::saved;

/// Runs `barkley --cpu --width 40 --height 25 -o picture.png` with `args` in `dir`; returns
/// (success, stdout and stderr). 25 rows: uneven bands (9, 8, 8 for 3 parts).
fn barkley(dir: &Path, args: &[&str]) -> (bool, String) {
    common::barkley_cpu(dir, (40, 25), args)
}

#[test]
fn three_parts_give_every_output_of_one_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    // 61 steps in chunks of 7 (frames): neither is a multiple of the halo's 8 steps.
    let outputs = |tag: &str| {
        [
            "--steps".to_string(),
            "61".into(),
            "--frame-every".into(),
            "7".into(),
            "--gif".into(),
            format!("{tag}.gif"),
            "--png".into(),
            format!("{tag}-last.png"),
            "--save".into(),
            format!("{tag}.npz"),
        ]
    };
    let one = outputs("one");
    let (ok, out) = barkley(dir.path(), &one.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(ok && out.contains("on the CPU in"), "{out}");
    let keep_picture =
        |tag: &str| fs::rename(dir.path().join("picture.png"), dir.path().join(format!("{tag}.png")));
    keep_picture("one").unwrap();
    for parts in ["2", "3"] {
        let tag = format!("split{parts}");
        let mut args = outputs(&tag).to_vec();
        args.extend(["--split".into(), parts.into()]);
        let (ok, out) = barkley(dir.path(), &args.iter().map(String::as_str).collect::<Vec<_>>());
        // The path the halos take is said: the CPU's parts offer no device memory.
        let place = format!("on the CPU in {parts} parts (halos through the host) in");
        assert!(ok && out.contains(&place), "{out}");
        keep_picture(&tag).unwrap();
        let one_npz = saved(&dir.path().join("one.npz"));
        assert_eq!(one_npz.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), ["u", "v"]);
        assert!(
            saved(&dir.path().join(format!("{tag}.npz"))) == one_npz,
            "--split {parts}: the saves differ"
        );
        for (whole, split) in [("one.gif", ".gif"), ("one-last.png", "-last.png"), ("one.png", ".png")] {
            let read = |name: &str| fs::read(dir.path().join(name)).unwrap();
            assert!(read(whole) == read(&format!("{tag}{split}")), "--split {parts}: {split} differs");
        }
    }
    // The steps did move the wave across the cuts: the run is not its start.
    let (ok, out) = barkley(dir.path(), &["--steps", "1", "--save", "start.npz"]);
    assert!(ok, "{out}");
    assert!(saved(&dir.path().join("start.npz")) != saved(&dir.path().join("one.npz")));
}

#[test]
fn five_parts_of_a_taller_grid_give_the_bits_of_one() {
    // 53 rows in 5 bands of 10-11, each above the halo's 8 rows; 37 steps.
    let dir = tempfile::tempdir().unwrap();
    let run = |tag: &str, extra: &[&str]| {
        let save = format!("{tag}.npz");
        let mut args = vec!["--steps", "37", "--save", save.as_str()];
        args.extend(extra);
        let (ok, out) = common::barkley_cpu(dir.path(), (40, 53), &args);
        assert!(ok, "{out}");
        saved(&dir.path().join(save))
    };
    let one = run("one", &[]);
    assert!(run("five", &["--split", "5"]) == one, "--split 5: the saves differ");
}

#[test]
fn checkpoints_move_between_split_and_unsplit_runs() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let (ok, out) = barkley(dir.path(), args);
        assert!(ok, "{args:?}: {out}");
        out
    };
    run(&["--steps", "45", "--save", "whole.npz"]);
    // Split in 2, checkpointed at 21 (mid-exchange), resumed in one part.
    run(&["--steps", "21", "--split", "2", "--checkpoint", "split.ck"]);
    let out = run(&["--steps", "45", "--resume", "split.ck", "--save", "from-split.npz"]);
    assert!(out.contains("resumed at step 21") && !out.contains("parts"), "{out}");
    // One part checkpointed at 13, resumed in 3 parts.
    run(&["--steps", "13", "--checkpoint", "whole.ck"]);
    let out = run(&["--steps", "45", "--resume", "whole.ck", "--split", "3", "--save", "from-whole.npz"]);
    assert!(out.contains("resumed at step 13") && out.contains("in 3 parts"), "{out}");
    // And a split run's periodic checkpoints, resumed in another split.
    run(&["--steps", "40", "--split", "3", "--checkpoint", "every.ck", "--checkpoint-every", "20"]);
    let out = run(&["--steps", "45", "--resume", "every.ck", "--split", "2", "--save", "split-split.npz"]);
    assert!(out.contains("resumed at step 40"), "{out}");
    let whole = saved(&dir.path().join("whole.npz"));
    for name in ["from-split.npz", "from-whole.npz", "split-split.npz"] {
        assert!(saved(&dir.path().join(name)) == whole, "{name} differs from the uninterrupted run");
    }
}

#[test]
fn mistakes_are_refused_with_one_line_and_nothing_written() {
    let dir = tempfile::tempdir().unwrap();
    let refused = |args: &[&str], expected: &str| {
        let (ok, out) = barkley(dir.path(), args);
        assert!(!ok && out.contains(expected), "{args:?}: {out}");
        let errors = out.lines().filter(|l| l.starts_with("barkley:") || l.starts_with("error:")).count();
        assert_eq!(errors, 1, "{args:?}: {out}");
        assert!(!out.contains("panicked"), "{out}");
    };
    let save = ["--steps", "10", "--save", "no.npz", "--gif", "no.gif"];
    // 25 rows in 4 parts: 7, 6, 6, 6 rows, fewer than the 8 rows of halo.
    refused(
        &[&save[..], &["--split", "4"]].concat(),
        "--split 4: the thinnest part has 6 rows, fewer than its halo of 8 rows",
    );
    refused(&[&save[..], &["--split", "26"]].concat(), "more parts than the grid's 25 rows");
    refused(
        &[&save[..], &["--gpus", "2"]].concat(),
        "--gpus spreads the parts over CUDA GPUs, but this run is on the CPU",
    );
    refused(&[&save[..], &["--split", "0"]].concat(), "invalid value '0' for '--split <P>'");
    refused(&[&save[..], &["--gpus", "0"]].concat(), "invalid value '0' for '--gpus <N>'");
    let mut names: Vec<_> = fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    names.sort();
    assert!(names.is_empty(), "left behind: {names:?}");
}

/// The launchers' rank variables, cleared so that a test run under `srun` or `mpirun` is not
/// taken for one of its ranks.
const LAUNCHER_VARS: [&str; 12] = [
    "OMPI_COMM_WORLD_RANK",
    "OMPI_COMM_WORLD_SIZE",
    "OMPI_COMM_WORLD_LOCAL_RANK",
    "OMPI_COMM_WORLD_LOCAL_SIZE",
    "PMI_RANK",
    "PMI_SIZE",
    "MPI_LOCALRANKID",
    "MPI_LOCALNRANKS",
    "SLURM_PROCID",
    "SLURM_STEP_NUM_TASKS",
    "SLURM_LOCALID",
    "SLURM_STEP_TASKS_PER_NODE",
];

/// Runs `barkley` with `args` in `dir` as Open MPI's rank `rank` of `size` (none: no
/// launcher); returns (exit code, stdout and stderr).
fn as_rank(dir: &Path, rank: Option<(u32, u32)>, args: &[&str]) -> (Option<i32>, String) {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_barkley"));
    command.current_dir(dir).args(args);
    for var in LAUNCHER_VARS {
        command.env_remove(var);
    }
    if let Some((rank, size)) = rank {
        command.env("OMPI_COMM_WORLD_RANK", rank.to_string()).env("OMPI_COMM_WORLD_SIZE", size.to_string());
    }
    let out = command.output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

#[test]
fn nccl_mistakes_are_refused_with_one_line_by_rank_0_and_nothing_written() {
    let dir = tempfile::tempdir().unwrap();
    let save = ["-o", "picture.png", "--steps", "10", "--save", "no.npz", "--gif", "no.gif"];
    let refused = |rank: Option<(u32, u32)>, args: &[&str], expected: &str| {
        let (code, out) = as_rank(dir.path(), rank, &[&save[..], args].concat());
        assert_eq!(code, Some(1), "{args:?}: {out}");
        assert!(out.contains(expected) && out.lines().count() == 1, "{rank:?} {args:?}: {out}");
        assert!(!out.contains("panicked"), "{out}");
    };
    let nccl_on_cpu =
        "--cpu: a split over NCCL ranks (mpirun, srun, --transport nccl) runs one part per process";
    // One process: the NCCL options where there is no NCCL run, and NCCL on the CPU.
    refused(None, &["--cpu", "--transport", "nccl"], nccl_on_cpu);
    refused(None, &["--cpu", "--nccl-id-file", "id"], "--nccl-id-file is for NCCL runs of several processes");
    refused(None, &["--cpu", "--peer-timeout", "0"], "--peer-timeout must be a number of seconds above 0");
    refused(
        None,
        &["--transport", "nccl", "--split", "2"],
        "--split 2 disagrees with the 1 process this command",
    );
    // Rank 0 of 2 (Open MPI's variables): NCCL by default, one part per process.
    let rank_0 = Some((0, 2));
    refused(rank_0, &["--cpu"], nccl_on_cpu);
    refused(rank_0, &["--split", "3"], "--split 3 disagrees with the 2 processes Open MPI started");
    refused(rank_0, &["--gpus", "1"], "--gpus 1 disagrees with the 2 processes Open MPI started");
    refused(rank_0, &["--transport", "local"], "--transport local keeps every part in one process");
    // Rank 1 leaves what every rank finds alike to rank 0: it ends without a word.
    for args in [&["--cpu"][..], &["--split", "3"], &["--transport", "local"]] {
        let (code, out) = as_rank(dir.path(), Some((1, 2)), &[&save[..], args].concat());
        assert_eq!((code, out.as_str()), (Some(1), ""), "rank 1, {args:?}");
    }
    let no_steps = ["-o", "picture.png", "--steps", "0"];
    let (code, out) = as_rank(dir.path(), rank_0, &no_steps);
    assert!(code == Some(1) && out.trim() == "barkley: --steps must be at least 1", "{out}");
    assert_eq!(as_rank(dir.path(), Some((1, 2)), &no_steps), (Some(1), String::new()), "rank 1, --steps 0");
    let (code, out) = as_rank(dir.path(), rank_0, &["serve"]);
    assert!(code == Some(1) && out.contains("barkley serve is one process, but Open MPI started 2"), "{out}");
    let mut names: Vec<_> = fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    names.sort();
    assert!(names.is_empty(), "left behind: {names:?}");
}
