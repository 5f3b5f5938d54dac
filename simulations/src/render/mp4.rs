//! H.264 video in an MP4 container, from frames of palette levels.
//!
//! Frames are converted to YUV 4:2:0 (BT.709, limited range, signalled in the stream) through
//! a 256-entry table built from the palette, encoded by OpenH264 and muxed by the `mp4` crate
//! into a temporary file beside the target, which takes the target's name only in
//! [`Mp4Encoder::finish`]. Odd sizes are padded to even by repeating the last column and row.
//!
//! [`Mp4Encoder`] gathers frames into groups of pictures of [`GROUP_SECONDS`], each starting
//! with a key frame, and encodes as many groups at once as there are cores, each with its own
//! encoder (H.264 encoding is sequential within a group). [`Mp4Writer`] runs one on its own
//! thread, so frames are encoded while the simulation computes the next ones (as the GIF
//! writer does).
//!
//! ```no_run
//! use simulations::render::{mp4::Mp4Writer, palette};
//! let mut video = Mp4Writer::create("run.mp4".as_ref(), 64, 48, 30, palette("viridis").unwrap())?;
//! for t in 0..60u32 {
//!     video.push_frame((0..64 * 48).map(|i| (i as u32 + 4 * t) as u8).collect())?;
//! }
//! video.finish()?;
//! # Ok::<(), simulations::Error>(())
//! ```

use std::{
    collections::VecDeque,
    path::{Path, PathBuf},
    sync::{
        Arc,
        mpsc::{Receiver, SyncSender, TryRecvError, channel, sync_channel},
    },
    thread::JoinHandle,
};

use openh264::{
    OpenH264API, Timestamp,
    encoder::{
        BitRate, Complexity, Encoder, EncoderConfig, FrameRate, FrameType, RateControlMode, VuiConfig,
    },
    formats::YUVSlices,
};

use super::Palette;
use crate::{
    error::{Error, Result},
    outfile::{AtomicFile, output_error},
};

/// The largest frame OpenH264 encodes (H.264 level 5.2): 3840 pixels on the long side, 2160
/// on the short one.
pub const MAX_SIDES: (u32, u32) = (3840, 2160);

/// Whether the linked OpenH264 has its SIMD code (about half the encoding time): its CPU
/// feature detection is compiled only along with its assembly, and reports no features
/// without it. On x86 the assembly needs nasm at build time (scripts/setup.sh provides it;
/// the host build warns without one).
pub fn openh264_simd() -> bool {
    unsafe extern "C" {
        /// OpenH264's `codec/common/src/cpu.cpp` (C linkage): the CPU's SIMD features that
        /// its assembly can use, 0 when built without assembly.
        fn WelsCPUFeatureDetect(logical_processors: *mut i32) -> u32;
    }
    let mut logical_processors = 0i32;
    // SAFETY: it reads CPUID and writes the processor count through the pointer it is given,
    // which points to a live i32.
    unsafe { WelsCPUFeatureDetect(&mut logical_processors) != 0 }
}

/// Bits per pixel per frame asked of the rate control. On the default Gray-Scott job (512²,
/// 200 frames at 25 fps) this gives 2.3 MB at a mean luma PSNR of 35 dB against the palette
/// frames (0.25: 1.9 MB at 34 dB; 0.12 in the quality mode: 0.8 MB at 28 dB, blocky).
const BITS_PER_PIXEL: f64 = 0.3;

/// The least bit rate asked for, bits per second: tiny frames would otherwise get a few
/// hundred bytes a second.
const MIN_BITRATE: f64 = 100_000.0;

