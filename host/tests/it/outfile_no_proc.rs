//! Outputs where `/proc` is not mounted (some containers and chroots): an anonymous file
//! cannot be linked into place through `/proc/self/fd`, so outputs take the named fallback
//! (`simulations::outfile`). The run is started in a mount namespace of its own whose `/proc`
//! is an empty tmpfs (`unshare -m`, which needs the right to mount: where it is refused the
//! test says so and passes). A program that still took the anonymous path would fail to name
//! its outputs.

use std::{path::Path, process::Command};

const PROGRAM: &str = env!("CARGO_BIN_EXE_rust-gpu-sim");

/// Runs the program in `dir` with `args`; with `no_proc`, inside `unshare -m` with an empty
/// `/proc`. `None` where such a namespace cannot be made here.
fn run(dir: &Path, args: &[&str], no_proc: bool) -> Option<std::process::Output> {
    let output = if no_proc {
        let script = r#"mount -t tmpfs none /proc && test ! -e /proc/self && exec "$0" "$@""#;
        Command::new("unshare")
            .args(["-m", "--propagation", "private", "sh", "-c", script, PROGRAM])
            .args(args)
            .current_dir(dir)
            .output()
            .ok()?
    } else {
        crate::common::host(dir, args)
    };
    Some(output)
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn outputs_are_written_and_replaced_without_proc() {
    let scratch =
        tempfile::Builder::new().prefix("no-proc-").tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let (with, without) = (scratch.path().join("with"), scratch.path().join("without"));
    std::fs::create_dir_all(&with).unwrap();
    std::fs::create_dir_all(&without).unwrap();
    let args = [
        "grayscott",
        "--backend",
        "cpu",
        "--size",
        "64",
        "--steps",
        "20",
        "--save",
        "s.npz",
        "--gif",
        "s.gif",
    ];
    let normal = run(&with, &args, false).unwrap();
    assert!(normal.status.success(), "{}", String::from_utf8_lossy(&normal.stderr));
    // Whether this machine lets the test make a mount namespace at all.
    let probe = Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-c", "mount -t tmpfs none /proc"])
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: `unshare -m` with a tmpfs on /proc is refused here");
        return;
    }
    // New outputs, then the same run again replacing them.
    for round in ["new", "replacing"] {
        let out = run(&without, &args, true).unwrap();
        assert!(out.status.success(), "{round}: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(names(&without), ["s.gif", "s.npz"], "{round}: nothing but the outputs");
        let (want, got) =
            (std::fs::read(with.join("s.npz")).unwrap(), std::fs::read(without.join("s.npz")).unwrap());
        assert!(want == got, "{round}: the saved fields differ from a run with /proc");
        let gif = std::fs::read(without.join("s.gif")).unwrap();
        assert!(gif.starts_with(b"GIF89a") && gif.ends_with(b";"), "{round}: not a whole GIF");
    }
}
