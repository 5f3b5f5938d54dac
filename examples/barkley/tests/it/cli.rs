//! The `barkley` command on the CPU: the PNG it writes, and its answers to mistakes. These
//! run in CI.

use std::{fs, os::unix::fs::FileTypeExt, process::Command};

use barkley::{Field, Model, picture, step_cpu};

use crate::common::files_in;

/// Runs `barkley --cpu` with `args`; returns (success, stdout, stderr).
fn barkley(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_barkley")).arg("--cpu").args(args).output().unwrap();
    let text = |bytes: Vec<u8>| String::from_utf8(bytes).unwrap();
    (out.status.success(), text(out.stdout), text(out.stderr))
}

#[test]
fn writes_the_picture_of_the_cpu_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spiral.png");
    let last = dir.path().join("last.png");
    let (ok, stdout, stderr) = barkley(&[
        "--width",
        "40",
        "--height",
        "24",
        "--steps",
        "30",
        "-o",
        path.to_str().unwrap(),
        "--png",
        last.to_str().unwrap(),
        "--png-dir",
        dir.path().join("frames").to_str().unwrap(),
        "--frame-every",
        "30",
    ]);
    assert!(ok && stdout.contains("30 steps of 40x24 on the CPU"), "{stdout}{stderr}");
    let model = Model::default();
    let mut field = Field::broken_wave(40, 24, &model);
    step_cpu(&mut field, &model.coefficients(), 30);
    let mut reader = png::Decoder::new(std::io::Cursor::new(fs::read(&path).unwrap())).read_info().unwrap();
    let info = reader.info().clone();
    assert_eq!((info.width, info.height, info.color_type), (40, 24, png::ColorType::Rgb));
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    reader.next_frame(&mut pixels).unwrap();
    assert!(pixels == picture(&field), "not the picture of the run");
    // The picture, the driver's --png and its frames name the program that made them, and how.
    for file in [&path, &last, &dir.path().join("frames/frame_00000.png")] {
        let bytes = fs::read(file).unwrap();
        let reader = png::Decoder::new(std::io::Cursor::new(&bytes)).read_info().unwrap();
        let texts = &reader.info().uncompressed_latin1_text;
        let software = texts.iter().find(|t| t.keyword == "Software").map(|t| t.text.clone());
        assert_eq!(software, Some(format!("barkley {}", env!("CARGO_PKG_VERSION"))), "{}", file.display());
        let settings = simulations::render::recorded_text(&bytes).unwrap();
        assert!(settings.starts_with("barkley 40x24"), "{settings}");
    }
    assert_eq!(files_in(dir.path()), ["frames", "last.png", "spiral.png"], "a stray file");
}

/// A negative or out-of-range number is refused naming its option, in one `error:` line and
/// exit 1, as `rust-gpu-sim` refuses its own.
#[test]
fn negative_numbers_name_their_option() {
    for (option, value) in [
        ("--width", "-1"),
        ("--height", "-1"),
        ("--split", "-1"),
        ("--gpus", "-2"),
        ("--steps", "-1"),
        ("--split", "0"),
    ] {
        let out =
            Command::new(env!("CARGO_BIN_EXE_barkley")).args(["--cpu", option, value]).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let named = format!("invalid value '{value}' for '{option} ");
        assert!(out.status.code() == Some(1) && stderr.contains(&named), "{option} {value}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{option} {value}: {stderr}");
    }
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
    assert_eq!(files_in(dir.path()), ["dangling.png"], "a stray file");
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
    assert!(files_in(dir.path()).is_empty(), "--list-palettes wrote {:?}", files_in(dir.path()));
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
    assert_eq!(files_in(dir.path()), ["spiral.png"]);
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

/// Killed while it writes its picture (by SIGXFSZ: a file-size limit the picture passes, as
/// sudden as SIGKILL and at a known moment), barkley leaves nothing behind: the picture is an
/// anonymous file until whole. The named fallback (`RUST_GPU_SIM_NAMED_TEMPORARIES=1`) does
/// leave its `.tmpXXXXXX`: that shows this test sees a stray file when there is one.
#[test]
fn killed_while_writing_the_picture_it_leaves_no_temporary_file() {
    use std::os::unix::process::ExitStatusExt;
    for named in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        // ulimit -f counts 512- or 1024-byte blocks: the 512² picture is about 5 KB.
        let script = "ulimit -f 2 && exec \"$0\" \"$@\"";
        let mut command = Command::new("sh");
        command.args([
            "-c",
            script,
            env!("CARGO_BIN_EXE_barkley"),
            "--cpu",
            "--width",
            "512",
            "--height",
            "512",
        ]);
        command.args(["--steps", "10", "-o", "spiral.png"]).current_dir(dir.path());
        if named {
            command.env(simulations::outfile::NAMED_TEMPORARIES_VAR, "1");
        } else {
            command.env_remove(simulations::outfile::NAMED_TEMPORARIES_VAR);
        }
        let out = command.output().unwrap();
        assert_eq!(out.status.signal(), Some(SIGXFSZ), "named {named}: {out:?}");
        let left = files_in(dir.path());
        match named {
            false => assert!(left.is_empty(), "left behind: {left:?}"),
            true => assert!(left.len() == 1 && left[0].starts_with(".tmp"), "named fallback: {left:?}"),
        }
    }
}