/// One frame, as given to [`Mp4Encoder`]. Palette levels only: what the encoder's groups of
/// pictures may hold is promised to the host memory checks at a byte a pixel
/// ([`groups_in_flight`]).
pub enum Frame {
    /// One palette level per pixel, row-major.
    Levels(Vec<u8>),
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
    lut: [[u8; 3]; 256],
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
        Self { width: width as usize, height: height as usize, lut: palette.lut().map(bt709) }
    }

    /// The padded (even) size.
    fn coded(&self) -> (usize, usize) {
        (self.width.next_multiple_of(2), self.height.next_multiple_of(2))
    }

    /// Checks a frame's length.
    fn check(&self, frame: &Frame) -> Result<()> {
        let cells = self.width * self.height;
        let Frame::Levels(data) = frame;
        if data.len() != cells {
            return Err(Error::InvalidInput(format!(
                "an MP4 frame of {}x{} needs {} bytes, got {}",
                self.width,
                self.height,
                cells,
                data.len()
            )));
        }
        Ok(())
    }

    /// The frame as YUV 4:2:0, padded to even size by repeating the last column and row;
    /// each chroma sample is the mean of its 2×2 pixels. Checks the frame's length. Runs on
    /// the calling thread: the groups of pictures are the parallelism (splitting each frame
    /// into rows on the same pool cost more in scheduling than it saved).
    fn convert(&self, frame: &Frame) -> Result<Yuv> {
        self.check(frame)?;
        let Frame::Levels(levels) = frame;
        Ok(self.planes(levels, |level| self.lut[usize::from(level)]))
    }

    /// The Y, Cb and Cr planes of `pixels` (row-major, `width × height`), each converted by
    /// `ycc`. Row by row over slices, so the loops carry no index clamping or bounds checks:
    /// 0.4 ms a 512² frame on the 2-core build machine, where a closure per padded pixel with
    /// clamped indices took 1.0–1.5 ms (a quarter of the frame's encoding time).
    fn planes<P: Copy>(&self, pixels: &[P], ycc: impl Fn(P) -> [u8; 3]) -> Yuv {
        let (w, h) = (self.width, self.height);
        let (cw, ch) = self.coded();
        // Row `y` of the padded picture: the last row repeats.
        let row = |y: usize| &pixels[y.min(h - 1) * w..][..w];
        let mut y_plane = vec![0u8; cw * ch];
        for (y, out) in y_plane.chunks_exact_mut(cw).enumerate() {
            let source = row(y);
            for (o, &p) in out.iter_mut().zip(source) {
                *o = ycc(p)[0];
            }
            if cw > w {
                out[w] = ycc(source[w - 1])[0];
            }
        }
        let (qw, qh) = (cw / 2, ch / 2);
        let mut u_plane = vec![0u8; qw * qh];
        let mut v_plane = vec![0u8; qw * qh];
        let mean = |a: [u8; 3], b: [u8; 3], c: [u8; 3], d: [u8; 3], k: usize| {
            ((u16::from(a[k]) + u16::from(b[k]) + u16::from(c[k]) + u16::from(d[k]) + 2) / 4) as u8
        };
        for (y, (u_row, v_row)) in u_plane.chunks_exact_mut(qw).zip(v_plane.chunks_exact_mut(qw)).enumerate()
        {
            let (top, bottom) = (row(2 * y), row(2 * y + 1));
            let pairs = top.as_chunks::<2>().0.iter().zip(bottom.as_chunks::<2>().0);
            for ((u, v), (&[t0, t1], &[b0, b1])) in u_row.iter_mut().zip(v_row.iter_mut()).zip(pairs) {
                let (p, q, r, s) = (ycc(t0), ycc(t1), ycc(b0), ycc(b1));
                (*u, *v) = (mean(p, q, r, s, 1), mean(p, q, r, s, 2));
            }
            if cw > w {
                // The padding column repeats the last one.
                let (p, r) = (ycc(top[w - 1]), ycc(bottom[w - 1]));
                (u_row[qw - 1], v_row[qw - 1]) = (mean(p, p, r, r, 1), mean(p, p, r, r, 2));
            }
        }
        Yuv { y: y_plane, u: u_plane, v: v_plane }
    }
}

/// An access unit waiting for its duration (a skipped frame lengthens the one before it).
struct Pending {
    start: u64,
    duration: u32,
    sync: bool,
    bytes: Vec<u8>,
}

/// What the encoder made of one frame.
enum Coded {
    /// A picture: sync or not, its SPS and PPS if it carried them, and its other NAL units
    /// length-prefixed as MP4 wants.
    Picture { sync: bool, sps: Option<Vec<u8>>, pps: Option<Vec<u8>>, bytes: Vec<u8> },
    /// The rate control dropped it.
    Skipped,
}

