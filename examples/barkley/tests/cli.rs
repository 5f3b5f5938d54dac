//! The `barkley` command on the CPU: the PNG it writes, and its answers to mistakes. These
//! run in CI.

use std::{fs, os::unix::fs::FileTypeExt, path::Path, process::Command};

use barkley::{Field, Model, encode_png, step_cpu};

/// Runs `barkley --cpu` with `args`; returns (success, stdout, stderr).
fn barkley(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_barkley")).arg("--cpu").args(args).output().unwrap();
    let text = |bytes: Vec<u8>| String::from_utf8(bytes).unwrap();
    (out.status.success(), text(out.stdout), text(out.stderr))
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into()).collect();
    names.sort();
    names
}

#[test]
fn writes_the_picture_of_the_cpu_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spiral.png");
    let (ok, stdout, stderr) =
        barkley(&["--width", "40", "--height", "24", "--steps", "30", "-o", path.to_str().unwrap()]);
    assert!(ok && stdout.contains("30 steps of 40x24 on the CPU"), "{stdout}{stderr}");
    let model = Model::default();
    let mut field = Field::broken_wave(40, 24, &model);
    step_cpu(&mut field, &model.coefficients(), 30);
    assert!(fs::read(&path).unwrap() == encode_png(&field).unwrap(), "not the picture of the run");
    let info =
        png::Decoder::new(std::io::Cursor::new(fs::read(&path).unwrap())).read_info().unwrap().info().clone();
    assert_eq!((info.width, info.height, info.color_type), (40, 24, png::ColorType::Rgb));
    assert_eq!(entries(dir.path()), ["spiral.png"], "a stray file");
}

#[test]
fn bad_sizes_are_refused() {
    for args in
        [["--width", "0"], ["--height", "7"], ["--width", "9000"], ["--steps", "-1"], ["--width", "x"]]
    {
        let (ok, _, stderr) = barkley(&args);
        assert!(!ok && stderr.contains(args[0]), "{args:?}: {stderr}");
    }
}

#[test]
fn an_unwritable_output_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing/spiral.png");
    for (path, why) in [(dir.path(), "it is a directory"), (&missing, "/missing does not exist")] {
        let (ok, stdout, stderr) = barkley(&["--width", "8", "--height", "8", "-o", path.to_str().unwrap()]);
        assert!(!ok && stdout.is_empty() && stderr.contains(why), "{}: {stderr}", path.display());
    }
    let link = dir.path().join("dangling.png");
    std::os::unix::fs::symlink(dir.path().join("nothing"), &link).unwrap();
    let (ok, _, stderr) = barkley(&["--width", "8", "--height", "8", "-o", link.to_str().unwrap()]);
    assert!(!ok && stderr.contains("a symbolic link to a missing file"), "{stderr}");
    assert_eq!(entries(dir.path()), ["dangling.png"], "a stray file");
}

#[test]
fn a_symbolic_link_is_followed_and_a_fifo_is_written_not_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let (target, link) = (dir.path().join("target.png"), dir.path().join("link.png"));
    fs::write(&target, "old").unwrap();
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let (ok, _, stderr) = barkley(&["--width", "8", "--height", "8", "-o", link.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    assert!(
        fs::symlink_metadata(&link).unwrap().is_symlink()
            && fs::read(&target).unwrap().starts_with(b"\x89PNG")
    );

    let fifo = dir.path().join("fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let reader = std::thread::spawn({
        let fifo = fifo.clone();
        move || fs::read(fifo).unwrap()
    });
    let (ok, _, stderr) = barkley(&["--width", "8", "--height", "8", "-o", fifo.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    // Before joining: a reader of a replaced FIFO waits forever.
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "the FIFO was replaced");
    assert!(reader.join().unwrap().starts_with(b"\x89PNG"));
}

#[test]
fn list_palettes_lists_them_and_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_barkley"))
        .args(["--cpu", "--list-palettes"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success() && stdout.contains("viridis") && !stdout.contains("steps of"), "{stdout}");
    assert!(entries(dir.path()).is_empty(), "--list-palettes wrote {:?}", entries(dir.path()));
}

#[test]
fn a_closed_or_full_stdout_ends_the_run_without_a_panic() {
    use std::{os::unix::process::ExitStatusExt, process::Stdio};
    let dir = tempfile::tempdir().unwrap();
    let run = ["--cpu", "--width", "32", "--height", "32", "--steps", "100", "-o", "spiral.png"];
    for args in [&run[..], &["--cpu", "--list-palettes"]] {
        // Nobody reads stdout (`| true`): the read end is closed before barkley starts, so its
        // first write fails whatever the timing. It ends quietly, as by SIGPIPE.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = Command::new(env!("CARGO_BIN_EXE_barkley"))
            .args(args)
            .current_dir(dir.path())
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(
            out.status.signal() == Some(13) || out.status.code() == Some(141),
            "{args:?}: {:?} {stderr}",
            out.status
        );
        assert!(stderr.is_empty(), "{args:?}: quiet, got {stderr}");
    }
    // The picture was written before the summary.
    assert_eq!(entries(dir.path()), ["spiral.png"]);
    // stdout on a full device (`> /dev/full`): one error line, status 1.
    let Ok(full) = fs::OpenOptions::new().write(true).open("/dev/full") else { return };
    for args in [&run[..], &["--cpu", "--list-palettes"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_barkley"))
            .args(args)
            .current_dir(dir.path())
            .stdout(full.try_clone().unwrap())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert_eq!(
            stderr.trim_end(),
            "error: cannot write to standard output: no space left on the device",
            "{args:?}"
        );
    }
}
