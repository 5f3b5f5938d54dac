//! The command line's video, saved state and restart, end to end on the CPU backend:
//! `--mp4`, `--save`/`--save-every`, `--checkpoint`/`--checkpoint-every` and `--resume`.

use std::path::Path;

use crate::common::{files_in, host, scratch_dir};
use simulations::export::{Array, read_npy, read_npz};

fn ok(dir: &Path, args: &[&str]) -> String {
    let out = host(dir, args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The video's frame size and number of frames, as the `mp4` crate reads them.
fn mp4_frames(path: &Path) -> (u16, u16, u32) {
    let file = std::fs::File::open(path).unwrap();
    let size = file.metadata().unwrap().len();
    let reader = mp4::Mp4Reader::read_header(std::io::BufReader::new(file), size).unwrap();
    assert_eq!(reader.tracks().len(), 1, "one track");
    let (&id, track) = reader.tracks().iter().next().unwrap();
    assert_eq!(track.track_type().unwrap(), mp4::TrackType::Video);
    (track.width(), track.height(), reader.sample_count(id).unwrap())
}

#[test]
fn mp4_has_one_sample_per_frame_for_every_simulation() {
    let dir = scratch_dir("mp4");
    // Frames at steps 20, 40, ..., 120 and the last one at 130: 7, the same as the GIF's.
    let summary = ok(
        &dir,
        &[
            "grayscott",
            "--backend",
            "cpu",
            "--width",
            "48",
            "--height",
            "32",
            "--steps",
            "130",
            "--frame-every",
            "20",
            "--mp4",
            "--gif",
        ],
    );
    assert!(summary.contains("7 frames") && summary.contains("grayscott.mp4"), "{summary}");
    assert_eq!(mp4_frames(&dir.join("grayscott.mp4")), (48, 32, 7));
    let gif = image::codecs::gif::GifDecoder::new(std::io::BufReader::new(
        std::fs::File::open(dir.join("grayscott.gif")).unwrap(),
    ))
    .unwrap();
    assert_eq!(image::AnimationDecoder::into_frames(gif).count(), 7, "the GIF got the same frames");

    ok(&dir, &["heat", "--backend", "cpu", "--size", "16", "--steps", "9", "--frame-every", "4", "--mp4"]);
    assert_eq!(mp4_frames(&dir.join("heat.mp4")), (16, 16, 3));

    ok(
        &dir,
        &[
            "physarum",
            "--backend",
            "cpu",
            "--size",
            "32",
            "--agents",
            "200",
            "--steps",
            "10",
            "--frame-every",
            "5",
            "--mp4",
            "p.mp4",
        ],
    );
    assert_eq!(mp4_frames(&dir.join("p.mp4")), (32, 32, 2));
    assert_eq!(files_in(&dir), ["grayscott.gif", "grayscott.mp4", "heat.mp4", "p.mp4"]);
}

fn array<'a>(arrays: &'a [Array], name: &str) -> &'a Array {
    arrays.iter().find(|a| a.name == name).unwrap_or_else(|| panic!("no array {name}"))
}

