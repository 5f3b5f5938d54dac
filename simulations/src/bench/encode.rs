//! `rust-gpu-sim bench encode`: the output encoders on their own, on any machine (no GPU needed).
//!
//! The default Gray-Scott job's 200 frames (512², `coral`, one every 50 steps) are computed
//! once (on the GPU if there is one), then encoded `repeats` times each into a temporary
//! directory, as the GIF that `--gif` writes and as the MP4 that `--mp4` writes. Reported, as
//! medians: wall-clock seconds on the encoders' thread pool, the CPU seconds the process spent
//! (every thread added up: the work, whatever the core count), and one MP4 group of pictures
//! encoded alone: each group is sequential work on one thread, so on a machine with a core
//! per group that is what the video waits for once the last frame is in.

use std::{path::Path, time::Instant};

use serde::{Deserialize, Serialize};

use crate::{
    BackendChoice, Device,
    error::{Error, Result},
    grayscott::{self, GrayScott, Variant},
    render::{
        FrameWriter, Outputs,
        mp4::{Frame, Mp4Encoder, frames_per_group, openh264_simd},
        palette,
    },
};

/// The default job: 200 frames of 512².
const FRAMES: u32 = 200;
const SIDE: u32 = 512;
const FPS: u32 = 25;

/// What `rust-gpu-sim bench encode` measured.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EncodeReport {
    /// `YYYY-MM-DD` (UTC).
    pub date: String,
    /// Threads of the encoders' pool (rayon's: one per core unless `RAYON_NUM_THREADS` says).
    pub threads: usize,
    /// Steps of the job the frames come from (a multiple of the 200 frames).
    pub steps: u32,
    /// Where the frames were computed (`cpu`, or the GPU's name), and how long it took.
    pub frames_from: String,
    pub frames_s: f64,
    /// Whether the linked OpenH264 has its SIMD code ([`openh264_simd`]).
    pub openh264_simd: bool,
    pub rows: Vec<EncodeRow>,
}

/// One encoder's figures, medians of the repeats.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EncodeRow {
    pub what: String,
    pub frames: usize,
    pub wall_s: f64,
    /// CPU seconds of the whole process (user + system) while it ran.
    pub cpu_s: f64,
    pub bytes: u64,
}

impl EncodeReport {
    /// The table printed by `rust-gpu-sim bench encode`.
    pub fn table(&self) -> String {
        let mut text = format!(
            "frames: {FRAMES} of {SIDE}x{SIDE} (the default Gray-Scott job, {} steps), computed on {} in {:.2} s ({})\n\
             encoders: {} threads; OpenH264 with its SIMD code: {}\n\
             {:<34} {:>8} {:>8} {:>13} {:>12}\n",
            self.steps,
            self.frames_from,
            self.frames_s,
            self.date,
            self.threads,
            if self.openh264_simd { "yes" } else { "no" },
            "encoder",
            "wall s",
            "CPU s",
            "CPU ms/frame",
            "bytes",
        );
        for row in &self.rows {
            text += &format!(
                "{:<34} {:>8.3} {:>8.3} {:>13.2} {:>12}\n",
                row.what,
                row.wall_s,
                row.cpu_s,
                1e3 * row.cpu_s / row.frames as f64,
                row.bytes
            );
        }
        text
    }
}

/// The least `steps` (one frame every `steps / 200` steps).
const MIN_STEPS: u32 = FRAMES;

