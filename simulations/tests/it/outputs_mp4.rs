//! MP4 output: the file holds one H.264 track with every frame, decodes back to the frames
//! pushed (within video-coding error), plays in ffprobe where it is installed, and is never
//! left half-written.

use std::path::{Path, PathBuf};

use simulations::render::{
    mp4::{Mp4Writer, bt709, frames_per_group},
    palette,
};

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("mp4-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Frame k: smooth diagonal bands moving by 2 pixels a frame (video-like content).
fn frame(k: usize, width: usize, height: usize) -> Vec<u8> {
    (0..width * height)
        .map(|i| {
            let (x, y) = (i % width, i / width);
            let phase = (x + y + 2 * k) as f32 / 24.0;
            (127.5 + 127.0 * (phase * std::f32::consts::TAU).sin()) as u8
        })
        .collect()
}

/// One coded picture: the first frame it shows, for how many frames, sync or not, and its
/// Annex B stream (SPS and PPS before the first).
struct Sample {
    start: u64,
    frames: u32,
    sync: bool,
    annex_b: Vec<u8>,
}

/// The file's track size, samples and timescale.
fn read_samples(path: &Path) -> (u16, u16, Vec<Sample>, u32) {
    let file = std::fs::File::open(path).unwrap();
    let size = file.metadata().unwrap().len();
    let mut reader = mp4::Mp4Reader::read_header(std::io::BufReader::new(file), size).unwrap();
    assert_eq!(reader.tracks().len(), 1, "one track");
    let (&id, track) = reader.tracks().iter().next().unwrap();
    assert_eq!(track.track_type().unwrap(), mp4::TrackType::Video);
    assert_eq!(track.box_type().unwrap(), "avc1".parse().unwrap());
    let (w, h, timescale) = (track.width(), track.height(), track.timescale());
    let start_code = [0, 0, 0, 1];
    let mut parameter_sets = Vec::new();
    for set in [track.sequence_parameter_set().unwrap(), track.picture_parameter_set().unwrap()] {
        parameter_sets.extend_from_slice(&start_code);
        parameter_sets.extend_from_slice(set);
    }
    let count = reader.sample_count(id).unwrap();
    let mut samples = Vec::new();
    for s in 1..=count {
        let sample = reader.read_sample(id, s).unwrap().expect("sample present");
        let mut annex_b = if s == 1 { parameter_sets.clone() } else { Vec::new() };
        let mut rest = &sample.bytes[..];
        while !rest.is_empty() {
            let len = u32::from_be_bytes(rest[..4].try_into().unwrap()) as usize;
            annex_b.extend_from_slice(&start_code);
            annex_b.extend_from_slice(&rest[4..4 + len]);
            rest = &rest[4 + len..];
        }
        samples.push(Sample {
            start: sample.start_time,
            frames: sample.duration,
            sync: sample.is_sync,
            annex_b,
        });
    }
    (w, h, samples, timescale)
}

#[test]
fn odd_sized_frames_round_trip_through_the_mp4_file() {
    let dir = scratch("round-trip");
    let path = dir.join("bands.mp4");
    // At 10 fps the groups of pictures are 6 frames: four groups, encoded in parallel.
    let (w, h, frames, fps) = (37usize, 23usize, 24usize, 10u32);
    let group = frames_per_group(fps);
    assert_eq!(group, 6);
    let palette = palette("viridis").unwrap();
    let mut video = Mp4Writer::create(&path, w as u32, h as u32, fps, palette).unwrap();
    for k in 0..frames {
        video.push_frame(frame(k, w, h)).unwrap();
    }
    assert_eq!(video.finish().unwrap(), path);
    // Only the video in the directory: the temporary was renamed, and made readable like
    // any output (temporaries are private).
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o644);
    }

    let (tw, th, samples, timescale) = read_samples(&path);
    assert_eq!((tw, th), (38, 24), "padded to even");
    assert_eq!(timescale, fps, "one tick per frame");
    // Every frame is covered, in order (a frame the encoder skips lengthens the one before).
    let mut next = 0;
    for s in &samples {
        assert_eq!(s.start, next);
        next += u64::from(s.frames);
    }
    assert_eq!(next, frames as u64);
    // Each group starts with a key frame (the encoder may add others at scene changes).
    for s in samples.iter().filter(|s| s.start % group as u64 == 0) {
        assert!(s.sync, "frame {} starts a group: a key frame", s.start);
    }

    // Decode every frame and compare its luma with the palette's, on the unpadded area.
    let lut = palette.lut().map(bt709);
    let mut decoder = openh264::decoder::Decoder::new().unwrap();
    for sample in &samples {
        let k = sample.start as usize;
        let picture = decoder.decode(&sample.annex_b).unwrap().expect("a picture per sample");
        use openh264::formats::YUVSource;
        assert_eq!(picture.dimensions(), (38, 24));
        let (stride, _, _) = picture.strides();
        let expected = frame(k, w, h);
        let mse = (0..w * h)
            .map(|i| {
                let got = f64::from(picture.y()[(i / w) * stride + i % w]);
                (got - f64::from(lut[expected[i] as usize][0])).powi(2)
            })
            .sum::<f64>()
            / (w * h) as f64;
        let psnr = 10.0 * (255.0f64 * 255.0 / mse.max(1e-9)).log10();
        assert!(psnr > 30.0, "frame {k}: luma PSNR {psnr:.1} dB");
    }

    // ffprobe, where installed, reads the same: one H.264 stream of 38x24 with every frame.
    let probe = std::process::Command::new("ffprobe")
        .args(["-v", "error", "-select_streams", "v:0", "-count_frames"])
        .args(["-show_entries", "stream=codec_name,width,height,nb_read_frames", "-of", "csv=p=0"])
        .arg(&path)
        .output();
    match probe {
        Ok(out) => {
            assert!(out.status.success(), "ffprobe: {}", String::from_utf8_lossy(&out.stderr));
            assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), format!("h264,38,24,{}", samples.len()));
        }
        Err(_) => eprintln!("ffprobe not installed: checked with the mp4 reader and decoder only"),
    }
}

