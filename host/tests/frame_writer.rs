//! The frame writer keeps frames in order while compressing batches of them in parallel, and
//! leaves no file behind when a run is abandoned.

use host::render::{FrameWriter, Outputs, palette};

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
