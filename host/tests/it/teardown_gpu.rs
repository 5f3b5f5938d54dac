//! The driver's teardown after exit (simulations/src/cuda/teardown.rs) on a GPU, run by
//! `scripts/gpu-check.sh coldstart`: a run that opened the GPU exits with its outputs whole,
//! and the child that holds the driver's files outlives it, then exits by itself.

use std::{
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use crate::common::{program, scratch_dir};

/// The processes whose parent is this one and whose name is `rust-gpu-sim` (live or exited
/// and not yet reaped), from `/proc`.
fn our_programs() -> Vec<libc::pid_t> {
    let us = std::process::id().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| {
            let pid: libc::pid_t = entry.ok()?.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // `pid (comm) state ppid ...`; the name may hold spaces, not a `)` followed by one.
            let (name, rest) = stat.split_once(" (")?.1.rsplit_once(") ")?;
            let parent = rest.split(' ').nth(1)?;
            (name == "rust-gpu-sim" && parent == us).then_some(pid)
        })
        .collect()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_gpu_run_exits_with_its_outputs_whole_and_a_child_tears_the_driver_down() {
    // Orphans of our children become ours: the program's child, once the program has exited.
    assert_eq!(unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) }, 0);
    let dir = scratch_dir("teardown-gpu");
    let started = Instant::now();
    let out = Command::new(program())
        .current_dir(&dir)
        .args(["grayscott", "--backend", "cuda", "--size", "96", "--steps", "40", "--frame-every", "10"])
        .args(["--gif", "o.gif", "--save", "o.npz"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("run the program");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    eprintln!("the run, to its exit and its pipes' end: {:.3} s", started.elapsed().as_secs_f64());

    // The outputs are whole the moment the program has exited.
    let gif = gif::DecodeOptions::new().read_info(std::fs::File::open(dir.join("o.gif")).unwrap()).unwrap();
    let frames = gif.into_iter().collect::<Result<Vec<_>, _>>().expect("a whole GIF").len();
    assert_eq!(frames, 4, "frames at steps 10, 20, 30 and 40");
    let saved = std::fs::read(dir.join("o.npz")).unwrap();
    assert!(saved.starts_with(b"PK") && saved.len() > 96 * 96 * 4, "{} bytes", saved.len());

    // The program's child took the driver's files and outlived it; it exits by itself.
    let children = our_programs();
    assert_eq!(children.len(), 1, "one child of the program, adopted here: {children:?}");
    let mut status = 0;
    let waited = Instant::now();
    assert_eq!(unsafe { libc::waitpid(children[0], &mut status, 0) }, children[0]);
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "the child's status {status:#x}");
    eprintln!("its child exited {:.3} s after the program", waited.elapsed().as_secs_f64());
    assert!(waited.elapsed() < Duration::from_secs(30));
}