/// Computes the frames on `backend` (`steps` of the job; `None`: the preset's 10,000), then
/// times the encoders (printing progress to stderr).
pub fn run(backend: BackendChoice, steps: Option<u32>, repeats: usize) -> Result<EncodeReport> {
    if steps.is_some_and(|s| s < MIN_STEPS) {
        return Err(Error::InvalidInput(format!("--steps must be at least {MIN_STEPS} (one per frame)")));
    }
    if repeats == 0 {
        return Err(Error::InvalidInput("--repeats must be at least 1".into()));
    }
    let preset = grayscott::preset("coral").expect("the coral preset");
    let steps_between_frames = steps.unwrap_or(preset.steps) / FRAMES;
    let (device, notice) = Device::select(backend)?;
    if let Some(notice) = notice {
        crate::stderr_line!("{notice}");
    }
    let frames_from = match &device {
        Device::Cpu => "cpu".to_string(),
        Device::Cuda(gpu) => gpu.name().to_string(),
    };
    crate::stderr_line!("computing the {FRAMES} frames on {frames_from}...");
    let started = Instant::now();
    let frames = default_job_frames(&device, steps_between_frames)?;
    let frames_s = started.elapsed().as_secs_f64();
    drop(device);

    let dir = Scratch::new()?;
    let (gif, mp4) = (dir.0.join("bench.gif"), dir.0.join("bench.mp4"));
    let group = frames_per_group(FPS);
    let middle = frames.len() / 2;
    let mut rows = Vec::new();
    crate::stderr_line!("encoding, {repeats} times each...");
    rows.push(measure("GIF (--gif)", &frames, repeats, &gif, |f| encode_gif(f, &gif))?);
    rows.push(measure("MP4 (--mp4)", &frames, repeats, &mp4, |f| encode_mp4(f, &mp4))?);
    rows.push(measure(
        &format!("MP4, one group alone ({group} frames)"),
        &frames[middle..middle + group],
        repeats,
        &mp4,
        |f| encode_mp4(f, &mp4),
    )?);
    Ok(EncodeReport {
        date: super::today(),
        threads: rayon::current_num_threads(),
        steps: steps_between_frames * FRAMES,
        frames_from,
        frames_s,
        openh264_simd: openh264_simd(),
        rows,
    })
}

/// The default `rust-gpu-sim grayscott --gif` job's frames: `coral` at 512², one frame every
/// `steps_between_frames` steps.
fn default_job_frames(device: &Device, steps_between_frames: u32) -> Result<Vec<Vec<u8>>> {
    let preset = grayscott::preset("coral").expect("the coral preset");
    let variant = if matches!(device, Device::Cpu) { Variant::Cpu } else { Variant::Fused };
    let mut sim = GrayScott::new(&preset.setup(SIDE, SIDE), device, variant)?;
    (0..FRAMES)
        .map(|_| {
            sim.step(steps_between_frames)?;
            let mut levels = vec![0u8; (SIDE * SIDE) as usize];
            sim.levels(&mut levels)?;
            Ok(levels)
        })
        .collect()
}

/// Times `encode` on fresh copies of `frames`, after one untimed run; medians.
fn measure(
    what: &str,
    frames: &[Vec<u8>],
    repeats: usize,
    output: &Path,
    mut encode: impl FnMut(Vec<Vec<u8>>) -> Result<()>,
) -> Result<EncodeRow> {
    let (mut wall, mut cpu) = (Vec::new(), Vec::new());
    for repeat in 0..=repeats {
        let copies = frames.to_vec();
        let (started, cpu_before) = (Instant::now(), cpu_seconds());
        encode(copies)?;
        if repeat > 0 {
            wall.push(started.elapsed().as_secs_f64());
            cpu.push(cpu_seconds() - cpu_before);
        }
    }
    let bytes = std::fs::metadata(output).map(|m| m.len()).unwrap_or(0);
    Ok(EncodeRow {
        what: what.into(),
        frames: frames.len(),
        wall_s: super::median(&mut wall),
        cpu_s: super::median(&mut cpu),
        bytes,
    })
}

fn encode_gif(frames: Vec<Vec<u8>>, path: &Path) -> Result<()> {
    let outputs = Outputs { gif: Some(path.to_owned()), png_dir: None, fps: FPS };
    let mut writer = FrameWriter::create(&outputs, SIDE, SIDE, palette("cyberpunk").expect("palette"))?;
    frames.into_iter().try_for_each(|f| writer.push(f))?;
    writer.finish().map(drop)
}

fn encode_mp4(frames: Vec<Vec<u8>>, path: &Path) -> Result<()> {
    let mut video = Mp4Encoder::create(path, SIDE, SIDE, FPS, palette("cyberpunk").expect("palette"))?;
    frames.into_iter().try_for_each(|f| video.push(Frame::Levels(f)))?;
    video.finish().map(drop)
}

/// A temporary directory for the encoded files, removed when dropped, and by the signal
/// handler if the bench is interrupted.
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new() -> Result<Self> {
        let parent = std::env::temp_dir();
        crate::render::output::staging_dir(&parent)
            .map(Self)
            .map_err(|e| Error::Output { path: parent, reason: crate::render::output::describe_io(&e) })
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        crate::render::output::abandon_staged(&self.0, None);
    }
}

/// CPU seconds (user + system) of the whole process so far.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage only writes the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return f64::NAN;
    }
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}
