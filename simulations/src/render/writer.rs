//! Frame writers: an encoder thread receives frames of palette levels while the simulation
//! runs, compresses each batch of frames in parallel (GIF LZW, PNG deflate) and writes them
//! in order.
//!
//! PNG frames wait (in one anonymous spill file, or a named staging directory) until the run
//! completes and only then appear in the `--png-dir` directory, replacing the `frame_*.png`
//! files of an earlier run; a failed or interrupted run leaves the directory as it was
//! ([`super::png_dir`]).

use std::{
    path::{Path, PathBuf},
    sync::mpsc::{Receiver, SyncSender, sync_channel},
    thread::JoinHandle,
};

use rayon::prelude::*;

use super::{
    Palette,
    output::{AtomicFile, describe_io},
    png_dir::PngDir,
};
use crate::error::{Error, Result};

/// What a picture records of how it was made: the program (a PNG's tEXt `Software` chunk)
/// and the run's settings (a PNG's iTXt `Comment` chunk, a GIF's comment extension).
#[derive(Clone, Copy, Debug)]
pub struct MadeBy<'a> {
    /// The program and its version: [`SOFTWARE`] for the built-in commands, a model's own
    /// (`barkley 0.1.0`) for a program written on the library.
    pub software: &'a str,
    /// How it was made (the settings document).
    pub settings: &'a str,
}

/// The `rust-gpu-sim` command and its version, what its pictures record as their software.
pub const SOFTWARE: &str = concat!("rust-gpu-sim ", env!("CARGO_PKG_VERSION"));

/// Where frames go.
#[derive(Clone, Debug, Default)]
pub struct Outputs {
    /// An animated GIF.
    pub gif: Option<PathBuf>,
    /// A directory of numbered PNG frames (`frame_00000.png`, ...).
    pub png_dir: Option<PathBuf>,
    /// GIF playback rate, frames per second (delays are whole hundredths of a second, so
    /// the rate played is 100 / round(100 / fps)).
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
fn queue_frames(frame: u64) -> usize {
    ((256u64 << 20) / frame.max(1)).min(usize::MAX as u64) as usize
}

/// The encoder's pipeline for `frame`-byte frames: frames queued ahead of it, frames encoded
/// at once, and the bytes it may hold besides what it holds when it starts (its promise,
/// [`crate::memory::promise`]). Each frame of a batch is held up to `per_batch` times (the
/// levels, the GIF's rectangle and its LZW code; a PNG's pixels and deflated bytes), and the
/// previous frame once. Under a hard memory limit both shrink to fit an eighth of the room
/// ([`crate::memory::buffer_budget`]), down to one frame each.
fn pipeline(frame: u64, gif: bool, png: bool) -> (usize, usize, u64) {
    let per_batch = 1 + 2 * u64::from(gif) + 3 * u64::from(png);
    let (queue, batch) = (queue_frames(frame).clamp(2, 64), 2 * rayon::current_num_threads().max(1));
    let held = |queue: usize, batch: usize| (queue as u64 + per_batch * batch as u64 + 1) * frame;
    let budget = crate::memory::buffer_budget(held(queue, batch));
    let (queue, batch) = match budget < held(queue, batch) {
        true => {
            let units = (budget / frame.max(1)).saturating_sub(1);
            let batch = (units / (2 * per_batch)).clamp(1, batch as u64) as usize;
            let queue = units.saturating_sub(per_batch * batch as u64).clamp(1, queue as u64) as usize;
            (queue, batch)
        }
        false => (queue, batch),
    };
    // The LZW tables and the GIF's and PNG's small buffers.
    (queue, batch, held(queue, batch) + (1 << 20))
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
    /// What its queue and encoder may hold, counted by the host memory checks meanwhile.
    _promise: crate::memory::Promise,
}

impl FrameWriter {
    /// Opens every output now (so an unwritable path fails before the simulation starts) and
    /// starts the encoder thread.
    pub fn create(outputs: &Outputs, width: u32, height: u32, palette: &'static Palette) -> Result<Self> {
        Self::with_text(outputs, width, height, palette, None)
    }