/// Encodes one group of pictures with a fresh encoder: it starts with an IDR picture, so it
/// depends on no other group, and groups can be encoded in parallel.
/// `first` is the group's first frame number, for the timestamps (`fps` frames a second) that
/// the rate control works from.
fn encode_gop(
    converter: &Converter,
    config: EncoderConfig,
    (first, fps): (u64, u32),
    frames: &[Frame],
    dest: &Path,
) -> Result<Vec<Coded>> {
    let mut encoder = Encoder::with_api_config(OpenH264API::from_source(), config)
        .map_err(|e| output_error(dest, format!("cannot start the H.264 encoder: {e}")))?;
    let (cw, ch) = converter.coded();
    frames
        .iter()
        .zip(first..)
        .map(|(frame, number)| {
            let yuv = converter.convert(frame)?;
            let source = YUVSlices::new((&yuv.y, &yuv.u, &yuv.v), (cw, ch), (cw, cw / 2, cw / 2));
            let time = Timestamp::from_millis(number * 1000 / u64::from(fps));
            let stream =
                encoder.encode_at(&source, time).map_err(|e| output_error(dest, format!("H.264: {e}")))?;
            let (mut sps, mut pps, mut bytes) = (None, None, Vec::new());
            for l in 0..stream.num_layers() {
                let layer = stream.layer(l).expect("layer index below num_layers");
                for n in 0..layer.nal_count() {
                    let nal = strip_start_code(layer.nal_unit(n).expect("NAL index below nal_count"));
                    match nal.first().map(|b| b & 0x1f) {
                        None => {}
                        Some(7) => sps = Some(nal.to_vec()),
                        Some(8) => pps = Some(nal.to_vec()),
                        Some(_) => {
                            bytes.extend_from_slice(&(nal.len() as u32).to_be_bytes());
                            bytes.extend_from_slice(nal);
                        }
                    }
                }
            }
            Ok(match stream.frame_type() {
                FrameType::Skip => Coded::Skipped,
                _ if bytes.is_empty() => Coded::Skipped,
                t => Coded::Picture { sync: matches!(t, FrameType::IDR | FrameType::I), sps, pps, bytes },
            })
        })
        .collect()
}

/// Encodes frames into an MP4 file. Frames are gathered into groups of pictures of
/// [`GROUP_SECONDS`] each (each starting with a key frame, as players seek to); each full
/// group is handed at once to its own encoder on a rayon thread, up to one group per core in
/// flight, so groups encode while the simulation goes on and side by side at the end; the
/// pictures are written in order.
pub struct Mp4Encoder {
    dest: PathBuf,
    converter: Arc<Converter>,
    config: EncoderConfig,
    muxer: mp4::Mp4Writer<AtomicFile>,
    fps: u32,
    /// Frames per group of pictures.
    gop: usize,
    /// Groups in flight at most.
    parallel: usize,
    /// Frames of the group being gathered.
    queued: Vec<Frame>,
    /// Frames handed to encoders so far.
    dispatched: u64,
    /// The groups being encoded, oldest first.
    in_flight: VecDeque<Receiver<Result<Vec<Coded>>>>,
    /// The track's SPS and PPS, once the first picture gave them.
    parameter_sets: Option<(Vec<u8>, Vec<u8>)>,
    pending: Option<Pending>,
    /// Frames written to the muxer (or lengthening a picture there).
    frames: u64,
    /// What its groups and encoders may hold, counted by the host memory checks meanwhile.
    _promise: crate::memory::Promise,
}

/// The length of a group of pictures (key frame to key frame), in seconds of video.
pub const GROUP_SECONDS: f64 = 0.6;

/// The frames in a group of pictures at `fps` frames a second: [`GROUP_SECONDS`] of video,
/// at least one frame.
pub fn frames_per_group(fps: u32) -> usize {
    (f64::from(fps) * GROUP_SECONDS).round().max(1.0) as usize
}

/// Frames held for parallel encoding: at most about 512 MiB of them.
const QUEUE_BYTES: usize = 512 << 20;

/// What one running OpenH264 encoder holds for frames of `pixels` (coded size): its
/// pictures (source, reconstruction, reference, each 1.5 bytes a pixel and padded), its
/// per-macroblock state and the frame's YUV; measured at about 2.3 MiB at 256² (`VmPeak` of
/// a Gray-Scott CPU run with two encoders, less its other parts), counted with headroom.
fn encoder_bytes(pixels: u64) -> u64 {
    (2 << 20) + 10 * pixels
}

