//! The frame writer keeps frames in order while compressing batches of them in parallel, and
//! leaves no file behind when a run is abandoned.

use crate::common;

use std::path::Path;

use simulations::render::{FrameWriter, Outputs, palette};

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("writer-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Frame k is a gradient shifted by k, so each frame is distinct and identifiable.
fn frame(k: usize, width: usize, height: usize) -> Vec<u8> {
    (0..width * height).map(|i| ((i % width + k * 3 + i / width) % 250) as u8).collect()
}

/// Decodes a GIF written by the writer into full frames of indices (compositing sub-frames).
fn decode(path: &std::path::Path) -> (usize, usize, Vec<Vec<u8>>) {
    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::Indexed);
    let mut decoder = options.read_info(std::fs::File::open(path).unwrap()).unwrap();
    let (w, h) = (decoder.width() as usize, decoder.height() as usize);
    let mut canvas = vec![0u8; w * h];
    let mut frames = Vec::new();
    while let Some(f) = decoder.read_next_frame().unwrap() {
        for y in 0..f.height as usize {
            for x in 0..f.width as usize {
                let index = f.buffer[y * f.width as usize + x];
                if Some(index) != f.transparent {
                    canvas[(f.top as usize + y) * w + f.left as usize + x] = index;
                }
            }
        }
        frames.push(canvas.clone());
    }
    (w, h, frames)
}

#[test]
fn many_frames_come_out_in_order() {
    let dir = scratch("order");
    let (w, h, count) = (37usize, 23usize, 157usize);
    let outputs = Outputs { gif: Some(dir.join("o.gif")), png_dir: Some(dir.join("png")), fps: 50 };
    let mut writer = FrameWriter::create(&outputs, w as u32, h as u32, palette("magma").unwrap()).unwrap();
    for k in 0..count {
        // Some frames repeat the previous one (an empty change rectangle).
        let k_shown = if k % 10 == 9 { k - 1 } else { k };
        writer.push(frame(k_shown, w, h)).unwrap();
    }
    let written = writer.finish().unwrap();
    assert_eq!(written, vec![dir.join("o.gif"), dir.join("png")]);

    let (dw, dh, frames) = decode(&dir.join("o.gif"));
    assert_eq!((dw, dh, frames.len()), (w, h, count));
    for (k, got) in frames.iter().enumerate() {
        let k_shown = if k % 10 == 9 { k - 1 } else { k };
        assert_eq!(got, &frame(k_shown, w, h), "GIF frame {k}");
    }
    let lut = palette("magma").unwrap().lut();
    for k in [0, 1, 63, 64, 156] {
        let png = image::open(dir.join(format!("png/frame_{k:05}.png"))).unwrap().to_rgb8();
        let k_shown = if k % 10 == 9 { k - 1 } else { k };
        let want: Vec<u8> = frame(k_shown, w, h).iter().flat_map(|&l| lut[l as usize]).collect();
        assert_eq!(png.into_raw(), want, "PNG frame {k}");
    }
}

#[test]
fn an_unfinished_writer_leaves_no_file() {
    let dir = scratch("abandon");
    let outputs = Outputs { gif: Some(dir.join("o.gif")), png_dir: None, fps: 25 };
    let mut writer = FrameWriter::create(&outputs, 8, 8, palette("grayscale").unwrap()).unwrap();
    writer.push(frame(0, 8, 8)).unwrap();
    drop(writer);
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "no GIF and no temporary file");
}

/// The size of this process's `--png-dir` spill file in `dir`.
fn spill_size(dir: &Path) -> Option<u64> {
    common::spill_file_size("self", dir)
}

/// Entries of `dir` with their contents, sorted (`None` if `dir` does not exist).
fn contents(dir: &Path) -> Option<Vec<(String, Vec<u8>)>> {
    let mut entries: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .ok()?
        .map(|e| {
            let e = e.unwrap();
            (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap_or_default())
        })
        .collect();
    entries.sort();
    Some(entries)
}

/// Pushes frames `first..first + count` to a writer of `png_dir` and waits until the encoder
/// has spilled at least `count` frames' worth of PNG data into its anonymous file in
/// `spill_dir`.
fn spilled_writer(png_dir: &Path, spill_dir: &Path, first: usize, count: usize) -> FrameWriter {
    let outputs = Outputs { gif: None, png_dir: Some(png_dir.to_owned()), fps: 25 };
    let mut writer = FrameWriter::create(&outputs, 32, 16, palette("viridis").unwrap()).unwrap();
    for k in first..first + count {
        writer.push(frame(k, 32, 16)).unwrap();
    }
    // Each 32x16 frame is more than 100 bytes of PNG.
    let start = std::time::Instant::now();
    while spill_size(spill_dir).unwrap_or(0) < 100 * count as u64 {
        assert!(start.elapsed().as_secs() < 60, "no anonymous spill file with the frames in {spill_dir:?}");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    writer
}

/// Checks that `dir` holds exactly frames `first..first + count` of [`frame`], as PNGs.
fn assert_frames(dir: &Path, first: usize, count: usize) {
    let names: Vec<String> = contents(dir).unwrap().into_iter().map(|(name, _)| name).collect();
    let want: Vec<String> = (0..count).map(|i| format!("frame_{i:05}.png")).collect();
    assert_eq!(names, want, "{dir:?}");
    let lut = palette("viridis").unwrap().lut();
    for (i, name) in want.iter().enumerate() {
        let png = image::open(dir.join(name)).unwrap().to_rgb8();
        let pixels: Vec<u8> = frame(first + i, 32, 16).iter().flat_map(|&l| lut[l as usize]).collect();
        assert_eq!(png.into_raw(), pixels, "PNG frame {i}");
    }
}

#[test]
fn png_frames_have_no_name_until_the_run_completes() {
    let dir = scratch("png-anonymous");
    // A new directory: not even the directory exists before the end (the spill file is in
    // its parent).
    let frames = dir.join("frames");
    let writer = spilled_writer(&frames, &dir, 0, 12);
    assert_eq!(contents(&dir), Some(vec![]), "nothing named while frames are written");
    assert_eq!(writer.finish().unwrap(), vec![frames.clone()]);
    assert_frames(&frames, 0, 12);
    assert_eq!(spill_size(&dir), None, "the spill file is closed");

    // Into that directory of 12 frames: unchanged while 5 new frames are written (the spill
    // file is in the directory itself), then exactly the 5 new ones.
    let before = contents(&frames);
    let writer = spilled_writer(&frames, &frames, 100, 5);
    assert_eq!(contents(&frames), before, "the earlier frames untouched while frames are written");
    writer.finish().unwrap();
    assert_frames(&frames, 100, 5);
}

#[test]
fn an_unfinished_png_writer_leaves_the_directory_as_it_was() {
    let dir = scratch("png-abandon");
    let frames = dir.join("frames");
    drop(spilled_writer(&frames, &dir, 0, 7));
    assert_eq!(contents(&dir), Some(vec![]), "no directory, no frame");
    assert_eq!(spill_size(&dir), None, "the spill file is closed");

    std::fs::create_dir(&frames).unwrap();
    std::fs::write(frames.join("frame_00000.png"), b"an earlier run's").unwrap();
    let before = contents(&frames);
    drop(spilled_writer(&frames, &frames, 0, 7));
    assert_eq!(contents(&frames), before);
}
