//! H.264 video in an MP4 container, from frames of palette levels (or RGB).
//!
//! Frames are converted to YUV 4:2:0 (BT.709, limited range, signalled in the stream) through
//! a 256-entry table built from the palette, encoded by OpenH264 and muxed by the `mp4` crate
//! into a temporary file beside the target, which takes the target's name only in
//! [`Mp4Encoder::finish`]. Odd sizes are padded to even by repeating the last column and row.
//!
//! [`Mp4Encoder`] encodes on the calling thread; [`Mp4Writer`] runs one on its own thread,
//! so frames are encoded while the simulation computes the next ones (as the GIF writer).
//!
//! ```no_run
//! use host::render::{mp4::Mp4Writer, palette};
//! let mut video = Mp4Writer::create("run.mp4".as_ref(), 64, 48, 30, palette("viridis").unwrap())?;
//! for t in 0..60u32 {
//!     video.push_frame((0..64 * 48).map(|i| (i as u32 + 4 * t) as u8).collect())?;
//! }
//! video.finish()?;
//! # Ok::<(), host::Error>(())
//! ```

use std::{
    io::BufWriter,
    path::{Path, PathBuf},
    sync::mpsc::{Receiver, SyncSender, sync_channel},
    thread::JoinHandle,
};

use openh264::{
    OpenH264API,
    encoder::{BitRate, Encoder, EncoderConfig, FrameRate, FrameType, RateControlMode, VuiConfig},
    formats::YUVSlices,
};
use rayon::prelude::*;
use tempfile::NamedTempFile;

use super::Palette;
use crate::{
    error::{Error, Result},
    export::{output_error, persist, temp_for},
};

/// The largest frame OpenH264 encodes (H.264 level 5.2): 3840 pixels on the long side, 2160
/// on the short one.
pub const MAX_SIDES: (u32, u32) = (3840, 2160);

/// Bits per pixel per frame for the rate control. On the default Gray-Scott job (512², 200
/// frames) this gives 2.0 MB at a mean luma PSNR of 34 dB against the palette frames (0.12:
/// 0.8 MB at 28 dB, visibly blocky; 0.5: 3.2 MB at 38 dB).
const BITS_PER_PIXEL: f64 = 0.3;

/// The least bit rate asked for, bits per second: tiny frames would otherwise get a few
/// hundred bytes a second.
const MIN_BITRATE: f64 = 100_000.0;

/// One frame, as given to [`Mp4Writer`].
pub enum Frame {
    /// One palette level per pixel, row-major.
    Levels(Vec<u8>),
    /// Three bytes (R, G, B) per pixel, row-major.
    Rgb(Vec<u8>),
}

/// A YUV 4:2:0 picture of even size.
struct Yuv {
    y: Vec<u8>,
    u: Vec<u8>,
    v: Vec<u8>,
}

/// Converts frames to YUV 4:2:0 of even size.
#[derive(Clone)]
struct Converter {
    width: usize,
    height: usize,
    /// (Y, Cb, Cr) of each palette level.
    lut: Vec<[u8; 3]>,
}

/// BT.709 Y'CbCr of an RGB colour, limited range (Y in 16..=235, Cb and Cr in 16..=240).
pub fn bt709([r, g, b]: [u8; 3]) -> [u8; 3] {
    let (r, g, b) = (f32::from(r) / 255.0, f32::from(g) / 255.0, f32::from(b) / 255.0);
    let y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
    let (cb, cr) = ((b - y) / 1.8556, (r - y) / 1.5748);
    [16.0 + 219.0 * y, 128.0 + 224.0 * cb, 128.0 + 224.0 * cr].map(|c| c.round().clamp(0.0, 255.0) as u8)
}

impl Converter {
    fn new(width: u32, height: u32, palette: &Palette) -> Self {
        Self { width: width as usize, height: height as usize, lut: palette.lut().map(bt709).to_vec() }
    }

    /// The padded (even) size.
    fn coded(&self) -> (usize, usize) {
        (self.width.next_multiple_of(2), self.height.next_multiple_of(2))
    }

    /// Y'CbCr of every pixel of a frame; checks its length.
    fn ycbcr(&self, frame: &Frame) -> Result<Vec<[u8; 3]>> {
        let cells = self.width * self.height;
        let (data, per_pixel) = match frame {
            Frame::Levels(levels) => (levels.as_slice(), 1),
            Frame::Rgb(rgb) => (rgb.as_slice(), 3),
        };
        if data.len() != cells * per_pixel {
            return Err(Error::InvalidInput(format!(
                "an MP4 frame of {}x{} needs {} bytes, got {}",
                self.width,
                self.height,
                cells * per_pixel,
                data.len()
            )));
        }
        Ok(if per_pixel == 1 {
            data.par_iter().map(|&l| self.lut[l as usize]).collect()
        } else {
            data.par_chunks_exact(3).map(|p| bt709([p[0], p[1], p[2]])).collect()
        })
    }