#[test]
fn saved_fields_read_back_with_their_shapes() {
    let dir = scratch_dir("save");
    let gs = ["grayscott", "--backend", "cpu", "--width", "24", "--height", "16", "--steps", "30"];
    let summary = ok(&dir, &[&gs[..], &["--save", "g.npz", "--save-every", "10"]].concat());
    assert!(summary.contains("g.npz"), "{summary}");
    let arrays = read_npz(&dir.join("g.npz")).unwrap();
    let names: Vec<&str> = arrays.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["u", "v"]);
    for a in &arrays {
        assert_eq!(a.shape, [16, 24]);
        assert!(a.data.iter().all(|x| (0.0..=1.0).contains(x)));
    }
    // The series: steps 10, 20, 30; the last equals the final save, the first differs.
    let last = read_npz(&dir.join("g_00000030.npz")).unwrap();
    assert_eq!(last, arrays);
    let first = read_npz(&dir.join("g_00000010.npz")).unwrap();
    assert_ne!(array(&first, "v").data, array(&arrays, "v").data);

    // .npy: one file per field, named after the stem.
    ok(&dir, &[&gs[..], &["--save", "g.npy"]].concat());
    assert_eq!(read_npy(&dir.join("g_v.npy")).unwrap().data, array(&arrays, "v").data);
    assert_eq!(read_npy(&dir.join("g_u.npy")).unwrap().data, array(&arrays, "u").data);

    // A small heat grid, saved to `target`.
    let heat = |target: &str| {
        let args = ["heat", "--backend", "cpu", "--nx", "6", "--ny", "5", "--nz", "4", "--steps", "3"];
        ok(&dir, &[&args[..], &["--save", target]].concat());
    };
    heat("h.npy");
    let u = read_npy(&dir.join("h.npy")).unwrap();
    assert_eq!(u.shape, [4, 5, 6], "nz, ny, nx");
    heat("h.vti");
    let vti = std::fs::read(dir.join("h.vti")).unwrap();
    let head = String::from_utf8_lossy(&vti[..vti.len().min(600)]);
    assert!(
        head.contains("<VTKFile type=\"ImageData\"") && head.contains("WholeExtent=\"0 5 0 4 0 3\""),
        "{head}"
    );

    let ph = ["physarum", "--backend", "cpu", "--size", "20", "--agents", "64", "--steps", "5"];
    ok(&dir, &[&ph[..], &["--save", "p.npz", "--save-agents"]].concat());
    let arrays = read_npz(&dir.join("p.npz")).unwrap();
    assert_eq!(array(&arrays, "trail").shape, [20, 20]);
    for name in ["agent_y", "agent_x", "agent_heading"] {
        assert_eq!(array(&arrays, name).shape, [64], "{name}");
    }
    ok(&dir, &[&ph[..], &["--save", "t.npz"]].concat());
    let names: Vec<String> = read_npz(&dir.join("t.npz")).unwrap().into_iter().map(|a| a.name).collect();
    assert_eq!(names, ["trail"], "agents only on request");
}

/// Arrays as (name, shape, the bits of each value), for comparisons that tell -0 from 0.
type Bits = Vec<(String, Vec<u64>, Vec<u32>)>;

fn bits(arrays: Vec<Array>) -> Bits {
    arrays.into_iter().map(|a| (a.name, a.shape, a.data.iter().map(|x| x.to_bits()).collect())).collect()
}

/// Runs `base` to `steps` in one go and, in a second directory, to `half` with a checkpoint
/// then on to `steps` from it; both `--save` the final state to `out.npz`. Returns the two
/// states and the state at `half`.
fn interrupted_and_not(name: &str, base: &[&str], half: u32, steps: u32, save: &[&str]) -> [Bits; 3] {
    let (whole, parts) = (scratch_dir(&format!("{name}-whole")), scratch_dir(&format!("{name}-parts")));
    let (half, steps) = (half.to_string(), steps.to_string());
    // The uninterrupted run also checkpoints on the way (it must not change the result).
    ok(
        &whole,
        &[base, &["--steps", &steps, "--checkpoint", "c.ck", "--checkpoint-every", "7"], save].concat(),
    );
    let summary =
        ok(&parts, &[base, &["--steps", &half, "--checkpoint", "c.ck", "--save", "half.npz"]].concat());
    assert!(summary.contains("c.ck"), "{summary}");
    let summary = ok(&parts, &[base, &["--steps", &steps, "--resume", "c.ck"], save].concat());
    assert!(summary.contains(&format!("(resumed at step {half})")), "{summary}");
    let read = |dir: &Path, file: &str| bits(read_npz(&dir.join(file)).unwrap());
    [read(&whole, "out.npz"), read(&parts, "out.npz"), read(&parts, "half.npz")]
}

