//! Frame writers: an encoder thread receives frames of palette levels while the simulation
//! runs, compresses each batch of frames in parallel (GIF LZW, PNG deflate) and writes them
//! in order.

use std::{
    path::{Path, PathBuf},
    sync::mpsc::{Receiver, SyncSender, sync_channel},
    thread::JoinHandle,
};

use image::{ImageEncoder, codecs::png::PngEncoder};
use rayon::prelude::*;

use super::{Palette, output::AtomicFile};
use crate::error::{Error, Result};

/// Where frames go.
#[derive(Clone, Debug, Default)]
pub struct Outputs {
    /// An animated GIF.
    pub gif: Option<PathBuf>,
    /// A directory of numbered PNG frames (`frame_00000.png`, ...).
    pub png_dir: Option<PathBuf>,
    /// GIF playback rate, frames per second.
    pub fps: u32,
}

impl Outputs {
    /// Whether any output is requested.
    pub fn any(&self) -> bool {
        self.gif.is_some() || self.png_dir.is_some()
    }
}

/// Frames queued ahead of the encoder before `push` waits: up to 64, and at most about
/// 256 MiB of them.
fn queue_frames(width: u32, height: u32) -> usize {
    (256 << 20) / (width as usize * height as usize).max(1)
}

/// What the encoder thread receives.
enum Message {
    Frame(Vec<u8>),
    /// All frames are sent: close the files and give them their final names. Without this
    /// message (the run failed), the files are abandoned and their temporary names removed.
    Finish,
}

/// Writes frames to the requested outputs on a background thread.
pub struct FrameWriter {
    sender: Option<SyncSender<Message>>,
    worker: Option<JoinHandle<Result<Vec<PathBuf>>>>,
}

impl FrameWriter {
    /// Opens every output now (so an unwritable path fails before the simulation starts) and
    /// starts the encoder thread.
    pub fn create(outputs: &Outputs, width: u32, height: u32, palette: &'static Palette) -> Result<Self> {
        let gif = match &outputs.gif {
            Some(path) => Some(open_gif(path, width, height, palette)?),
            None => None,
        };
        if let Some(dir) = &outputs.png_dir {
            prepare_png_dir(dir)?;
        }
        let (sender, receiver) = sync_channel(queue_frames(width, height).clamp(2, 64));
        // GIF delays are in hundredths of a second.
        let delay = (100 / outputs.fps.max(1)).max(1) as u16;
        let encoder = Encoder {
            width,
            height,
            palette,
            gif,
            delay,
            png_dir: outputs.png_dir.clone(),
            frames: 0,
            previous: None,
        };
        let worker = std::thread::Builder::new()
            .name("frame-encoder".into())
            .spawn(move || encoder.run(receiver))
            .map_err(|e| Error::Output { path: PathBuf::from("<encoder thread>"), reason: e.to_string() })?;
        Ok(Self { sender: Some(sender), worker: Some(worker) })
    }

    /// Queues one frame (`width × height` palette levels). Waits only if the encoder is more
    /// than a queue's length behind.
    pub fn push(&mut self, levels: Vec<u8>) -> Result<()> {
        let sender = self.sender.as_ref().expect("sender present until finish");
        if sender.send(Message::Frame(levels)).is_err() {
            // The encoder stopped early: report why.
            return self.join().map(|_| ());
        }
        Ok(())
    }

    /// Encodes what is queued, closes the files and moves them to their final names.
    /// Returns the paths written (the GIF, or the PNG directory).
    pub fn finish(mut self) -> Result<Vec<PathBuf>> {
        let sender = self.sender.as_ref().expect("sender present until finish");
        // A closed channel means the encoder already stopped; `join` reports why.
        let _ = sender.send(Message::Finish);
        self.join()
    }

    fn join(&mut self) -> Result<Vec<PathBuf>> {
        self.sender.take();
        let worker = self.worker.take().expect("worker joined once");
        worker.join().unwrap_or_else(|_| {
            Err(Error::Output {
                path: PathBuf::from("<encoder thread>"),
                reason: "the encoder panicked".into(),
            })
        })
    }
}

