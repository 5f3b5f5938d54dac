//! `cookbook-bench`'s refusals: a bad command line is one line and exit 2, before any GPU is
//! looked for (these run without one).

use std::process::Command;

/// Runs the bench with `args`; returns its exit code, stdout and stderr.
fn bench(args: &[&str]) -> (Option<i32>, String, String) {
    let output =
        Command::new(env!("CARGO_BIN_EXE_cookbook-bench")).args(args).output().expect("run cookbook-bench");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn bad_command_lines_are_refused_in_one_line() {
    let dir = std::env::temp_dir();
    let dir = dir.to_str().unwrap();
    for (args, says) in [
        (vec![], "--cubin-dir DIR is required"),
        (vec!["--cubin-dir"], "--cubin-dir needs a value"),
        (vec!["--cubin-dir", "/dev/null"], "--cubin-dir /dev/null: not a directory"),
        (vec!["--cubin-dir", "/no/such/dir"], "not a directory"),
        (vec!["--cubin-dir", dir, "--repeats", "0"], "--repeats \"0\": a whole number from 21 to 10000"),
        (vec!["--cubin-dir", dir, "--repeats", "NaN"], "a whole number from 21 to 10000"),
        (vec!["--cubin-dir", dir, "--repeats", "99999999999"], "a whole number from 21 to 10000"),
        (vec!["--cubin-dir", dir, "--only", "nosuch"], "--only \"nosuch\": one of reduce,"),
        (vec!["--bogus"], "unknown argument --bogus"),
    ] {
        let (code, stdout, stderr) = bench(&args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stdout.is_empty(), "{args:?}: {stdout}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("cookbook-bench: ") && stderr.contains(says), "{args:?}: {stderr}");
    }
}

#[test]
fn help_prints_the_usage_and_succeeds() {
    let (code, stdout, stderr) = bench(&["--help"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.starts_with("usage: cookbook-bench --cubin-dir DIR"), "{stdout}");
}

/// An argument that is not UTF-8 is refused in one line (exit 2), not a panic; a directory that
/// is not UTF-8 is taken (and refused only as not a directory).
#[cfg(unix)]
#[test]
fn arguments_that_are_not_utf8_are_refused_not_a_panic() {
    use std::os::unix::ffi::OsStrExt;
    let odd = std::ffi::OsStr::from_bytes(b"--only\xff");
    let output = Command::new(env!("CARGO_BIN_EXE_cookbook-bench")).arg(odd).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("is not UTF-8") && stderr.lines().count() == 1, "{stderr}");
    let dir = std::ffi::OsStr::from_bytes(b"/no/such/\xffdir");
    let output =
        Command::new(env!("CARGO_BIN_EXE_cookbook-bench")).arg("--cubin-dir").arg(dir).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("not a directory"), "{stderr}");
}

/// A closed standard output or error loses the lines, never panics.
#[cfg(target_os = "linux")]
#[test]
fn closed_or_full_standard_streams_never_panic() {
    use std::process::Stdio;
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_cookbook-bench"))
        .arg("--help")
        .stdout(full)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(!String::from_utf8_lossy(&output.stderr).contains("panicked"));
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let output =
        Command::new(env!("CARGO_BIN_EXE_cookbook-bench")).arg("--bogus").stderr(full).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn hopper_gemm_bench_refuses_a_bad_size_in_one_line() {
    use std::os::unix::ffi::OsStrExt as _;
    let not_utf8 = std::ffi::OsStr::from_bytes(b"x\xff");
    for args in [
        vec!["abc".as_ref()],
        vec!["0".as_ref()],
        vec!["-5".as_ref()],
        vec!["127".as_ref()],
        vec!["4294967168".as_ref()],
        vec!["32896".as_ref()],
        vec![not_utf8],
        vec!["256".as_ref(), "512".as_ref()],
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_hopper-gemm-bench"))
            .args(&args)
            .output()
            .expect("run the bench");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(output.stdout.is_empty(), "{args:?}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("hopper-gemm-bench: "), "{args:?}: {stderr}");
    }
}
