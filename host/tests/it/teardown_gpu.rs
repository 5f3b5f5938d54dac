//! The driver's teardown after exit (simulations/src/cuda/teardown.rs) on a GPU, run by
//! `scripts/gpu-check.sh coldstart` (one test at a time: it adopts orphans, so another test's
//! programs must not be running): a run that opened the GPU exits with its outputs whole, and
//! the child that holds the driver's files is alive after it, holds nothing else, then exits
//! by itself.

use std::{
    path::PathBuf,
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use crate::common::{program, scratch_dir};

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
    let dir = scratch_dir("teardown-gpu");
    let started = Instant::now();
    let run = Command::new(program())
        .current_dir(&dir)
        .args(["grayscott", "--backend", "cuda", "--size", "96", "--steps", "40", "--frame-every", "10"])
        .args(["--gif", "o.gif", "--save", "o.npz"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the program");
    let program_id = run.id();
    let out = run.wait_with_output().expect("run the program");
    let ended = Instant::now();
    // The program's child, adopted: alive (not yet exited) the moment the program has, and
    // holding nothing but `/dev/null`, the driver's files and its pipe (what it still holds:
    // it closes them as it exits).
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
    for file in &files {
        let name = file.to_string_lossy();
        assert!(
            name == "/dev/null" || name.starts_with("/dev/nvidia") || name.starts_with("pipe:"),
            "the child holds {name}"
        );
    }
    eprintln!("the child, as the program ended: state {state:?}, files {files:?}");

    // The outputs are whole the moment the program has exited.
    let gif = gif::DecodeOptions::new().read_info(std::fs::File::open(dir.join("o.gif")).unwrap()).unwrap();
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
        assert!(ended.elapsed() < Duration::from_secs(30), "the child is still there 30 s after the program");
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "the child's status {status:#x}");
    eprintln!("its child exited {:.3} s after the program", ended.elapsed().as_secs_f64());
}