impl Drop for FrameWriter {
    fn drop(&mut self) {
        // Unfinished (an error elsewhere): stop the encoder; its temporary files are removed.
        self.sender.take();
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

struct Encoder {
    width: u32,
    height: u32,
    palette: &'static Palette,
    gif: Option<gif::Encoder<AtomicFile>>,
    delay: u16,
    png_dir: Option<PathBuf>,
    frames: usize,
    /// The last frame sent to the GIF, as GIF indices.
    previous: Option<Vec<u8>>,
}

impl Encoder {
    fn run(mut self, receiver: Receiver<Message>) -> Result<Vec<PathBuf>> {
        let batch_size = 2 * rayon::current_num_threads().max(1);
        let mut finished = false;
        while !finished {
            let mut batch = Vec::new();
            // Wait for one message, then take whatever else is already queued.
            let mut next = receiver.recv().ok();
            while let Some(message) = next {
                match message {
                    Message::Frame(levels) => batch.push(levels),
                    Message::Finish => finished = true,
                }
                next = if finished || batch.len() >= batch_size { None } else { receiver.try_recv().ok() };
            }
            if batch.is_empty() && !finished {
                // The sender is gone without `Finish`: abandon the outputs.
                return Ok(Vec::new());
            }
            self.write_batch(batch)?;
        }
        let mut written = Vec::new();
        if let Some(gif) = self.gif.take() {
            let file = gif.into_inner().map_err(|e| gif_error(&PathBuf::from("<gif>"), e))?;
            let path = file.path().to_owned();
            file.commit()?;
            written.push(path);
        }
        written.extend(self.png_dir.take());
        Ok(written)
    }

    fn write_batch(&mut self, batch: Vec<Vec<u8>>) -> Result<()> {
        let first_index = self.frames;
        self.frames += batch.len();
        if let Some(dir) = &self.png_dir {
            let (w, h, palette) = (self.width, self.height, self.palette);
            batch.par_iter().enumerate().try_for_each(|(i, levels)| {
                write_png(&dir.join(format!("frame_{:05}.png", first_index + i)), levels, w, h, palette)
            })?;
        }
        if let Some(gif) = &mut self.gif {
            let (w, h, delay) = (self.width, self.height, self.delay);
            let indices: Vec<Vec<u8>> = batch.into_par_iter().map(gif_indices).collect();
            let previous: Vec<Option<&[u8]>> = std::iter::once(self.previous.as_deref())
                .chain(indices.iter().map(|f| Some(f.as_slice())))
                .collect();
            let frames: Vec<gif::Frame<'static>> = indices
                .par_iter()
                .zip(&previous[..indices.len()])
                .map(|(current, previous)| {
                    let mut frame = gif_frame(*previous, current, w, h);
                    frame.delay = delay;
                    frame.make_lzw_pre_encoded();
                    frame
                })
                .collect();
            self.previous = indices.into_iter().last();
            for frame in &frames {
                let path = gif.get_ref().path().to_owned();
                gif.write_lzw_pre_encoded_frame(frame).map_err(|e| gif_error(&path, e))?;
            }
        }
        Ok(())
    }
}

/// The GIF index marking "unchanged since the previous frame" (transparent).
pub const GIF_TRANSPARENT: u8 = 255;

/// Palette levels as GIF indices: level 255 is drawn with index 254, freeing index 255 for
/// [`GIF_TRANSPARENT`]. (The top two levels differ by about 1/256 of the palette.)
fn gif_indices(mut levels: Vec<u8>) -> Vec<u8> {
    levels.iter_mut().for_each(|l| *l = (*l).min(GIF_TRANSPARENT - 1));
    levels
}

/// The first frame whole; each later one as the smallest rectangle holding every changed
/// pixel, unchanged pixels in it transparent (drawn over the previous frame). Long
/// transparent runs compress far better than the pattern itself.
fn gif_frame(previous: Option<&[u8]>, current: &[u8], width: u32, height: u32) -> gif::Frame<'static> {
    let (w, h) = (width as usize, height as usize);
    let Some(previous) = previous else {
        return gif::Frame::from_indexed_pixels(width as u16, height as u16, current.to_vec(), None);
    };
    let changed_in_row = |y: usize| previous[y * w..(y + 1) * w] != current[y * w..(y + 1) * w];
    let Some(top) = (0..h).find(|&y| changed_in_row(y)) else {
        // Nothing changed: one transparent pixel keeps the frame's timing.
        let mut frame = gif::Frame::from_indexed_pixels(1, 1, vec![GIF_TRANSPARENT], Some(GIF_TRANSPARENT));
        frame.dispose = gif::DisposalMethod::Keep;
        return frame;
    };
    let bottom = (top..h).rev().find(|&y| changed_in_row(y)).expect("row `top` changed");
    let changed_at = |x: usize| (top..=bottom).any(|y| previous[y * w + x] != current[y * w + x]);
    let left = (0..w).find(|&x| changed_at(x)).expect("some column changed");
    let right = (left..w).rev().find(|&x| changed_at(x)).expect("column `left` changed");
    let mut pixels = Vec::with_capacity((bottom - top + 1) * (right - left + 1));
    for y in top..=bottom {
        let (row, before) = (&current[y * w + left..=y * w + right], &previous[y * w + left..=y * w + right]);
        pixels.extend(row.iter().zip(before).map(|(&c, &p)| if c == p { GIF_TRANSPARENT } else { c }));
    }
    let mut frame = gif::Frame::from_indexed_pixels(
        (right - left + 1) as u16,
        (bottom - top + 1) as u16,
        pixels,
        Some(GIF_TRANSPARENT),
    );
    (frame.left, frame.top) = (left as u16, top as u16);
    frame.dispose = gif::DisposalMethod::Keep;
    frame
}

fn gif_error(path: &Path, e: gif::EncodingError) -> Error {
    Error::Output { path: path.to_owned(), reason: e.to_string() }
}

/// Creates the GIF's temporary file, writes its header and global palette.
fn open_gif(path: &Path, width: u32, height: u32, palette: &Palette) -> Result<gif::Encoder<AtomicFile>> {
    if width > u32::from(u16::MAX) || height > u32::from(u16::MAX) {
        return Err(Error::InvalidInput(format!(
            "a GIF is at most 65535 pixels wide and high, not {width}x{height}"
        )));
    }
    let file = AtomicFile::create(path)?;
    let mut colours = palette.gif_palette();
    // Index 255 is the transparent one; give it level 254's colour for decoders that ignore
    // transparency.
    colours.copy_within(254 * 3..255 * 3, 255 * 3);
    let mut encoder =
        gif::Encoder::new(file, width as u16, height as u16, &colours).map_err(|e| gif_error(path, e))?;
    encoder.set_repeat(gif::Repeat::Infinite).map_err(|e| gif_error(path, e))?;
    Ok(encoder)
}

/// Creates the PNG directory if its parent exists, and checks that it is writable.
fn prepare_png_dir(dir: &Path) -> Result<()> {
    if !dir.is_dir() {
        std::fs::create_dir(dir)
            .map_err(|e| Error::Output { path: dir.to_owned(), reason: e.to_string() })?;
    }
    // Probe: a temporary file that is removed again.
    drop(AtomicFile::create(&dir.join("frame_00000.png"))?);
    Ok(())
}

/// Writes one frame of palette levels as an RGB PNG, atomically.
pub fn write_png(path: &Path, levels: &[u8], width: u32, height: u32, palette: &Palette) -> Result<()> {
    let mut file = AtomicFile::create(path)?;
    PngEncoder::new(&mut file)
        .write_image(&palette.to_rgb(levels), width, height, image::ExtendedColorType::Rgb8)
        .map_err(|e| Error::Output { path: path.to_owned(), reason: e.to_string() })?;
    file.commit()?;
    Ok(())
}