    /// The frame as YUV 4:2:0, padded to even size by repeating the last column and row;
    /// each chroma sample is the mean of its 2×2 pixels.
    fn convert(&self, frame: &Frame) -> Result<Yuv> {
        let pixels = self.ycbcr(frame)?;
        let (w, h) = (self.width, self.height);
        let (cw, ch) = self.coded();
        let at = |x: usize, y: usize| pixels[y.min(h - 1) * w + x.min(w - 1)];
        let mut y_plane = vec![0u8; cw * ch];
        y_plane.par_chunks_mut(cw).enumerate().for_each(|(y, row)| {
            row.iter_mut().enumerate().for_each(|(x, out)| *out = at(x, y)[0]);
        });
        let (qw, qh) = (cw / 2, ch / 2);
        let mut u_plane = vec![0u8; qw * qh];
        let mut v_plane = vec![0u8; qw * qh];
        u_plane.par_chunks_mut(qw).zip(v_plane.par_chunks_mut(qw)).enumerate().for_each(
            |(y, (u_row, v_row))| {
                for x in 0..qw {
                    let quad = [
                        at(2 * x, 2 * y),
                        at(2 * x + 1, 2 * y),
                        at(2 * x, 2 * y + 1),
                        at(2 * x + 1, 2 * y + 1),
                    ];
                    let mean = |c: usize| ((quad.iter().map(|p| u16::from(p[c])).sum::<u16>() + 2) / 4) as u8;
                    (u_row[x], v_row[x]) = (mean(1), mean(2));
                }
            },
        );
        Ok(Yuv { y: y_plane, u: u_plane, v: v_plane })
    }
}

/// An access unit waiting for its duration (a skipped frame lengthens the one before it).
struct Pending {
    start: u64,
    duration: u32,
    sync: bool,
    bytes: Vec<u8>,
}

/// Encodes frames into an MP4 file on the calling thread.
pub struct Mp4Encoder {
    dest: PathBuf,
    converter: Converter,
    encoder: Encoder,
    muxer: mp4::Mp4Writer<BufWriter<NamedTempFile>>,
    fps: u32,
    /// Whether the video track exists yet (it needs the first frame's SPS and PPS).
    track: bool,
    pending: Option<Pending>,
    frames: u64,
}

impl Mp4Encoder {
    /// Creates the temporary file beside `dest` now (so a missing directory fails before any
    /// simulation work) and sets up the encoder for `width × height` frames at `fps`.
    pub fn create(dest: &Path, width: u32, height: u32, fps: u32, palette: &Palette) -> Result<Self> {
        let converter = Converter::new(width, height, palette);
        let (cw, ch) = converter.coded();
        let (long, short) = (cw.max(ch) as u32, cw.min(ch) as u32);
        if width == 0 || height == 0 || long > MAX_SIDES.0 || short > MAX_SIDES.1 {
            return Err(Error::InvalidInput(format!(
                "an MP4 (H.264) frame is at most {}x{} (either way round), not {width}x{height}; \
                 use a smaller size, or --gif or --png for larger frames",
                MAX_SIDES.0, MAX_SIDES.1
            )));
        }
        if fps == 0 {
            return Err(Error::InvalidInput("the video frame rate must be at least 1".into()));
        }
        let bitrate = (BITS_PER_PIXEL * (cw * ch) as f64 * f64::from(fps))
            .clamp(MIN_BITRATE, f64::from(i32::MAX)) as u32;
        let config = EncoderConfig::new()
            .bitrate(BitRate::from_bps(bitrate))
            .max_frame_rate(FrameRate::from_hz(fps as f32))
            .rate_control_mode(RateControlMode::Bitrate)
            // Without frame skipping OpenH264 cannot hold the bit rate (and says so on stderr).
            // A skipped frame lengthens the previous one, so the timing stays right.
            .skip_frames(true)
            .vui(VuiConfig::bt709());
        let encoder = Encoder::with_api_config(OpenH264API::from_source(), config)
            .map_err(|e| output_error(dest, format!("cannot start the H.264 encoder: {e}")))?;
        let file = temp_for(dest)?;
        let mp4_config = mp4::Mp4Config {
            major_brand: fourcc(b"isom"),
            minor_version: 512,
            compatible_brands: [b"isom", b"iso2", b"avc1", b"mp41"].map(fourcc).to_vec(),
            timescale: 1000,
        };
        let muxer = mp4::Mp4Writer::write_start(BufWriter::new(file), &mp4_config)
            .map_err(|e| output_error(dest, e))?;
        Ok(Self {
            dest: dest.to_owned(),
            converter,
            encoder,
            muxer,
            fps,
            track: false,
            pending: None,
            frames: 0,
        })
    }