#[test]
fn an_abandoned_or_failed_video_leaves_nothing() {
    let dir = scratch("abandoned");
    let path = dir.join("never.mp4");
    let mut video = Mp4Writer::create(&path, 32, 32, 30, palette("viridis").unwrap()).unwrap();
    video.push_frame(frame(0, 32, 32)).unwrap();
    drop(video);
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "temporary removed, nothing written");

    // A frame of the wrong size is an error (from a later push or from finish), and nothing
    // is written.
    let mut video = Mp4Writer::create(&path, 32, 32, 30, palette("viridis").unwrap()).unwrap();
    let _ = video.push_frame(vec![0; 10]);
    let err = video.finish().unwrap_err().to_string();
    assert!(err.contains("32x32") && err.contains("1024 bytes"), "{err}");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
}

#[test]
fn a_missing_directory_or_too_large_frame_fails_before_any_frame() {
    let dir = scratch("missing");
    let path = dir.join("no/such/dir/video.mp4");
    let err = Mp4Writer::create(&path, 8, 8, 30, palette("viridis").unwrap()).err().unwrap().to_string();
    assert!(err.contains("video.mp4") && err.contains("does not exist"), "{err}");
    let path = dir.join("big.mp4");
    let err = Mp4Writer::create(&path, 4096, 64, 30, palette("viridis").unwrap()).err().unwrap().to_string();
    assert!(err.contains("3840x2160") && err.contains("4096x64"), "{err}");
    // 2160 high is fine on its side.
    assert!(Mp4Writer::create(&path, 64, 2160, 30, palette("viridis").unwrap()).is_ok());
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
}