#[test]
fn a_resumed_run_saves_the_same_bits_as_an_uninterrupted_one() {
    let gs = ["grayscott", "--backend", "cpu", "--size", "24", "--init", "square"];
    let [whole, resumed, half] = interrupted_and_not("gs", &gs, 25, 60, &["--save", "out.npz"]);
    assert_eq!(whole, resumed, "grayscott");
    assert_ne!(whole, half, "grayscott: the resumed run did its steps");

    let heat = ["heat", "--backend", "cpu", "--size", "10"];
    let [whole, resumed, half] = interrupted_and_not("heat", &heat, 4, 11, &["--save", "out.npz"]);
    assert_eq!(whole, resumed, "heat");
    assert_ne!(whole, half, "heat: the resumed run did its steps");

    let ph = ["physarum", "--backend", "cpu", "--size", "24", "--agents", "100"];
    let [whole, resumed, half] =
        interrupted_and_not("physarum", &ph, 9, 20, &["--save", "out.npz", "--save-agents"]);
    assert_eq!(whole.len(), 4, "trail and agents");
    assert_eq!(whole, resumed, "physarum");
    assert_ne!(whole, half, "physarum: the resumed run did its steps");
}

#[test]
fn checkpoints_every_n_steps_hold_the_latest_state() {
    let dir = scratch_dir("every");
    let gs = ["grayscott", "--backend", "cpu", "--size", "16", "--init", "square"];
    // Checkpoints at 10, 20 and 30 (the last also the final one); resumed to 35 ...
    ok(&dir, &[&gs[..], &["--steps", "30", "--checkpoint", "a.ck", "--checkpoint-every", "10"]].concat());
    ok(&dir, &[&gs[..], &["--steps", "35", "--resume", "a.ck", "--save", "r.npz"]].concat());
    ok(&dir, &[&gs[..], &["--steps", "35", "--save", "w.npz"]].concat());
    assert_eq!(bits(read_npz(&dir.join("r.npz")).unwrap()), bits(read_npz(&dir.join("w.npz")).unwrap()));
    // ... and the frames of a resumed run start where the checkpoint left off.
    let summary = ok(
        &dir,
        &[&gs[..], &["--steps", "60", "--resume", "a.ck", "--frame-every", "10", "--gif", "g.gif"]].concat(),
    );
    assert!(summary.contains("3 frames") && summary.contains("resumed at step 30"), "{summary}");
}

/// Runs `args` in `dir` with `--resume ck.fifo`, a FIFO fed `bytes` by a thread (as a shell's
/// `<(cat c.ck)` feeds a pipe, whose length the file system does not know).
fn resume_through_fifo(dir: &Path, args: &[&str], bytes: Vec<u8>) -> std::process::Output {
    let fifo = dir.join("ck.fifo");
    let _ = std::fs::remove_file(&fifo);
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let feeder = std::thread::spawn(move || {
        use std::io::Write;
        // The reader may stop early (a refusal): a broken pipe is no failure of the test.
        let _ = std::fs::OpenOptions::new().write(true).open(&fifo).and_then(|mut f| f.write_all(&bytes));
    });
    let out = host(dir, &[args, &["--resume", "ck.fifo"]].concat());
    feeder.join().unwrap();
    out
}

#[test]
fn resume_reads_a_fifo_to_its_end() {
    let dir = scratch_dir("resume-fifo");
    let gs = ["grayscott", "--backend", "cpu", "--size", "16", "--init", "square"];
    ok(&dir, &[&gs[..], &["--steps", "10", "--checkpoint", "c.ck"]].concat());
    let whole = std::fs::read(dir.join("c.ck")).unwrap();
    let out =
        resume_through_fifo(&dir, &[&gs[..], &["--steps", "20", "--save", "r.npz"]].concat(), whole.clone());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("(resumed at step 10)"), "{stdout}");
    ok(&dir, &[&gs[..], &["--steps", "20", "--save", "w.npz"]].concat());
    assert_eq!(bits(read_npz(&dir.join("r.npz")).unwrap()), bits(read_npz(&dir.join("w.npz")).unwrap()));
    // Cut short, it is truncated by what came through it.
    let half = whole[..whole.len() / 2].to_vec();
    let out = resume_through_fifo(&dir, &[&gs[..], &["--steps", "20"]].concat(), half);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.code() == Some(1) && stderr.contains("the checkpoint is truncated"), "{stderr}");
}
