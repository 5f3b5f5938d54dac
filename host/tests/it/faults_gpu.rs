//! Issue 27, parts 2 and 3, on a GPU (run by `scripts/gpu-check.sh faults`, one test at a
//! time): a run whose GPU memory is taken by another process after its check, and a kernel
//! that faults in the middle of a real run. Each ends with one clear line and exit 1, no
//! stray or half-written file, earlier outputs untouched, no hang; a later run is unaffected.
//!
//! The binary plays a second role: with `FAULTS_GPU_HOG` set it is the process that takes the
//! GPU's memory (it prints `held BYTES` and keeps the memory until its stdin closes).

use std::{
    io::{BufRead, BufReader, Read},
    path::Path,
    process::{Child, Command, Output, Stdio},
    time::{Duration, Instant},
};

use simulations::{
    checkpoint::Checkpoint,
    faults::{INJECT_FAULT_VAR, PAUSE_AFTER_GPU_CHECK_VAR},
};

use crate::common::{files_in, program, test_path};

const HOG_VAR: &str = "FAULTS_GPU_HOG";

fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new().prefix(&format!("faults-gpu-{name}-")).tempdir_in(std::env::temp_dir()).unwrap()
}

fn start(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Child {
    let mut command = Command::new(program());
    command.current_dir(dir).args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    for (key, value) in env {
        command.env(key, value);
    }
    command.spawn().expect("start the program")
}

/// Waits for `child` at most `limit`; a run still going then has hung: killed, and the test
/// fails.
fn finish(mut child: Child, limit: Duration) -> Output {
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            child.kill().unwrap();
            let out = child.wait_with_output().unwrap();
            panic!("the run hung; stderr: {}", String::from_utf8_lossy(&out.stderr));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.wait_with_output().unwrap()
}

/// The hog: takes all the GPU memory it can get, in 64 MiB pieces, reports it, and holds it
/// until its stdin closes.
fn hog() {
    let gpu = simulations::cuda::open().expect("the hog needs the GPU");
    let mut held = Vec::new();
    let mut bytes = 0u64;
    for piece in [64usize << 20, 1 << 20] {
        while let Ok(buffer) = gpu.stream().alloc_zeros::<u8>(piece) {
            held.push(buffer);
            bytes += piece as u64;
        }
    }
    let _ = gpu.synchronize();
    let (free, total) = gpu.memory().unwrap_or((0, 0));
    println!("held {bytes} free {free} total {total}");
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    drop(held);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn memory_taken_after_the_check_ends_the_run_in_one_line() {
    if std::env::var_os(HOG_VAR).is_some() {
        hog();
        return;
    }
    let dir = scratch("hog");
    let pause = dir.path().join("paused-after-check");
    let run = start(
        dir.path(),
        &[
            "grayscott",
            "--backend",
            "cuda",
            "--size",
            "4096",
            "--steps",
            "20",
            "--gif",
            "out.gif",
            "--save",
            "out.npz",
        ],
        &[(PAUSE_AFTER_GPU_CHECK_VAR, pause.to_str().unwrap())],
    );
    let started = Instant::now();
    while !pause.exists() {
        assert!(started.elapsed() < Duration::from_secs(60), "the run never reached its GPU memory check");
        std::thread::sleep(Duration::from_millis(5));
    }
    // The check passed; now another process takes the memory.
    let this_test = test_path(module_path!(), "memory_taken_after_the_check_ends_the_run_in_one_line");
    let mut hog = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", &this_test, "--ignored", "--nocapture"])
        .env(HOG_VAR, "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut report = String::new();
    let mut lines = BufReader::new(hog.stdout.take().unwrap());
    while !report.starts_with("held ") {
        report.clear();
        assert!(lines.read_line(&mut report).unwrap() > 0, "the hog ended without holding memory");
    }
    eprintln!("hog: {}", report.trim());
    std::fs::remove_file(&pause).unwrap();
    let out = finish(run, Duration::from_secs(120));
    drop(hog.stdin.take()); // the hog lets go
    hog.wait().unwrap();

    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("run's stderr: {stderr}");
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(stderr.starts_with("error: out of GPU memory while "), "{stderr}");
    assert!(stderr.contains("the 4096x4096 run needs ") && stderr.contains(" is free now"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(files_in(dir.path()), Vec::<String>::new(), "no output file");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_kernel_fault_stops_the_run_in_one_line_and_keeps_earlier_outputs() {
    let dir = scratch("fault");
    std::fs::write(dir.path().join("out.gif"), b"the earlier GIF").unwrap();
    let args = [
        "grayscott",
        "--backend",
        "cuda",
        "--size",
        "256",
        "--steps",
        "100",
        "--frame-every",
        "10",
        "--gif",
        "out.gif",
        "--checkpoint",
        "state.ckpt",
        "--checkpoint-every",
        "20",
    ];
    let out = finish(start(dir.path(), &args, &[(INJECT_FAULT_VAR, "50")]), Duration::from_secs(120));
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("run's stderr: {stderr}");
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    // Faults surface at the next synchronisation: the kernel named is the last one launched.
    assert!(stderr.starts_with("error: a GPU kernel failed (the last launched was "), "{stderr}");
    assert!(stderr.contains("ILLEGAL_ADDRESS"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(files_in(dir.path()), ["out.gif", "state.ckpt"], "no stray file");
    assert_eq!(
        std::fs::read(dir.path().join("out.gif")).unwrap(),
        b"the earlier GIF",
        "the old GIF untouched"
    );
    let checkpoint = Checkpoint::read(&dir.path().join("state.ckpt")).expect("the last checkpoint is whole");
    assert_eq!(checkpoint.steps, 40, "the checkpoint before the fault");

    // The GPU is fine for the next run: it resumes from that checkpoint and finishes.
    let args = [
        "grayscott",
        "--backend",
        "cuda",
        "--size",
        "256",
        "--steps",
        "100",
        "--resume",
        "state.ckpt",
        "--save",
        "after.npz",
    ];
    let out = finish(start(dir.path(), &args, &[]), Duration::from_secs(120));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(dir.path().join("after.npz").is_file());

    // With every launch waited for, the kernel named is the one at fault.
    let blocking = scratch("fault-blocking");
    let args = ["grayscott", "--backend", "cuda", "--size", "256", "--steps", "100", "--save", "s.npz"];
    let env = [(INJECT_FAULT_VAR, "50"), ("CUDA_LAUNCH_BLOCKING", "1")];
    let out = finish(start(blocking.path(), &args, &env), Duration::from_secs(120));
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("blocking run's stderr: {stderr}");
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(
        stderr.starts_with("error: a GPU kernel failed (the last launched was fault_illegal_address"),
        "{stderr}"
    );
    assert!(files_in(blocking.path()).is_empty(), "no output: {:?}", files_in(blocking.path()));
}
