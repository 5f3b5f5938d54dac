//! Issue 27, part 4 for `--png-dir`: a CPU run killed with SIGKILL while it encodes frames
//! leaves the directory exactly as it was (absent, or holding the earlier run's frames), with
//! no stray entry: on Linux the frames wait in one anonymous spill file (`O_TMPFILE`) until
//! the run completes. Where that is not possible (forced here with
//! `RUST_GPU_SIM_NAMED_TEMPORARIES=1`) the frames are staged in a named `.tmpXXXXXX`
//! directory, which SIGKILL does leave: that test also shows these tests see a stray entry
//! when there is one. Both paths write the same frames.

use crate::common;

use std::{
    path::Path,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use crate::common::{scratch_dir, sigkill_once, spill_file_size};
use simulations::outfile::NAMED_TEMPORARIES_VAR;

/// Every entry under `dir` (recursively, links not followed) with its kind and contents,
/// sorted.
fn snapshot(dir: &Path) -> Vec<(String, &'static str, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let entry = entry.unwrap();
            let kind = entry.file_type().unwrap();
            let name = entry.path().strip_prefix(dir).unwrap().display().to_string();
            if kind.is_dir() {
                stack.push(entry.path());
                out.push((name, "dir", Vec::new()));
            } else {
                out.push((name, "file", std::fs::read(entry.path()).unwrap()));
            }
        }
    }
    out.sort();
    out
}

fn command(dir: &Path, args: &[&str], named: bool) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_rust-gpu-sim"));
    command.current_dir(dir).args(args);
    if named {
        command.env(NAMED_TEMPORARIES_VAR, "1");
    } else {
        command.env_remove(NAMED_TEMPORARIES_VAR);
    }
    command
}

/// A short run writing frames into `dir/frames`; must succeed.
fn complete_run(dir: &Path, steps: &str, named: bool) {
    let args = ["grayscott", "--backend", "cpu", "--size", "32", "--steps", steps, "--frame-every", "2"];
    let out = command(dir, &args, named).args(["--png-dir", "frames"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Starts a long run writing a frame every step into `dir/frames`.
fn start_long_run(dir: &Path, named: bool) -> Child {
    let args = [
        "grayscott",
        "--backend",
        "cpu",
        "--size",
        "128",
        "--steps",
        "10000000",
        "--frame-every",
        "1",
        "--png-dir",
        "frames",
    ];
    command(dir, &args, named).stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("start the program")
}

/// Several frames in the spill file of process `pid` in `spill_dir` (the first 128² frames
/// are about 3 kB of PNG each).
fn spilled(pid: u32, spill_dir: &Path) -> Option<u64> {
    spill_file_size(&pid.to_string(), spill_dir).filter(|&bytes| bytes > 16 << 10)
}

#[test]
fn sigkill_mid_run_leaves_no_new_png_dir() {
    let dir = scratch_dir("png-sigkill-new");
    // The directory does not exist yet: the spill file is in its parent.
    sigkill_once(start_long_run(&dir, false), "frames", |pid| spilled(pid, &dir));
    assert_eq!(snapshot(&dir), [], "a stray entry was left");
}

#[test]
fn sigkill_mid_run_leaves_the_earlier_runs_frames_as_they_were() {
    let dir = scratch_dir("png-sigkill-earlier");
    complete_run(&dir, "10", false);
    let before = snapshot(&dir);
    assert_eq!(
        before.len(),
        6,
        "the directory and 5 frames: {:?}",
        before.iter().map(|e| &e.0).collect::<Vec<_>>()
    );
    let frames = dir.join("frames");
    sigkill_once(start_long_run(&dir, false), "frames", |pid| spilled(pid, &frames));
    assert!(
        snapshot(&dir) == before,
        "the directory changed: {:?}",
        snapshot(&dir).iter().map(|e| &e.0).collect::<Vec<_>>()
    );
    // And the next run into it is not refused.
    complete_run(&dir, "4", false);
    assert_eq!(common::files_in(&frames), ["frame_00000.png", "frame_00001.png"]);
}

/// How many frames the named fallback has staged in a `.tmp*` directory in `frames`, if any.
fn staged_frames(frames: &Path) -> Option<u64> {
    let staging = std::fs::read_dir(frames)
        .ok()?
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with(".tmp"))?;
    let count = std::fs::read_dir(staging.path()).ok()?.count() as u64;
    (count > 0).then_some(count)
}

/// The named fallback cannot do as well: SIGKILL leaves its staging directory inside
/// `--png-dir`, and the next run refuses the directory, naming it.
#[test]
fn with_named_staging_sigkill_leaves_the_staging_directory() {
    let dir = scratch_dir("png-sigkill-named");
    let frames = dir.join("frames");
    sigkill_once(start_long_run(&dir, true), "frames", |_| staged_frames(&frames));
    let left = common::files_in(&frames);
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(left[0].starts_with(".tmp"), "{left:?}");
    let args = ["grayscott", "--backend", "cpu", "--size", "32", "--steps", "4", "--png-dir", "frames"];
    let out = command(&dir, &args, true).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&format!("it holds {} besides frames", left[0])), "{stderr}");
}

/// A catchable signal does remove the fallback's staging directory (and a directory the run
/// created).
#[test]
fn with_named_staging_sigterm_leaves_the_directory_as_it_was() {
    let dir = scratch_dir("png-sigterm-named");
    let frames = dir.join("frames");
    for earlier in [false, true] {
        if earlier {
            complete_run(&dir, "10", true);
        }
        let before = snapshot(&dir);
        let mut child = start_long_run(&dir, true);
        let started = Instant::now();
        while !staged_frames(&frames).is_some_and(|count| count > 2) {
            assert!(started.elapsed() < Duration::from_secs(60), "never saw the run staging frames");
            std::thread::sleep(Duration::from_millis(1));
        }
        let sent = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status().unwrap();
        assert!(sent.success());
        assert_eq!(child.wait().unwrap().code(), Some(143));
        assert!(snapshot(&dir) == before, "earlier frames: {earlier}: {:?}", common::files_in(&dir));
    }
}

/// The anonymous path and the named fallback give the same frames, replace an earlier run's
/// (removing those beyond the new run's last), and leave nothing else.
#[test]
fn both_staging_paths_write_the_same_frames() {
    let mut results = Vec::new();
    for named in [false, true] {
        let dir = scratch_dir(if named { "png-named" } else { "png-anonymous" });
        complete_run(&dir, "16", named);
        assert_eq!(common::files_in(&dir.join("frames")).len(), 8);
        complete_run(&dir, "9", named);
        let after = snapshot(&dir);
        let names: Vec<&str> = after.iter().map(|e| e.0.as_str()).collect();
        assert_eq!(
            names,
            [
                "frames",
                "frames/frame_00000.png",
                "frames/frame_00001.png",
                "frames/frame_00002.png",
                "frames/frame_00003.png",
                "frames/frame_00004.png"
            ],
            "named: {named}"
        );
        results.push(after);
    }
    assert!(results[0] == results[1], "the two paths wrote different frames");
}