/// The signal a write past the file-size limit gets (Linux).
const SIGXFSZ: i32 = 25;

#[test]
fn the_picture_may_not_be_a_name_another_output_derives() {
    let dir = tempfile::tempdir().unwrap();
    for (args, says) in [
        (&["--save", "s.npy", "-o", "s_u.npy"][..], "--output s_u.npy is a name that --save s.npy writes"),
        (&["--save", "s.npz", "--save-every", "5", "-o", "s_00000005.npz"][..], "the series s_NNNNNNNN.npz"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_barkley"))
            .args(["--cpu", "--width", "16", "--height", "16", "--steps", "10"])
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.code() == Some(1) && stderr.contains(says), "{args:?}: {stderr}");
        assert!(files_in(dir.path()).is_empty(), "{args:?} wrote {:?}", files_in(dir.path()));
    }
}

/// `barkley serve` on a port that is taken names the OS's reason, as `rust-gpu-sim serve` does.
#[test]
fn serve_on_a_taken_port_says_why() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_barkley"))
        .args(["serve", "--backend", "cpu", "--port", &port])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let listen = format!("cannot listen on 127.0.0.1:{port} (--bind, --port): ");
    assert!(out.status.code() == Some(1) && stderr.contains(&listen), "{stderr}");
    assert!(stderr.to_lowercase().contains("address already in use"), "no reason: {stderr}");
}

/// Started as one of 2 processes (Open MPI's or Slurm's variables) on a machine without a CUDA
/// driver, barkley says the driver is missing, not that the host has 0 GPUs for 2 processes.
#[test]
fn a_launcher_job_without_a_cuda_driver_says_the_driver_is_missing() {
    // SAFETY: only tries to dlopen the driver library.
    if unsafe { ptxkit_host::cudarc::driver::sys::is_culib_present() } {
        return; // a driver is installed: the case does not arise here
    }
    let launchers = [
        [
            ("OMPI_COMM_WORLD_RANK", "0"),
            ("OMPI_COMM_WORLD_SIZE", "2"),
            ("OMPI_COMM_WORLD_LOCAL_RANK", "0"),
            ("OMPI_COMM_WORLD_LOCAL_SIZE", "2"),
        ],
        [
            ("SLURM_PROCID", "0"),
            ("SLURM_STEP_NUM_TASKS", "2"),
            ("SLURM_LOCALID", "0"),
            ("SLURM_STEP_TASKS_PER_NODE", "2"),
        ],
    ];
    for variables in launchers {
        let dir = tempfile::tempdir().unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_barkley"))
            .args(["--width", "32", "--height", "32", "--steps", "2"])
            .envs(variables)
            .current_dir(dir.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.code() == Some(1) && stderr.contains("libcuda"), "{variables:?}: {stderr}");
        assert!(!stderr.contains("0 CUDA GPUs"), "{variables:?}: {stderr}");
        assert!(files_in(dir.path()).is_empty(), "{variables:?} wrote {:?}", files_in(dir.path()));
    }
}

/// Under an address-space limit (`ulimit -v`) too small for the grid, barkley refuses the run
/// in one line naming the limit, before allocating it: not aborted by a failed allocation.
#[test]
fn an_address_space_limit_refuses_the_run_instead_of_aborting_it() {
    let dir = tempfile::tempdir().unwrap();
    let script = "ulimit -v 1000000 && exec \"$0\" --cpu --width 8192 --height 8192 --steps 1";
    let out = Command::new("sh")
        .args(["-c", script, env!("CARGO_BIN_EXE_barkley")])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{:?} {stderr}", out.status);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    // Under the limit the check also counts what the run takes after it (threads, slack).
    let says = "a 8192x8192 grid needs 2.0 GiB of host memory, and its outputs and threads";
    let limit = "but this process's address-space limit (ulimit -v)";
    assert!(stderr.contains(says) && stderr.contains(limit), "{stderr}");
    assert!(stderr.contains("use a smaller --width or --height"), "{stderr}");
    assert!(files_in(dir.path()).is_empty(), "wrote {:?}", files_in(dir.path()));
}