    /// Encodes one frame (palette levels or RGB, `width × height` pixels).
    pub fn push(&mut self, frame: &Frame) -> Result<()> {
        let yuv = self.converter.convert(frame)?;
        self.encode(&yuv)
    }

    /// Encodes frames in order, converting them to YUV in parallel first.
    pub fn push_batch(&mut self, frames: &[Frame]) -> Result<()> {
        let converter = &self.converter;
        let pictures: Vec<Yuv> = frames.par_iter().map(|f| converter.convert(f)).collect::<Result<_>>()?;
        pictures.iter().try_for_each(|yuv| self.encode(yuv))
    }

    /// Frames encoded so far.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    fn encode(&mut self, yuv: &Yuv) -> Result<()> {
        let (cw, ch) = self.converter.coded();
        let source = YUVSlices::new((&yuv.y, &yuv.u, &yuv.v), (cw, ch), (cw, cw / 2, cw / 2));
        let dest = self.dest.clone();
        let stream = self.encoder.encode(&source).map_err(|e| output_error(&dest, format!("H.264: {e}")))?;
        let frame_type = stream.frame_type();
        let (mut sps, mut pps, mut sample) = (None, None, Vec::new());
        for l in 0..stream.num_layers() {
            let layer = stream.layer(l).expect("layer index below num_layers");
            for n in 0..layer.nal_count() {
                let nal = strip_start_code(layer.nal_unit(n).expect("NAL index below nal_count"));
                match nal.first().map(|b| b & 0x1f) {
                    None => {}
                    Some(7) => sps = Some(nal.to_vec()),
                    Some(8) => pps = Some(nal.to_vec()),
                    // Length-prefixed, as MP4 wants.
                    Some(_) => {
                        sample.extend_from_slice(&(nal.len() as u32).to_be_bytes());
                        sample.extend_from_slice(nal);
                    }
                }
            }
        }
        let start = self.frames;
        self.frames += 1;
        if sample.is_empty() || frame_type == FrameType::Skip {
            // Nothing coded: the previous picture stays one frame longer.
            return match &mut self.pending {
                Some(pending) => {
                    pending.duration += 1;
                    Ok(())
                }
                None => Err(output_error(&dest, "the H.264 encoder produced no first picture")),
            };
        }
        if !self.track {
            let (Some(sps), Some(pps)) = (sps, pps) else {
                return Err(output_error(&dest, "the H.264 encoder gave no SPS/PPS with its first picture"));
            };
            let config = mp4::TrackConfig {
                track_type: mp4::TrackType::Video,
                timescale: self.fps,
                language: "und".into(),
                media_conf: mp4::MediaConfig::AvcConfig(mp4::AvcConfig {
                    width: cw as u16,
                    height: ch as u16,
                    seq_param_set: sps,
                    pic_param_set: pps,
                }),
            };
            self.muxer.add_track(&config).map_err(|e| output_error(&dest, e))?;
            self.track = true;
        }
        self.flush_pending()?;
        self.pending = Some(Pending {
            start,
            duration: 1,
            sync: matches!(frame_type, FrameType::IDR | FrameType::I),
            bytes: sample,
        });
        Ok(())
    }

    /// Writes the access unit waiting for its duration.
    fn flush_pending(&mut self) -> Result<()> {
        if let Some(p) = self.pending.take() {
            let sample = mp4::Mp4Sample {
                start_time: p.start,
                duration: p.duration,
                rendering_offset: 0,
                is_sync: p.sync,
                bytes: p.bytes.into(),
            };
            self.muxer.write_sample(1, &sample).map_err(|e| output_error(&self.dest, e))?;
        }
        Ok(())
    }

    /// Writes the last frame and the index, and gives the file its final name. With no frame
    /// pushed, writes nothing and fails.
    pub fn finish(mut self) -> Result<PathBuf> {
        if !self.track {
            return Err(output_error(&self.dest, "no frame was encoded; no video written"));
        }
        self.flush_pending()?;
        self.muxer.write_end().map_err(|e| output_error(&self.dest, e))?;
        let file = self.muxer.into_writer().into_inner().map_err(|e| output_error(&self.dest, e.error()))?;
        persist(file, &self.dest)
    }
}

/// A NAL unit without its Annex B start code (`00 00 01` or `00 00 00 01`).
fn strip_start_code(nal: &[u8]) -> &[u8] {
    let zeros = nal.iter().take_while(|&&b| b == 0).count();
    if zeros >= 2 && nal.get(zeros) == Some(&1) { &nal[zeros + 1..] } else { nal }
}

