//! The `host` binary end to end on the CPU backend: outputs, and refusals of bad input.

use crate::common;

use std::path::Path;

use crate::common::{files_in, host, scratch_dir};

#[test]
fn gif_has_the_right_size_and_frames_and_they_change() {
    let dir = scratch_dir("gif");
    let out =
        host(&dir, &["grayscott", "--backend", "cpu", "--width", "64", "--height", "48", "--steps", "130"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = host(
        &dir,
        &[
            "grayscott",
            "--backend",
            "cpu",
            "--width",
            "64",
            "--height",
            "48",
            "--steps",
            "130",
            "--frame-every",
            "20",
            "--init",
            "square",
            "--gif",
            "out.gif",
            "--png-dir",
            "frames",
        ],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(
        summary.contains("64x48") && summary.contains("7 frames") && summary.contains("out.gif"),
        "{summary}"
    );

    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::Indexed);
    let mut decoder = options.read_info(std::fs::File::open(dir.join("out.gif")).unwrap()).unwrap();
    assert_eq!((decoder.width(), decoder.height()), (64, 48));
    let palette = decoder.global_palette().unwrap().to_vec();
    assert_eq!(palette.len(), 256 * 3);
    // Composite the frames (later ones are sub-rectangles with transparent pixels).
    let mut canvas = vec![0u8; 64 * 48];
    let mut frames = Vec::new();
    while let Some(frame) = decoder.read_next_frame().unwrap() {
        if frames.is_empty() {
            assert_eq!((frame.width, frame.height, frame.transparent), (64, 48, None), "first frame whole");
        }
        for y in 0..frame.height as usize {
            for x in 0..frame.width as usize {
                let index = frame.buffer[y * frame.width as usize + x];
                if Some(index) != frame.transparent {
                    canvas[(frame.top as usize + y) * 64 + frame.left as usize + x] = index;
                }
            }
        }
        frames.push(canvas.clone());
    }
    // 130 steps every 20: frames after 20, 40, ..., 120 and after the last 10 steps.
    assert_eq!(frames.len(), 7);
    assert_ne!(frames[0], frames[6], "the pattern evolves");
    // Every GIF frame shows the same colours as the PNG frame of the same step (the GIF
    // draws level 255 with index 254, its neighbour).
    for (k, indices) in frames.iter().enumerate() {
        let png = image::open(dir.join(format!("frames/frame_{k:05}.png"))).unwrap().to_rgb8();
        for (i, (&index, rgb)) in indices.iter().zip(png.pixels()).enumerate() {
            let colour = &palette[index as usize * 3..index as usize * 3 + 3];
            assert!(colour == rgb.0 || index == 254, "frame {k}, pixel {i}: gif {colour:?} png {:?}", rgb.0);
        }
    }
    assert_eq!(files_in(&dir.join("frames")).len(), 7);
    assert_eq!(files_in(&dir), vec!["frames", "out.gif"], "no temporary files left");
}

#[test]
fn bare_gif_flag_writes_the_default_name() {
    let dir = scratch_dir("default-name");
    let out = host(
        &dir,
        &["grayscott", "--backend", "cpu", "--size", "32", "--steps", "40", "--frame-every", "20", "--gif"],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(files_in(&dir), vec!["grayscott.gif"]);
}

#[test]
fn list_presets_prints_their_values() {
    let out = host(Path::new("."), &["grayscott", "--list-presets"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(text.contains("coral") && text.contains("0.0545") && text.contains("mitosis"), "{text}");
}

fn refused(name: &str, args: &[&str], expected: &str) {
    common::refused("grayscott", &[("--size", "32"), ("--steps", "20")], name, args, expected);
}

#[test]
fn bad_input_is_refused_without_output() {
    refused("size0", &["--size", "0"], "--width must be between 1 and 65535");
    refused("steps0", &["--steps", "0"], "--steps must be at least 1");
    refused("every0", &["--frame-every", "0"], "--frame-every must be at least 1");
    refused("nan", &["--feed", "NaN"], "--feed must be a finite, non-negative number");
    refused("inf", &["--kill", "inf"], "--kill must be a finite, non-negative number");
    refused("negative", &["--du", "-0.1"], "--du must be a finite, non-negative number");
    refused("unstable", &["--dt", "5"], "stability limit");
    refused("preset", &["--preset", "nope"], "valid presets: coral, mitosis");
    refused("palette", &["--palette", "nope"], "valid palettes: cyberpunk");
    refused("image", &["--init-image", "/nonexistent/seed.png"], "cannot read /nonexistent/seed.png");
    refused("variant", &["--variant", "fused"], "--variant fused runs on a CUDA GPU");
    refused("gpus-cpu", &["--gpus", "all"], "split the grid over CUDA GPUs; this run is on the CPU");
    refused("gpus0", &["--gpus", "0"], "must be at least 1 (or all)");
    refused("gpus-word", &["--gpus", "two"], "is not a number of GPUs");
    refused("gpus-negative", &["--gpus", "-1"], "is not a number of GPUs");
    common::refused(
        "physarum",
        &[("--size", "32"), ("--steps", "2")],
        "split",
        &["--split", "2"],
        "physarum runs on one GPU",
    );
    common::refused(
        "physarum",
        &[("--size", "32"), ("--steps", "2")],
        "gpus",
        &["--gpus", "1"],
        "no halos to exchange",
    );
}

#[test]
fn unwritable_output_is_refused_before_simulating() {
    let dir = scratch_dir("nodir");
    let out = host(
        &dir,
        &["grayscott", "--backend", "cpu", "--size", "32", "--steps", "20", "--gif", "missing/out.gif"],
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not exist"));
    assert!(files_in(&dir).is_empty());
}

#[test]
fn unreadable_image_file_is_refused() {
    let dir = scratch_dir("badimage");
    std::fs::write(dir.join("seed.png"), b"not a png").unwrap();
    let out = host(
        &dir,
        &[
            "grayscott",
            "--backend",
            "cpu",
            "--size",
            "32",
            "--steps",
            "20",
            "--init-image",
            "seed.png",
            "--gif",
            "o.gif",
        ],
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read seed.png"));
    assert_eq!(files_in(&dir), vec!["seed.png"]);
}

#[test]
fn image_seeding_runs() {
    let dir = scratch_dir("image");
    let img = image::GrayImage::from_fn(40, 30, |x, _| image::Luma([if x > 20 { 255 } else { 0 }]));
    img.save(dir.join("seed.png")).unwrap();
    let out = host(
        &dir,
        &[
            "grayscott",
            "--backend",
            "cpu",
            "--size",
            "32",
            "--steps",
            "20",
            "--init-image",
            "seed.png",
            "--gif",
            "o.gif",
        ],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_grid_too_big_for_memory_is_refused_with_its_size() {
    let Some(available) = simulations::memory::available_host_bytes() else { return };
    // 17 bytes per cell on the CPU; ask for 1.5 times what fits, if a GIF can be that big.
    let side = ((available as f64 * 1.5 / 17.0).sqrt() as u64).max(2);
    assert!(side <= 65_535, "this machine has too much memory for this test ({available} bytes)");
    let side = side.to_string();
    let dir = scratch_dir("toobig");
    let out =
        host(&dir, &["grayscott", "--backend", "cpu", "--size", &side, "--steps", "1", "--gif", "o.gif"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("needs") && stderr.contains("GiB") && stderr.contains("host memory"), "{stderr}");
    assert!(files_in(&dir).is_empty());
}

#[test]
fn cuda_backend_without_a_gpu_is_a_clear_error() {
    if simulations::cuda::open().is_ok() {
        return; // A GPU is here: the GPU tests cover this backend.
    }
    let dir = scratch_dir("nogpu");
    let out =
        host(&dir, &["grayscott", "--backend", "cuda", "--size", "32", "--steps", "20", "--gif", "o.gif"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("no usable CUDA GPU"), "{stderr}");
    assert!(files_in(&dir).is_empty());
}

#[test]
fn heat_writes_png_and_gif_and_refuses_bad_input() {
    let dir = scratch_dir("heat");
    let out = host(
        &dir,
        &["heat", "--backend", "cpu", "--size", "24", "--steps", "30", "--png", "s.png", "--gif", "h.gif"],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(files_in(&dir), vec!["h.gif", "s.png"]);
    assert_eq!(image::open(dir.join("s.png")).unwrap().width(), 24);
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(summary.contains("3 frames"), "{summary}");

    let out = host(&dir, &["heat", "--backend", "cpu", "--size", "16", "--steps", "40", "--init", "sine"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("error against the exact solution"));

    for (args, needle) in [
        (&["--size", "2"][..], "--nx must be between 3"),
        (&["--dt", "0.5"][..], "stability limit"),
        (&["--alpha", "-1"][..], "--alpha must be a finite number above 0"),
        (&["--steps", "0"][..], "--steps must be at least 1"),
        (&["--variant", "tiled", "--backend", "cpu"][..], "runs on a CUDA GPU"),
    ] {
        let bad = scratch_dir("heat-bad");
        let mut all = vec!["heat", "--png", "x.png"];
        all.extend_from_slice(args);
        if !args.contains(&"--backend") {
            all.extend(["--backend", "cpu"]);
        }
        let out = host(&bad, &all);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && stderr.contains(needle), "{args:?}: {stderr}");
        assert!(files_in(&bad).is_empty(), "{args:?} left {:?}", files_in(&bad));
    }
}

#[test]
fn bench_arguments_are_checked_before_any_gpu_work() {
    let dir = scratch_dir("bench-args");
    for (args, needle) in [
        (&["bench", "grayscott", "--repeats", "1"][..], "--repeats must be at least 3"),
        (&["bench", "grayscott", "--sizes", "0"][..], "--sizes must list grid sides"),
        (&["bench", "grayscott", "--variants", "cpu"][..], "bench times GPU variants"),
        (&["bench", "heat", "--repeats", "2"][..], "--repeats must be at least 3"),
        (&["bench", "heat", "--sizes", "2"][..], "--sizes must list grid sides between 3"),
        (&["bench", "grayscott", "--json", "missing/dir/r.json"][..], "does not exist"),
        (&["bench", "encode", "--repeats", "2"][..], "--repeats must be at least 3"),
        (&["bench", "encode", "--steps", "199"][..], "--steps must be at least 200"),
        (&["bench", "encode", "--json", "missing/dir/r.json"][..], "does not exist"),
        (&["bench", "grayscott", "--gpus", "0"][..], "--gpus must list GPU counts between 1 and 64"),
        (&["bench", "heat", "--gpus", "1,65"][..], "--gpus must list GPU counts between 1 and 64"),
        (&["bench", "heat", "--overlap"][..], "--overlap and --no-overlap are for the scaling bench"),
        (&["bench", "heat", "--no-overlap"][..], "--overlap and --no-overlap are for the scaling bench"),
        (&["bench", "grayscott", "--overlap"][..], "--overlap is for the scaling bench under mpirun"),
        (&["bench", "heat", "--gpus", "1", "--overlap", "--variants", "fused"][..], "the single variant's"),
        (&["bench", "grayscott", "--nccl-id-file", "id"][..], "--nccl-id-file is for a bench started by"),
        (&["bench", "heat", "--peer-timeout", "0"][..], "--peer-timeout must be"),
    ] {
        let out = host(&dir, args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && stderr.contains(needle), "{args:?}: {stderr}");
    }
    assert!(files_in(&dir).is_empty());
}

/// `bench encode` needs no GPU: it reports both encoders on the default job's frames (here a
/// short job), and leaves only its report. On x86 and Arm the linked OpenH264 must have its
/// SIMD code (on x86 it needs the nasm that scripts/setup.sh provides).
#[test]
fn bench_encode_times_both_encoders_without_a_gpu() {
    let dir = scratch_dir("bench-encode");
    let out = host(
        &dir,
        &["bench", "encode", "--backend", "cpu", "--steps", "400", "--repeats", "3", "--json", "r.json"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("MP4 (--mp4)") && stdout.contains("GIF (--gif)"), "{stdout}");
    assert_eq!(files_in(&dir), ["r.json"]);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("r.json")).unwrap()).unwrap();
    assert_eq!(report["steps"], 400);
    let rows = report["rows"].as_array().unwrap();
    let frames: Vec<u64> = rows.iter().map(|r| r["frames"].as_u64().unwrap()).collect();
    assert_eq!(frames, [200, 200, simulations::render::mp4::frames_per_group(25) as u64]);
    for row in rows {
        assert!(row["wall_s"].as_f64().unwrap() > 0.0 && row["cpu_s"].as_f64().unwrap() > 0.0, "{row}");
        assert!(row["bytes"].as_u64().unwrap() > 1000, "{row}");
    }
    if cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
        assert_eq!(
            report["openh264_simd"], true,
            "OpenH264 without its SIMD code: run scripts/setup.sh (it provides nasm), then \
             `cargo clean -p openh264-sys2`"
        );
    }
}

/// Runs the binary in `dir` as rank `rank` of an Open MPI job of `size` processes.
fn as_rank(dir: &std::path::Path, rank: u32, size: u32, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_rust-gpu-sim"))
        .current_dir(dir)
        .args(args)
        .env("OMPI_COMM_WORLD_RANK", rank.to_string())
        .env("OMPI_COMM_WORLD_SIZE", size.to_string())
        .output()
        .unwrap()
}

/// The timeline (`RUST_GPU_SIM_TIMELINE=1`) on a full standard error loses its lines and
/// nothing else: the run finishes and writes its output (it panicked, writing nothing).
#[cfg(target_os = "linux")]
#[test]
fn the_timeline_on_a_full_stderr_loses_only_its_lines() {
    let dir = common::scratch_dir("timeline-full");
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rust-gpu-sim"))
        .current_dir(&dir)
        .args(["grayscott", "--backend", "cpu", "--size", "16", "--steps", "2", "--gif", "o.gif"])
        .env("RUST_GPU_SIM_TIMELINE", "1")
        .stderr(full)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(dir.join("o.gif").exists());
}

/// A launcher variable whose value is not UTF-8 is refused in one line naming it, with
/// nothing written, not ignored (which would run each process of the job as a whole job).
#[cfg(unix)]
#[test]
fn a_launcher_variable_that_is_not_utf8_is_refused() {
    use std::os::unix::ffi::OsStrExt;
    let dir = common::scratch_dir("launcher-bytes");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rust-gpu-sim"))
        .current_dir(&dir)
        .args(["grayscott", "--backend", "cpu", "--size", "16", "--steps", "1", "--gif", "o.gif"])
        .env("OMPI_COMM_WORLD_RANK", std::ffi::OsStr::from_bytes(b"0\xff"))
        .env("OMPI_COMM_WORLD_SIZE", "2")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("OMPI_COMM_WORLD_RANK") && stderr.contains("is not a number"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(!dir.join("o.gif").exists());
}

#[test]
fn launcher_jobs_that_cannot_run_give_one_line_from_rank_0() {
    let dir = common::scratch_dir("launcher");
    let gif = ["--gif", "o.gif"];
    let cases: [(&[&str], &str); 6] = [
        (&["physarum", "--backend", "cpu", "--steps", "1"], "only grayscott and heat"),
        (&["bench", "physarum", "--repeats", "3"], "only grayscott and heat"),
        (&["bench", "grayscott", "--gpus", "3"], "--gpus under Open MPI"),
        (
            &["grayscott", "--backend", "cpu", "--size", "16", "--steps", "1", "--gpus", "3"],
            "--gpus 3 disagrees with the 2",
        ),
        (
            &["heat", "--backend", "cpu", "--size", "16", "--steps", "1", "--split", "4"],
            "--split 4 disagrees",
        ),
        (
            &["grayscott", "--backend", "cpu", "--size", "16", "--steps", "1", "--transport", "local"],
            "--transport local keeps",
        ),
    ];
    for (args, expected) in cases {
        let args = if args[0] == "bench" { args.to_vec() } else { [args, &gif[..]].concat() };
        let out = as_rank(&dir, 0, 2, &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(expected) && stderr.lines().count() == 1, "{args:?}: {stderr}");
        // The other ranks find the same and leave the report to rank 0.
        let out = as_rank(&dir, 1, 2, &args);
        assert_eq!(out.status.code(), Some(1));
        assert!(out.stderr.is_empty(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(common::files_in(&dir).is_empty());
    }
}

#[test]
fn overlap_is_refused_where_there_is_no_nccl_exchange_to_hide() {
    let dir = common::scratch_dir("overlap");
    for (args, expected) in [
        (
            &["heat", "--backend", "cpu", "--size", "16", "--steps", "1", "--overlap"][..],
            "it needs a split run",
        ),
        (
            &["grayscott", "--backend", "cpu", "--size", "16", "--steps", "1", "--overlap"],
            "it needs --transport nccl",
        ),
    ] {
        let out = common::host(&dir, &[args, &["--gif", "o.gif"][..]].concat());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(expected) && stderr.lines().count() == 1, "{args:?}: {stderr}");
        assert!(common::files_in(&dir).is_empty());
    }
}

#[test]
fn the_nccl_transport_on_the_cpu_says_so_before_looking_for_nccl() {
    let dir = common::scratch_dir("no-nccl");
    let args = [
        "grayscott",
        "--backend",
        "cpu",
        "--size",
        "16",
        "--steps",
        "1",
        "--transport",
        "nccl",
        "--gif",
        "o.gif",
    ];
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rust-gpu-sim"))
        .current_dir(&dir)
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    // The run is on the CPU, which NCCL cannot split: said before any library is looked for
    // (with or without NCCL on this machine).
    assert!(stderr.contains("this run is on the CPU") && !stderr.contains("libnccl"), "{stderr}");
    // Rank 1 of a job names itself in an error only it can have.
    let out = as_rank(&dir, 1, 2, &args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.starts_with("error: rank 1 of 2: ") && stderr.lines().count() == 1, "{stderr}");
    assert!(common::files_in(&dir).is_empty());
}

#[test]
fn a_launcher_job_of_one_process_runs_as_usual() {
    let dir = common::scratch_dir("launcher-one");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rust-gpu-sim"))
        .current_dir(&dir)
        .args(["grayscott", "--backend", "cpu", "--size", "16", "--steps", "1", "--gif", "o.gif"])
        .env("SLURM_PROCID", "0")
        .env("SLURM_STEP_NUM_TASKS", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// `--png` writes the final frame for grayscott and physarum as for heat: the same pixels as
/// the last frame `--png-dir` writes in the same run, the settings recorded (readable by
/// --config), and an unwritable path refused before the run.
#[test]
fn png_writes_the_final_frame_for_every_simulation() {
    let dir = scratch_dir("png-final");
    for (sim, args) in [
        ("grayscott", &["--size", "48", "--steps", "120", "--frame-every", "40"][..]),
        ("physarum", &["--size", "48", "--agents", "400", "--steps", "12", "--frame-every", "4"][..]),
    ] {
        let (png, frames) = (format!("{sim}.png"), format!("{sim}-frames"));
        let mut all = vec![sim, "--backend", "cpu", "--png", &png, "--png-dir", &frames];
        all.extend_from_slice(args);
        let out = host(&dir, &all);
        assert!(out.status.success(), "{sim}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(String::from_utf8_lossy(&out.stdout).contains(&png), "{sim}: the summary names the PNG");
        let still = image::open(dir.join(&png)).unwrap().to_rgba8();
        assert_eq!(still.dimensions(), (48, 48), "{sim}");
        let last = files_in(&dir.join(&frames)).into_iter().max().expect("frames");
        let last = image::open(dir.join(&frames).join(last)).unwrap().to_rgba8();
        assert!(last == still, "{sim}: the PNG is not the last frame");
        // The settings it records run again.
        let again = host(&dir, &[sim, "--backend", "cpu", "--config", &png, "--png", "again.png"]);
        assert!(again.status.success(), "{sim}: {}", String::from_utf8_lossy(&again.stderr));
        assert!(
            image::open(dir.join("again.png")).unwrap().to_rgba8() == still,
            "{sim}: --config from the PNG"
        );
    }
    let bad = scratch_dir("png-bad");
    for sim in ["grayscott", "physarum"] {
        let out =
            host(&bad, &[sim, "--backend", "cpu", "--size", "16", "--steps", "2", "--png", "no/dir/x.png"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && stderr.contains("--png") && stderr.contains("does not exist"),
            "{stderr}"
        );
    }
    assert!(files_in(&bad).is_empty());
}
