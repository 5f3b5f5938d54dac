//! Issue 27, part 5: `--init-image` from a FIFO (as `<(...)` gives) is read whole and
//! decoded from memory, and the run equals the same run from a regular file; before, it
//! failed with "Illegal seek (os error 29)".

use std::{
    io::Write,
    path::Path,
    process::{Command, Output, Stdio},
    time::{Duration, Instant},
};

fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("faults-fifo-{name}-"))
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap()
}

/// Runs the program in `dir`; one that has not finished within a minute (waiting on a FIFO
/// nobody writes any more) is killed and fails the test.
fn run(dir: &Path, args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rust-gpu-sim"))
        .current_dir(dir)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the program");
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("{args:?} hung (reading the FIFO again?)");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    child.wait_with_output().unwrap()
}

/// A PNG seed image, as bytes.
fn seed_png() -> Vec<u8> {
    let img = image::GrayImage::from_fn(40, 30, |x, y| {
        image::Luma([if (x / 8 + y / 8) % 2 == 0 { 255 } else { 0 }])
    });
    let mut bytes = Vec::new();
    img.write_to(&mut std::io::Cursor::new(&mut bytes), image::ImageFormat::Png).unwrap();
    bytes
}

/// Runs `args` with `--init-image seed.fifo`, a FIFO fed `bytes` by a thread (as a shell's
/// `<(cat seed.png)` would).
fn run_from_fifo(dir: &Path, args: &[&str], bytes: Vec<u8>) -> Output {
    let fifo = dir.join("seed.fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("run mkfifo");
    assert!(made.success(), "mkfifo failed");
    let feeder = {
        let fifo = fifo.clone();
        // Opening for writing waits for the reader.
        std::thread::spawn(move || {
            let mut pipe = std::fs::OpenOptions::new().write(true).open(fifo).unwrap();
            let _ = pipe.write_all(&bytes); // a reader that stops early is the run's business
        })
    };
    let mut all = args.to_vec();
    all.extend(["--init-image", "seed.fifo"]);
    let out = std::panic::catch_unwind(|| run(dir, &all));
    if !feeder.is_finished() {
        // The run never opened the FIFO: open it once so the feeder can finish.
        drop(std::fs::File::open(&fifo));
    }
    feeder.join().unwrap();
    std::fs::remove_file(&fifo).unwrap();
    out.unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

fn check_fifo_equals_file(simulation: &str) {
    let dir = scratch(simulation);
    let mut args = vec![simulation, "--backend", "cpu", "--size", "48", "--steps", "30"];
    if simulation == "physarum" {
        args.extend(["--agents", "5000"]);
    }
    args.push("--save");
    let from_fifo = run_from_fifo(dir.path(), &[&args[..], &["fifo.npz"]].concat(), seed_png());
    assert!(from_fifo.status.success(), "{}", String::from_utf8_lossy(&from_fifo.stderr));
    std::fs::write(dir.path().join("seed.png"), seed_png()).unwrap();
    let from_file = run(dir.path(), &[&args[..], &["file.npz", "--init-image", "seed.png"]].concat());
    assert!(from_file.status.success(), "{}", String::from_utf8_lossy(&from_file.stderr));
    let read = |name: &str| simulations::export::read_npz(&dir.path().join(name)).unwrap();
    assert_eq!(read("fifo.npz"), read("file.npz"), "{simulation}: the FIFO run differs from the file run");
    // And the image did seed the run: an unseeded run differs.
    let unseeded = run(dir.path(), &[&args[..], &["plain.npz"]].concat());
    assert!(unseeded.status.success());
    assert_ne!(read("plain.npz"), read("file.npz"));
}

#[test]
fn grayscott_reads_its_init_image_from_a_fifo() {
    check_fifo_equals_file("grayscott");
}

#[test]
fn physarum_reads_its_init_image_from_a_fifo() {
    check_fifo_equals_file("physarum");
}

#[test]
fn a_fifo_that_is_not_an_image_is_refused_in_one_line() {
    let dir = scratch("garbage");
    let out = run_from_fifo(
        dir.path(),
        &["grayscott", "--backend", "cpu", "--size", "32", "--steps", "5", "--gif", "o.gif"],
        b"not an image at all".to_vec(),
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("cannot read seed.fifo: not an image this program reads"), "{stderr}");
    assert!(!stderr.contains("os error"), "{stderr}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "no output left");
}
