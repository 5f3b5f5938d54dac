//! Helpers of the command's tests: running `rust-gpu-sim`, a refusal's checks, a SIGKILL
//! while a run writes; and the library tests' helpers (random fields, scratch directories
//! and what is in them), from the library's own tests so that each exists once.

#![allow(dead_code)]

use std::{
    path::Path,
    process::{Child, Command, Output},
    time::{Duration, Instant},
};

#[path = "../../../simulations/tests/it/common.rs"]
mod library;
pub use library::*;

/// The program beside this test binary when staged (`.gpu/rust-gpu-sim`), else Cargo's.
pub fn program() -> std::path::PathBuf {
    let staged = std::env::current_exe().unwrap().with_file_name("rust-gpu-sim");
    if staged.is_file() { staged } else { env!("CARGO_BIN_EXE_rust-gpu-sim").into() }
}

/// Runs `rust-gpu-sim args` in `dir`.
pub fn host(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rust-gpu-sim")).current_dir(dir).args(args).output().expect("run host")
}

/// Runs a bad `rust-gpu-sim <subcommand>` line with `--backend cpu --gif out.gif`, adding each of
/// `defaults` (option, value) that `args` does not set: it must fail with one clear message
/// containing `expected`, never panic, and leave its directory empty.
pub fn refused(subcommand: &str, defaults: &[(&str, &str)], name: &str, args: &[&str], expected: &str) {
    let dir = scratch_dir(&format!("{subcommand}-{name}"));
    let mut all = vec![subcommand, "--backend", "cpu", "--gif", "out.gif"];
    for &(key, default) in defaults {
        if !args.contains(&key) {
            all.extend([key, default]);
        }
    }
    all.extend_from_slice(args);
    let out = host(&dir, &all);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{name}: accepted");
    assert!(stderr.contains(expected), "{name}: message {stderr:?} lacks {expected:?}");
    assert!(!stderr.contains("panicked"), "{name}: {stderr}");
    assert!(files_in(&dir).is_empty(), "{name}: left {:?}", files_in(&dir));
}

/// Waits until `seen(pid)` reports the run writing (`Some(bytes)`), then kills it with
/// SIGKILL. Fails if the run ends first or is not seen writing within a minute; `what` names
/// what is being waited for in messages.
pub fn sigkill_once(mut child: Child, what: &str, mut seen: impl FnMut(u32) -> Option<u64>) {
    let started = Instant::now();
    loop {
        if let Some(bytes) = seen(child.id()) {
            eprintln!("SIGKILL with {bytes} bytes of {what} written");
            break;
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the run ended ({status}) before it was seen writing {what}");
        }
        assert!(started.elapsed() < Duration::from_secs(60), "never saw the run writing {what}");
        std::thread::sleep(Duration::from_micros(200));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
}