/// Under an address-space limit anywhere from the least barkley starts under to well above
/// what a run needs, a run with frame outputs (`--gif --mp4`), its picture and `--save` is
/// either refused before it starts, in one `barkley:` line with exit 1 and nothing written, or
/// completes with every output: never a signal (SIGABRT from a failed allocation, SIGSEGV), a
/// panic (rayon's pool, a thread's start) or an encoder's error after the check (issue 57's
/// defect 5: barkley opened its frame outputs after its memory check, which so counted
/// neither their queues nor their encoders). `rust-gpu-sim`'s twin is
/// `hostile::an_address_space_limit_refuses_or_completes_runs_with_outputs`.
#[test]
fn an_address_space_limit_refuses_or_completes_runs_with_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let under = |limit_kib: u64, line: &str| {
        let script = format!("ulimit -v {limit_kib} && exec \"$0\" {line}");
        Command::new("sh")
            .args(["-c", &script, env!("CARGO_BIN_EXE_barkley")])
            .env("RUST_BACKTRACE", "0")
            .current_dir(dir)
            .output()
            .unwrap()
    };
    // The least limit the program starts under at all (below it the dynamic loader fails).
    let floor = (8..200).step_by(2).map(|mb| mb * 1024).find(|&kib| under(kib, "--help").status.success());
    let floor = floor.expect("barkley starts under some limit up to 200 MiB");
    let lines = [
        (
            "--cpu --width 256 --height 256 --steps 40 --frame-every 2 --gif o.gif --mp4 o.mp4 --save s.npz -o p.png",
            &["p.png", "o.gif", "o.mp4", "s.npz"][..],
        ),
        ("--cpu --width 512 --height 512 --steps 4 --save s.npy -o p.png", &["p.png", "s_u.npy", "s_v.npy"]),
    ];
    for (line, outputs) in lines {
        // Whether the run under `limit` completed (else it was refused), asserting either.
        let ran = |limit: u64| {
            let out = under(limit, line);
            let stderr = String::from_utf8_lossy(&out.stderr);
            let at = format!("{line} under {limit} KiB");
            assert!(out.status.code().is_some(), "{at}: {:?} {stderr}", out.status);
            assert!(!stderr.contains("panicked"), "{at}: {stderr}");
            if out.status.success() {
                let empty = |name: &&&str| fs::metadata(dir.join(name)).map_or(true, |m| m.len() == 0);
                let missing: Vec<_> = outputs.iter().filter(empty).collect();
                assert!(missing.is_empty(), "{at}: {missing:?} missing or empty; {stderr}");
                for name in files_in(dir) {
                    fs::remove_file(dir.join(name)).unwrap();
                }
                return true;
            }
            assert_eq!(out.status.code(), Some(1), "{at}: {stderr}");
            assert_eq!(stderr.lines().count(), 1, "{at}: {stderr}");
            assert!(stderr.starts_with("barkley: "), "{at}: {stderr}");
            assert!(files_in(dir).is_empty(), "{at} left {:?}", files_in(dir));
            false
        };
        // Every 2 MiB for 60 MiB, then every 256 KiB for 2 MiB either side of the least limit
        // that ran: just above the check's edge the run has least room, and a count a little
        // short fails there only at some limits (a check that left out the encoders aborted
        // at one limit of 16 there, 1.25 MiB above the edge).
        let coarse: Vec<_> =
            (floor..floor + 60 * 1024).step_by(2 * 1024).map(|limit| (limit, ran(limit))).collect();
        let first = coarse.iter().find(|(_, ran)| *ran).map(|&(limit, _)| limit);
        let first =
            first.unwrap_or_else(|| panic!("{line}: refused under every limit up to 60 MiB above the floor"));
        let fine = (first.saturating_sub(2 * 1024)..first + 2 * 1024)
            .step_by(256)
            .filter(|l| l % (2 * 1024) != floor % (2 * 1024));
        let fine: Vec<_> = fine.map(&ran).collect();
        let ran = coarse.iter().filter(|(_, ran)| *ran).count() + fine.iter().filter(|&&ran| ran).count();
        let refused = coarse.len() + fine.len() - ran;
        assert!(refused > 0 && ran > 0, "{line}: {refused} refused and {ran} run; the sweep missed the edge");
    }
}

/// The model's defaults are the README's (`with a = 0.75, b = 0.02, ε = 0.02, D = 1 on a grid of
/// spacing 0.5, explicit Euler steps of 0.02`), read from its text, not restated here.
#[test]
fn the_default_model_is_the_readmes() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let text = readme.split_whitespace().collect::<Vec<_>>().join(" ");
    // The number after `before` in the README.
    let value = |before: &str| -> f32 {
        let at = text.find(before).unwrap_or_else(|| panic!("the README has no {before:?}"));
        let rest = &text[at + before.len()..];
        let number: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
        number.parse().unwrap_or_else(|_| panic!("{before}{rest:.20}"))
    };
    let model = barkley::Model::default();
    assert_eq!(value("with a = "), model.a);
    assert_eq!(value(", b = "), model.b);
    assert_eq!(value(", ε = "), model.epsilon);
    assert_eq!(value(", D = "), model.diffusion);
    assert_eq!(value("grid of spacing "), model.spacing);
    assert_eq!(value("Euler steps of "), model.dt);
}
