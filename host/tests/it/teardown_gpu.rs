//! The driver's teardown after exit (simulations/src/cuda/teardown.rs) on a GPU, run by
//! `scripts/gpu-check.sh coldstart` (one test at a time: it adopts orphans, so another test's
//! programs must not be running): a run that opened the GPU exits with its outputs whole, and
//! the child that holds the driver's files is alive after it, holds nothing else but the
//! outputs the run replaced, then exits by itself.

use std::{
    path::PathBuf,
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use crate::common::{program, scratch_dir};
use simulations::cuda::LINGER_VAR;

/// How long the program's child waits after the program's exit before it exits itself.
const LINGER_MS: u64 = 2000;

/// The processes other than `program` whose parent is this one and whose name is
/// `rust-gpu-sim` (live, or exited and not yet reaped), from `/proc`: the program's orphans.
fn adopted(program: u32) -> Vec<libc::pid_t> {
    let us = std::process::id().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| {
            let pid: libc::pid_t = entry.ok()?.file_name().to_str()?.parse().ok()?;
            let (name, _, parent) = stat(pid)?;
            (name == "rust-gpu-sim" && parent == us && pid as u32 != program).then_some(pid)
        })
        .collect()
}

/// `(name, state, parent)` of process `pid`, from `/proc/PID/stat` (`pid (comm) state ppid ...`;
/// the name may hold spaces, not a `)` followed by one).
fn stat(pid: libc::pid_t) -> Option<(String, char, String)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (name, rest) = stat.split_once(" (")?.1.rsplit_once(") ")?;
    let mut fields = rest.split(' ');
    let state = fields.next()?.chars().next()?;
    Some((name.to_owned(), state, fields.next()?.to_owned()))
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_gpu_run_exits_with_its_outputs_whole_and_a_child_tears_the_driver_down() {
    // Orphans of our children become ours: the program's child, once the program has exited.
    assert_eq!(unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) }, 0);
    // Canonical: `/proc` names the replaced outputs by their real paths.
    let dir = scratch_dir("teardown-gpu").canonicalize().unwrap();
    // The second run replaces the first one's outputs: its child holds them too (unlinked),
    // so that their blocks are freed after the program has exited, not in its renames.
    for (run, replaced) in [("first", vec![]), ("second", vec!["o.gif", "o.npz"])] {
        let (children, ended) = run_and_check_the_child(&dir, &replaced);
        // The outputs are whole the moment the program has exited.
        let gif =
            gif::DecodeOptions::new().read_info(std::fs::File::open(dir.join("o.gif")).unwrap()).unwrap();
        let frames = gif.into_iter().collect::<Result<Vec<_>, _>>().expect("a whole GIF").len();
        assert_eq!(frames, 4, "frames at steps 10, 20, 30 and 40");
        let saved = std::fs::read(dir.join("o.npz")).unwrap();
        assert!(saved.starts_with(b"PK") && saved.len() > 96 * 96 * 4, "{} bytes", saved.len());

        // The child exits by itself.
        let mut status = 0;
        loop {
            let waited = unsafe { libc::waitpid(children[0], &mut status, libc::WNOHANG) };
            if waited == children[0] {
                break;
            }
            assert_eq!(waited, 0, "waitpid: {}", std::io::Error::last_os_error());
            assert!(
                ended.elapsed() < Duration::from_secs(30),
                "the child is still there 30 s after the program"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "the child's status {status:#x}");
        let after = ended.elapsed().as_secs_f64() - LINGER_MS as f64 / 1000.0;
        eprintln!("{run} run: its child exited {after:.3} s after the program and its {LINGER_MS} ms wait");
    }
}

/// Runs the default-style GIF and `--save` job in `dir` and checks the program's child, adopted
/// here: alive (not yet exited) the moment the program has, holding the driver's files and
/// its pipe, and nothing else but `/dev/null` and the outputs the run replaced (`replaced`,
/// unlinked). Returns the adopted children and when the program ended.
fn run_and_check_the_child(dir: &std::path::Path, replaced: &[&str]) -> (Vec<libc::pid_t>, Instant) {
    let started = Instant::now();
    let run = Command::new(program())
        .current_dir(dir)
        // The child waits this long after the program's exit before its own: its files are
        // read here before it begins to close them (its exit would race the reading).
        .env(LINGER_VAR, LINGER_MS.to_string())
        .args(["grayscott", "--backend", "cuda", "--size", "96", "--steps", "40", "--frame-every", "10"])
        // No tuning: a run that tunes replaces the tuning cache's file, which the child would
        // hold too.
        .args(["--gif", "o.gif", "--save", "o.npz", "--no-autotune"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the program");
    let program_id = run.id();
    let out = run.wait_with_output().expect("run the program");
    let ended = Instant::now();
    // What the child still holds: it closes them as it exits.
    let children = adopted(program_id);
    let files: Vec<PathBuf> = children
        .iter()
        .flat_map(|pid| std::fs::read_dir(format!("/proc/{pid}/fd")).into_iter().flatten())
        .filter_map(|entry| std::fs::read_link(entry.ok()?.path()).ok())
        .collect();
    let state = children.first().and_then(|&pid| stat(pid)).map(|(_, state, _)| state);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    eprintln!("the run, to its exit and its pipes' end: {:.3} s", (ended - started).as_secs_f64());
    assert_eq!(children.len(), 1, "one child of the program, adopted here: {children:?}");
    assert_ne!(state, Some('Z'), "the child exited before the program");
    let mut outputs: Vec<String> = Vec::new();
    for file in &files {
        let name = file.to_string_lossy();
        if name == "/dev/null" || name.starts_with("/dev/nvidia") || name.starts_with("pipe:") {
            continue;
        }
        // A replaced output: `/proc` names an unlinked file by its last path and " (deleted)".
        let output = name.strip_suffix(" (deleted)").map(std::path::Path::new);
        match output.and_then(|path| (path.parent() == Some(dir)).then(|| path.file_name()).flatten()) {
            Some(output) => outputs.push(output.to_string_lossy().into_owned()),
            None => panic!("the child holds {name}"),
        }
    }
    // By text: `Path::starts_with` compares whole components (`/dev/nvidia0` is not under
    // `/dev/nvidia`).
    let driver = files.iter().any(|file| file.to_string_lossy().starts_with("/dev/nvidia"));
    let pipe = files.iter().any(|file| file.to_string_lossy().starts_with("pipe:"));
    assert!(driver && pipe, "the child holds the driver's files and its pipe: {files:?}");
    outputs.sort();
    assert_eq!(outputs, replaced, "the replaced outputs the child holds: {files:?}");
    eprintln!("the child, as the program ended: state {state:?}, files {files:?}");
    (children, ended)
}
