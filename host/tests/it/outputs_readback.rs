//! The command's pictures, video and VTK file read back as a user's tools read them, against
//! what docs/outputs.md says of them: each GIF frame's delay (round(100/fps) hundredths) and
//! the frame count, the MP4's frame count and rate (from its sample table, as a player reads
//! it), the `.vti`'s extent, origin and spacing. (No VTK reader or ffprobe is installed here:
//! the `.vti` is read as the XML ParaView reads, the MP4 with the `mp4` crate's reader.)

use std::path::Path;

use crate::common;

/// Runs `rust-gpu-sim` with `args` in `dir`; returns the frames its summary line says.
fn run(dir: &Path, args: &[&str]) -> u32 {
    let out = common::host(dir, args);
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{args:?}: {said}{}", String::from_utf8_lossy(&out.stderr));
    let before = said.split(" frames").next().unwrap();
    before.rsplit(' ').next().unwrap().parse().unwrap_or_else(|_| panic!("no frame count in {said:?}"))
}

/// A 32² Gray-Scott run on the CPU of `steps` steps, a frame every `every`, at `fps`, into
/// `output` (`--gif g.gif`, `--mp4 v.mp4`); the frames it says.
fn frames_at(dir: &Path, steps: u32, every: u32, fps: u32, output: [&str; 2]) -> u32 {
    let (steps, every, fps) = (steps.to_string(), every.to_string(), fps.to_string());
    let mut args = vec!["grayscott", "--backend", "cpu", "--size", "32", "--steps", &steps];
    args.extend(["--frame-every", &every, "--fps", &fps, output[0], output[1]]);
    run(dir, &args)
}

#[test]
fn each_gif_frame_lasts_round_100_over_fps_hundredths() {
    let dir = tempfile::tempdir().unwrap();
    for (fps, delay) in [(15, 7), (9, 11), (25, 4), (50, 2), (1, 100)] {
        let said = frames_at(dir.path(), 20, 5, fps, ["--gif", "g.gif"]);
        let mut decoder = gif::DecodeOptions::new()
            .read_info(std::fs::File::open(dir.path().join("g.gif")).unwrap())
            .unwrap();
        let mut delays = Vec::new();
        while let Some(frame) = decoder.read_next_frame().unwrap() {
            delays.push(frame.delay);
        }
        assert_eq!(delays.len() as u32, said, "--fps {fps}: the frames said");
        assert!(delays.iter().all(|&d| d == delay), "--fps {fps}: delays {delays:?}, not {delay}");
    }
}

#[test]
fn the_mp4_holds_every_frame_at_the_asked_rate() {
    let dir = tempfile::tempdir().unwrap();
    for fps in [12u32, 25, 30] {
        let said = frames_at(dir.path(), 30, 3, fps, ["--mp4", "v.mp4"]);
        let path = dir.path().join("v.mp4");
        let file = std::fs::File::open(&path).unwrap();
        let size = file.metadata().unwrap().len();
        let mut reader = mp4::Mp4Reader::read_header(std::io::BufReader::new(file), size).unwrap();
        let (&id, track) = reader.tracks().iter().next().unwrap();
        let (timescale, count) = (track.timescale(), reader.sample_count(id).unwrap());
        assert_eq!(count, said, "--fps {fps}: every frame a sample");
        for s in 1..=count {
            let sample = reader.read_sample(id, s).unwrap().unwrap();
            assert_eq!(sample.duration * fps, timescale, "--fps {fps}: sample {s} lasts 1/{fps} s");
        }
    }
}

#[test]
fn the_vti_spans_the_box_from_the_origin_at_spacing_h() {
    let dir = tempfile::tempdir().unwrap();
    run(
        dir.path(),
        &[
            "heat",
            "--backend",
            "cpu",
            "--nx",
            "9",
            "--ny",
            "7",
            "--nz",
            "5",
            "--h",
            "0.5",
            "--steps",
            "1",
            "--save",
            "f.vti",
        ],
    );
    // The XML header, before the raw appended data.
    let bytes = std::fs::read(dir.path().join("f.vti")).unwrap();
    let xml = String::from_utf8_lossy(
        &bytes[..bytes.windows(13).position(|w| w == b"<AppendedData").unwrap_or(bytes.len())],
    )
    .into_owned();
    let attribute = |name: &str| -> Vec<f64> {
        let at = xml.find(&format!("{name}=\"")).unwrap_or_else(|| panic!("no {name}"));
        let rest = &xml[at + name.len() + 2..];
        rest[..rest.find('"').unwrap()].split_whitespace().map(|v| v.parse().unwrap()).collect()
    };
    assert_eq!(attribute("WholeExtent"), [0.0, 8.0, 0.0, 6.0, 0.0, 4.0]);
    assert_eq!(attribute("Origin"), [0.0, 0.0, 0.0]);
    assert_eq!(attribute("Spacing"), [0.5, 0.5, 0.5]);
    assert!(xml.contains("Name=\"u\""), "the field is named u");
}