    /// [`FrameWriter::create`], every output also recording `text` (how it was made): the GIF
    /// its settings in a comment extension, each PNG its settings in an iTXt `Comment` chunk
    /// and its software in a tEXt `Software` chunk.
    pub fn with_text(
        outputs: &Outputs,
        width: u32,
        height: u32,
        palette: &'static Palette,
        text: Option<MadeBy<'_>>,
    ) -> Result<Self> {
        let gif = match &outputs.gif {
            Some(path) => Some(open_gif(path, width, height, palette, text.map(|t| t.settings))?),
            None => None,
        };
        let png_dir = match &outputs.png_dir {
            Some(dir) => Some(PngDir::prepare(dir)?),
            None => None,
        };
        let frame = u64::from(width) * u64::from(height);
        let (queue, batch_size, held) = pipeline(frame, gif.is_some(), png_dir.is_some());
        let (sender, receiver) = sync_channel(queue);
        let delay = gif_delay(outputs.fps);
        let text = text.map(|t| (t.software.to_owned(), t.settings.to_owned()));
        let encoder = Encoder {
            width,
            height,
            palette,
            text,
            gif,
            delay,
            png_dir,
            frames: 0,
            previous: None,
            batch_size,
        };
        let worker =
            crate::memory::spawn(std::thread::Builder::new().name("frame-encoder".into()), move || {
                encoder.run(receiver)
            })
            .map_err(|e| {
                let why = crate::memory::thread_start_failure(&e);
                Error::InvalidInput(format!("cannot start the frame encoder's thread: {why}"))
            })?;
        Ok(Self { sender: Some(sender), worker: Some(worker), _promise: crate::memory::promise(held) })
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
    /// What every PNG frame records: the software, the settings.
    text: Option<(String, String)>,
    gif: Option<gif::Encoder<AtomicFile>>,
    delay: u16,
    png_dir: Option<PngDir>,
    frames: usize,
    /// The last frame sent to the GIF, as GIF indices.
    previous: Option<Vec<u8>>,
    /// Frames encoded at once, at most.
    batch_size: usize,
}

impl Encoder {
    fn run(mut self, receiver: Receiver<Message>) -> Result<Vec<PathBuf>> {
        let batch_size = self.batch_size;
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
        if let Some(dir) = self.png_dir.take() {
            written.push(dir.commit()?);
        }
        Ok(written)
    }