fn fourcc(code: &[u8; 4]) -> mp4::FourCC {
    mp4::FourCC::from(*code)
}

/// Frames queued ahead of the encoder before a push waits: at most about 256 MiB, 2 to 64.
fn queue_frames(width: u32, height: u32) -> usize {
    ((256 << 20) / (3 * width as usize * height as usize).max(1)).clamp(2, 64)
}

/// What the encoder thread receives.
enum Message {
    Frame(Frame),
    /// All frames are sent: finish the file. Without it (the run failed), the temporary file
    /// is removed.
    Finish,
}

/// The encoder thread: takes what is queued (up to two frames per core), converts it in
/// parallel, encodes it in order.
fn run(mut encoder: Mp4Encoder, receiver: Receiver<Message>) -> Result<Option<PathBuf>> {
    let batch_size = 2 * rayon::current_num_threads().max(1);
    loop {
        let mut batch = Vec::new();
        let mut finished = false;
        let mut next = receiver.recv().ok();
        if next.is_none() {
            // The writer was dropped without `finish`: abandon the file.
            return Ok(None);
        }
        while let Some(message) = next {
            match message {
                Message::Frame(frame) => batch.push(frame),
                Message::Finish => finished = true,
            }
            next = if finished || batch.len() >= batch_size { None } else { receiver.try_recv().ok() };
        }
        encoder.push_batch(&batch)?;
        if finished {
            return encoder.finish().map(Some);
        }
    }
}

/// An [`Mp4Encoder`] on its own thread: [`Mp4Writer::push_frame`] queues a frame and returns
/// while earlier ones are encoded. Dropped without [`Mp4Writer::finish`] (a failed run), the
/// temporary file is removed and nothing is written.
pub struct Mp4Writer {
    sender: Option<SyncSender<Message>>,
    worker: Option<JoinHandle<Result<Option<PathBuf>>>>,
}

impl Mp4Writer {
    /// Opens the output now (a missing directory fails here) and starts the encoder thread.
    pub fn create(dest: &Path, width: u32, height: u32, fps: u32, palette: &Palette) -> Result<Self> {
        let encoder = Mp4Encoder::create(dest, width, height, fps, palette)?;
        let (sender, receiver) = sync_channel(queue_frames(width, height));
        let worker = std::thread::Builder::new()
            .name("mp4-encoder".into())
            .spawn(move || run(encoder, receiver))
            .map_err(|e| output_error(dest, format!("cannot start the encoder thread: {e}")))?;
        Ok(Self { sender: Some(sender), worker: Some(worker) })
    }

    /// Queues a frame of palette levels (`width × height` bytes).
    pub fn push_frame(&mut self, levels: Vec<u8>) -> Result<()> {
        self.push(Frame::Levels(levels))
    }

    /// Queues a frame of RGB pixels (`3 × width × height` bytes).
    pub fn push_rgb(&mut self, rgb: Vec<u8>) -> Result<()> {
        self.push(Frame::Rgb(rgb))
    }

    fn push(&mut self, frame: Frame) -> Result<()> {
        let Some(sender) = &self.sender else {
            return Err(Error::Output {
                path: PathBuf::from("<mp4 encoder thread>"),
                reason: "the encoder stopped on an earlier error".into(),
            });
        };
        if sender.send(Message::Frame(frame)).is_err() {
            // The encoder stopped on an error: report it.
            return self.join().map(|_| ());
        }
        Ok(())
    }

    /// Encodes what is queued, closes the file and gives it its final name.
    pub fn finish(mut self) -> Result<PathBuf> {
        if let Some(sender) = &self.sender {
            // A closed channel means the encoder already stopped; `join` reports why.
            let _ = sender.send(Message::Finish);
        }
        self.join()?.ok_or_else(|| Error::Output {
            path: PathBuf::from("<mp4 encoder thread>"),
            reason: "the encoder stopped on an earlier error; no video written".into(),
        })
    }

    fn join(&mut self) -> Result<Option<PathBuf>> {
        self.sender.take();
        let Some(worker) = self.worker.take() else { return Ok(None) };
        worker.join().unwrap_or_else(|_| {
            Err(Error::Output {
                path: PathBuf::from("<mp4 encoder thread>"),
                reason: "the encoder panicked".into(),
            })
        })
    }
}

impl Drop for Mp4Writer {
    fn drop(&mut self) {
        if let Some(worker) = self.worker.take() {
            // Unfinished (an error elsewhere): the thread sees the channel close without
            // `Finish` and drops its temporary file.
            self.sender.take();
            let _ = worker.join();
        }
    }
}