/// Groups of pictures in flight at most (`parallel`, lowered under a hard memory limit to fit
/// [`crate::memory::buffer_budget`], down to one) and the bytes the encoder may hold with
/// them: up to `parallel + 1` groups, gathered or dispatched (the oldest is waited for as a
/// group is dispatched beyond `parallel`), of frames of `pixels` palette levels (a byte a
/// pixel: [`Frame`] has no other kind), and an OpenH264 encoder for each group
/// being encoded. The bytes are promised ([`crate::memory::promise`]) to the host memory
/// checks.
fn groups_in_flight(parallel: usize, gop: usize, pixels: u64) -> (usize, u64) {
    let group = gop as u64 * pixels;
    let held = |parallel: usize| {
        let encoding = (parallel + 1).min(rayon::current_num_threads().max(1)) as u64;
        (parallel as u64 + 1) * group + encoding * encoder_bytes(pixels)
    };
    let budget = crate::memory::buffer_budget(held(parallel));
    let parallel = (1..=parallel).rev().find(|&p| held(p) <= budget).unwrap_or(1);
    (parallel, held(parallel))
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
            // Rate control from the frames' timestamps: unlike the bit-rate mode it does not
            // skip frames after each group's key frame to pay for it.
            .rate_control_mode(RateControlMode::Timestamp)
            // Without frame skipping OpenH264 cannot hold the bit rate (and says so on stderr).
            // A skipped frame lengthens the previous one, so the timing stays right.
            .skip_frames(true)
            // One thread per encoder: the groups are the parallelism.
            .num_threads(1)
            // Same size as the default (medium) at 512², about 8% less encoding time.
            .complexity(Complexity::Low)
            .vui(VuiConfig::bt709());
        // Fail now, not at the first group, if the encoder cannot start.
        Encoder::with_api_config(OpenH264API::from_source(), config)
            .map_err(|e| output_error(dest, format!("cannot start the H.264 encoder: {e}")))?;
        // Groups of 0.6 s (15 frames at 25 fps): the default 200-frame Gray-Scott video is 14
        // groups, encoded side by side on 14 cores, where one-second groups were 8 groups of
        // 25 frames each and set the pace. On its frames the file is 3.02 MB (one-second: 2.56,
        // half-second: 3.17, over a tenth of the GIF's 31.0) at a higher PSNR (34.5 dB against
        // 34.1: the rate control spends more on the extra key frames).
        let gop = frames_per_group(fps);
        // Frames are queued as palette levels, a byte a pixel.
        let group_bytes = gop * width as usize * height as usize;
        let parallel = rayon::current_num_threads().min(QUEUE_BYTES / group_bytes.max(1)).max(1);
        let (parallel, held) = groups_in_flight(parallel, gop, (cw * ch) as u64);
        let file = AtomicFile::create(dest)?;
        let mp4_config = mp4::Mp4Config {
            major_brand: fourcc(b"isom"),
            minor_version: 512,
            compatible_brands: [b"isom", b"iso2", b"avc1", b"mp41"].map(fourcc).to_vec(),
            timescale: 1000,
        };
        let muxer = mp4::Mp4Writer::write_start(file, &mp4_config).map_err(|e| output_error(dest, e))?;
        Ok(Self {
            dest: dest.to_owned(),
            converter: Arc::new(converter),
            config,
            muxer,
            fps,
            gop,
            parallel,
            queued: Vec::new(),
            dispatched: 0,
            in_flight: VecDeque::new(),
            parameter_sets: None,
            pending: None,
            frames: 0,
            _promise: crate::memory::promise(held),
        })
    }

    /// Queues one frame (`width × height` palette levels); hands a full group
    /// of pictures to an encoder, and writes the groups already encoded. A frame of the wrong
    /// size is an error at once.
    pub fn push(&mut self, frame: Frame) -> Result<()> {
        self.converter.check(&frame)?;
        self.queued.push(frame);
        if self.queued.len() >= self.gop {
            self.dispatch();
            self.write_encoded(self.parallel)?;
        }
        Ok(())
    }

    /// Frames pushed so far.
    pub fn frames(&self) -> u64 {
        self.dispatched + self.queued.len() as u64
    }

    /// Starts encoding the queued frames as one group on the rayon pool.
    fn dispatch(&mut self) {
        let frames = std::mem::take(&mut self.queued);
        if frames.is_empty() {
            return;
        }
        let (converter, config, dest) = (self.converter.clone(), self.config, self.dest.clone());
        let (first, fps) = (self.dispatched, self.fps);
        self.dispatched += frames.len() as u64;
        let (sender, receiver) = channel();
        rayon::spawn(move || {
            // The receiver is gone only if the encoder was dropped (a failed run).
            let _ = sender.send(encode_gop(&converter, config, (first, fps), &frames, &dest));
        });
        self.in_flight.push_back(receiver);
    }

    /// Writes the oldest groups that are done, and waits for the oldest ones until at most
    /// `keep` are left in flight.
    fn write_encoded(&mut self, keep: usize) -> Result<()> {
        while let Some(oldest) = self.in_flight.front() {
            let coded = if self.in_flight.len() > keep {
                oldest.recv().map_err(|_| output_error(&self.dest, "an H.264 encoder thread stopped"))?
            } else {
                match oldest.try_recv() {
                    Ok(coded) => coded,
                    Err(TryRecvError::Empty) => return Ok(()),
                    Err(TryRecvError::Disconnected) => {
                        return Err(output_error(&self.dest, "an H.264 encoder thread stopped"));
                    }
                }
            };
            self.in_flight.pop_front();
            coded?.into_iter().try_for_each(|picture| self.mux(picture))?;
        }
        Ok(())
    }

    fn mux(&mut self, coded: Coded) -> Result<()> {
        let start = self.frames;
        self.frames += 1;
        let Coded::Picture { sync, sps, pps, mut bytes } = coded else {
            // Nothing coded: the previous picture stays one frame longer.
            return match &mut self.pending {
                Some(pending) => {
                    pending.duration += 1;
                    Ok(())
                }
                None => Err(output_error(&self.dest, "the H.264 encoder produced no first picture")),
            };
        };
        match (&self.parameter_sets, sps, pps) {
            (None, Some(sps), Some(pps)) => {
                let (cw, ch) = self.converter.coded();
                let config = mp4::TrackConfig {
                    track_type: mp4::TrackType::Video,
                    timescale: self.fps,
                    language: "und".into(),
                    media_conf: mp4::MediaConfig::AvcConfig(mp4::AvcConfig {
                        width: cw as u16,
                        height: ch as u16,
                        seq_param_set: sps.clone(),
                        pic_param_set: pps.clone(),
                    }),
                };
                self.muxer.add_track(&config).map_err(|e| output_error(&self.dest, e))?;
                self.parameter_sets = Some((sps, pps));
            }
            (None, _, _) => {
                return Err(output_error(
                    &self.dest,
                    "the H.264 encoder gave no SPS/PPS with its first picture",
                ));
            }
            // Each group's encoder repeats the parameter sets; with the same settings they are
            // the same. Should one differ, it travels in the sample, where decoders find it.
            (Some((track_sps, track_pps)), sps, pps) => {
                let mut in_band = Vec::new();
                for (set, track) in [(sps, track_sps), (pps, track_pps)] {
                    if let Some(set) = set.filter(|s| s != track) {
                        in_band.extend_from_slice(&(set.len() as u32).to_be_bytes());
                        in_band.extend_from_slice(&set);
                    }
                }
                if !in_band.is_empty() {
                    in_band.append(&mut bytes);
                    bytes = in_band;
                }
            }
        }
        self.flush_pending()?;
        self.pending = Some(Pending { start, duration: 1, sync, bytes });
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

    /// Encodes what is queued, writes the index, and gives the file its final name. With no
    /// frame pushed, writes nothing and fails.
    pub fn finish(mut self) -> Result<PathBuf> {
        self.dispatch();
        self.write_encoded(0)?;
        if self.parameter_sets.is_none() {
            return Err(output_error(&self.dest, "no frame was encoded; no video written"));
        }
        self.flush_pending()?;
        self.muxer.write_end().map_err(|e| output_error(&self.dest, e))?;
        self.muxer.into_writer().commit()
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

/// The encoder thread: pushes frames as they come; `Finish` finishes the file, a closed
/// channel without it abandons it.
fn run(mut encoder: Mp4Encoder, receiver: Receiver<Message>) -> Result<Option<PathBuf>> {
    while let Ok(message) = receiver.recv() {
        match message {
            Message::Frame(frame) => encoder.push(frame)?,
            Message::Finish => return encoder.finish().map(Some),
        }
    }
    // The writer was dropped without `finish`: the temporary file goes with the encoder.
    Ok(None)
}

/// An [`Mp4Encoder`] on its own thread: [`Mp4Writer::push_frame`] queues a frame and returns
/// while earlier ones are encoded. Dropped without [`Mp4Writer::finish`] (a failed run), the
/// temporary file is removed and nothing is written.
pub struct Mp4Writer {
    sender: Option<SyncSender<Message>>,
    worker: Option<JoinHandle<Result<Option<PathBuf>>>>,
    /// What its queue of frames may hold, counted by the host memory checks meanwhile.
    _promise: crate::memory::Promise,
}

impl Mp4Writer {
    /// Opens the output now (a missing directory fails here) and starts the encoder thread.
    pub fn create(dest: &Path, width: u32, height: u32, fps: u32, palette: &Palette) -> Result<Self> {
        let encoder = Mp4Encoder::create(dest, width, height, fps, palette)?;
        // Palette levels, a byte a pixel.
        let frame = u64::from(width) * u64::from(height);
        let queue = queue_frames(width, height);
        let budget = crate::memory::buffer_budget(queue as u64 * frame);
        let queue = queue.min((budget / frame.max(1)) as usize).max(1);
        let (sender, receiver) = sync_channel(queue);
        let worker =
            crate::memory::spawn(std::thread::Builder::new().name("mp4-encoder".into()), move || {
                run(encoder, receiver)
            })
            .map_err(|e| {
                let why = crate::memory::thread_start_failure(&e);
                output_error(dest, format!("cannot start the encoder thread: {why}"))
            })?;
        let promise = crate::memory::promise(queue as u64 * frame);
        Ok(Self { sender: Some(sender), worker: Some(worker), _promise: promise })
    }

    /// Queues a frame of palette levels (`width × height` bytes).
    pub fn push_frame(&mut self, levels: Vec<u8>) -> Result<()> {
        self.push(Frame::Levels(levels))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    /// The conversion written pixel by pixel, as the definition reads: the padded picture's
    /// pixel (x, y) is the source's (min(x, w-1), min(y, h-1)); chroma is the rounded mean of
    /// each 2×2 block.
    fn reference(c: &Converter, ycc: &[[u8; 3]]) -> Yuv {
        let (w, h) = (c.width, c.height);
        let (cw, ch) = c.coded();
        let at = |x: usize, y: usize| ycc[y.min(h - 1) * w + x.min(w - 1)];
        let y_plane = (0..cw * ch).map(|i| at(i % cw, i / cw)[0]).collect();
        let chroma = |k: usize| {
            (0..cw * ch / 4)
                .map(|i| {
                    let (x, y) = (2 * (i % (cw / 2)), 2 * (i / (cw / 2)));
                    let sum: u16 = [at(x, y), at(x + 1, y), at(x, y + 1), at(x + 1, y + 1)]
                        .iter()
                        .map(|p| u16::from(p[k]))
                        .sum();
                    ((sum + 2) / 4) as u8
                })
                .collect()
        };
        Yuv { y: y_plane, u: chroma(1), v: chroma(2) }
    }

    #[test]
    fn the_conversion_matches_the_per_pixel_definition_at_odd_and_even_sizes() {
        let palette = crate::render::palette("cyberpunk").unwrap();
        let mut rng = SplitMix64::new(7);
        for (w, h) in [(16, 16), (17, 16), (16, 17), (17, 19), (1, 1), (1, 6), (5, 1), (64, 33)] {
            let c = Converter::new(w, h, palette);
            let cells = (w * h) as usize;
            let levels: Vec<u8> = (0..cells).map(|_| rng.next_u64() as u8).collect();
            let got = c.convert(&Frame::Levels(levels.clone())).unwrap();
            let want = reference(&c, &levels.iter().map(|&l| c.lut[usize::from(l)]).collect::<Vec<_>>());
            assert_eq!(got.y, want.y, "{w}x{h}: Y");
            assert_eq!(got.u, want.u, "{w}x{h}: Cb");
            assert_eq!(got.v, want.v, "{w}x{h}: Cr");
        }
    }
}
