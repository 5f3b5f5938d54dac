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

/// Frames received ahead of the encoder before `push` waits.
const QUEUE_FRAMES: usize = 64;

/// Writes frames to the requested outputs on a background thread.
pub struct FrameWriter {
    sender: Option<SyncSender<Vec<u8>>>,
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
        let (sender, receiver) = sync_channel(QUEUE_FRAMES);
        // GIF delays are in hundredths of a second.
        let delay = (100 / outputs.fps.max(1)).max(1) as u16;
        let encoder =
            Encoder { width, height, palette, gif, delay, png_dir: outputs.png_dir.clone(), frames: 0 };
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
        if sender.send(levels).is_err() {
            // The encoder stopped early: report why.
            return self.join().map(|_| ());
        }
        Ok(())
    }

    /// Encodes what is queued, closes the files and moves them to their final names.
    /// Returns the paths written (the GIF, or the PNG directory).
    pub fn finish(mut self) -> Result<Vec<PathBuf>> {
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
}

impl Encoder {
    fn run(mut self, receiver: Receiver<Vec<u8>>) -> Result<Vec<PathBuf>> {
        let batch_size = 2 * rayon::current_num_threads().max(1);
        while let Ok(first) = receiver.recv() {
            let mut batch = vec![first];
            while batch.len() < batch_size {
                match receiver.try_recv() {
                    Ok(frame) => batch.push(frame),
                    Err(_) => break,
                }
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
            let (w, h) = (self.width as u16, self.height as u16);
            let delay = self.delay;
            let frames: Vec<gif::Frame<'static>> = batch
                .into_par_iter()
                .map(|levels| {
                    let mut frame = gif::Frame::from_indexed_pixels(w, h, levels, None);
                    frame.delay = delay;
                    frame.make_lzw_pre_encoded();
                    frame
                })
                .collect();
            for frame in &frames {
                let path = gif.get_ref().path().to_owned();
                gif.write_lzw_pre_encoded_frame(frame).map_err(|e| gif_error(&path, e))?;
            }
        }
        Ok(())
    }
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
    let mut encoder = gif::Encoder::new(file, width as u16, height as u16, &palette.gif_palette())
        .map_err(|e| gif_error(path, e))?;
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