    fn write_batch(&mut self, batch: Vec<Vec<u8>>) -> Result<()> {
        let first_index = self.frames;
        self.frames += batch.len();
        if let Some(dir) = &mut self.png_dir {
            let (w, h, palette) = (self.width, self.height, self.palette);
            let text = self.text.as_ref().map(|(software, settings)| MadeBy { software, settings });
            dir.write_batch(first_index, &batch, &|levels, out| {
                encode_png(out, levels, w, h, palette, text)
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
                    // What `frame.make_lzw_pre_encoded()` writes, in less than half the time.
                    frame.buffer = super::lzw::compress(&frame.buffer).into();
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
    let reason = match &e {
        gif::EncodingError::Io(io) => describe_io(io),
        _ => e.to_string(),
    };
    Error::Output { path: path.to_owned(), reason }
}

/// The GIF frame delay for `fps`, in hundredths of a second (at least 1).
pub fn gif_delay(fps: u32) -> u16 {
    let fps = fps.max(1);
    ((100 + fps / 2) / fps).clamp(1, u32::from(u16::MAX)) as u16
}

/// The GIF comment extension's label.
const GIF_COMMENT: gif::AnyExtension = gif::AnyExtension(0xFE);

/// Creates the GIF's temporary file, writes its header, global palette and `text` (a comment
/// extension).
fn open_gif(
    path: &Path,
    width: u32,
    height: u32,
    palette: &Palette,
    text: Option<&str>,
) -> Result<gif::Encoder<AtomicFile>> {
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
    if let Some(text) = text {
        encoder.write_raw_extension(GIF_COMMENT, &[text.as_bytes()]).map_err(|e| gif_error(path, e))?;
    }
    Ok(encoder)
}

/// PNG-encodes one frame of palette levels into `out` (fast deflate, adaptive filters: the
/// `image` crate's defaults), with `text`'s settings in an iTXt `Comment` chunk and its
/// software in a tEXt `Software` chunk.
fn encode_png(
    out: impl std::io::Write,
    levels: &[u8],
    width: u32,
    height: u32,
    palette: &Palette,
    text: Option<MadeBy<'_>>,
) -> std::result::Result<(), String> {
    encode_rgb_png(out, &palette.to_rgb(levels), width, height, text)
}

/// PNG-encodes RGB pixels (3 bytes a pixel, row by row) into `out`, recording `text` as
/// [`encode_png`] does.
fn encode_rgb_png(
    mut out: impl std::io::Write,
    rgb: &[u8],
    width: u32,
    height: u32,
    text: Option<MadeBy<'_>>,
) -> std::result::Result<(), String> {
    let describe = |e: png::EncodingError| match e {
        png::EncodingError::IoError(io) => describe_io(&io),
        e => e.to_string(),
    };
    let mut encoder = png::Encoder::new(&mut out, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::Fast);
    encoder.set_filter(png::Filter::Adaptive);
    if let Some(text) = text {
        encoder.add_text_chunk("Software".into(), text.software.into()).map_err(describe)?;
        encoder.add_itxt_chunk("Comment".into(), text.settings.into()).map_err(describe)?;
    }
    let mut writer = encoder.write_header().map_err(describe)?;
    writer.write_image_data(rgb).map_err(describe)?;
    writer.finish().map_err(describe)?;
    out.flush().map_err(|e| describe_io(&e))
}

/// One frame of palette levels as the bytes of an RGB PNG, recording `text` as
/// [`write_png_with_text`] does (for a PNG sent over the network, never written here).
pub fn png_bytes(
    levels: &[u8],
    width: u32,
    height: u32,
    palette: &Palette,
    text: Option<MadeBy<'_>>,
) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    encode_png(&mut out, levels, width, height, palette, text).map_err(Error::InvalidInput)?;
    Ok(out)
}

/// Writes one frame of palette levels as an RGB PNG, atomically.
pub fn write_png(path: &Path, levels: &[u8], width: u32, height: u32, palette: &Palette) -> Result<()> {
    write_png_with_text(path, levels, width, height, palette, None)
}

/// [`write_png`], recording `text` (how it was made, [`MadeBy`]).
pub fn write_png_with_text(
    path: &Path,
    levels: &[u8],
    width: u32,
    height: u32,
    palette: &Palette,
    text: Option<MadeBy<'_>>,
) -> Result<()> {
    write_rgb_png(path, &palette.to_rgb(levels), width, height, text)
}

/// Writes RGB pixels (3 bytes a pixel, row by row) as a PNG through the output-file rule
/// ([`AtomicFile`]: whole or not at all, never replacing what is not a regular file),
/// recording `text` (how it was made, [`MadeBy`]): a picture a model draws itself.
pub fn write_rgb_png(
    path: &Path,
    rgb: &[u8],
    width: u32,
    height: u32,
    text: Option<MadeBy<'_>>,
) -> Result<()> {
    if rgb.len() as u64 != 3 * u64::from(width) * u64::from(height) {
        return Err(Error::InvalidInput(format!(
            "a {width}x{height} RGB picture has {} bytes, not {}",
            3 * u64::from(width) * u64::from(height),
            rgb.len()
        )));
    }
    let mut file = AtomicFile::create(path)?;
    encode_rgb_png(&mut file, rgb, width, height, text)
        .map_err(|reason| Error::Output { path: path.to_owned(), reason })?;
    file.commit()?;
    Ok(())
}

/// The text a GIF or PNG written here records (the GIF's first comment extension, the PNG's
/// iTXt `Comment` chunk); `None` for other files, or for outputs that record none.
pub fn recorded_text(bytes: &[u8]) -> Option<String> {
    if bytes.starts_with(b"GIF8") {
        gif_comment(bytes)
    } else if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        decoder.set_ignore_text_chunk(false);
        let reader = decoder.read_info().ok()?;
        let chunk = reader.info().utf8_text.iter().find(|c| c.keyword == "Comment")?;
        chunk.get_text().ok()
    } else {
        None
    }
}

/// The first comment extension of a GIF, read up to the first frame's data.
fn gif_comment(bytes: &[u8]) -> Option<String> {
    use gif::streaming_decoder::{Decoded, OutputBuffer, StreamingDecoder};
    let mut decoder = StreamingDecoder::new();
    let (mut rest, mut text) = (bytes, Vec::new());
    while !rest.is_empty() {
        let (used, decoded) = decoder.update(rest, &mut OutputBuffer::None).ok()?;
        rest = &rest[used..];
        match decoded {
            Decoded::SubBlock { ext, is_last } if ext == GIF_COMMENT => {
                text.extend_from_slice(decoder.last_ext_sub_block());
                if is_last {
                    return String::from_utf8(text).ok();
                }
            }
            Decoded::FrameMetadata(_) | Decoded::BlockStart(gif::streaming_decoder::Block::Trailer) => {
                return None;
            }
            _ => {}
        }
    }
    None
}
