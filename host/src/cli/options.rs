//! The option groups every simulation shares, defined once and flattened into each
//! subcommand, and the checks that go with them.
//!
//! Outputs: a run lists its output paths as [`Target`]s ([`OutputArgs::targets`] plus any of
//! its own, such as heat's `--png`); [`check_targets`] validates them all, clashes between
//! them included, before anything is created. A new output kind is one field in
//! [`OutputArgs`] and one entry in [`OutputArgs::targets`].

use std::{
    marker::PhantomData,
    path::{Path, PathBuf},
};

use anyhow::{Result, bail};
use clap::{Args, ValueEnum};
use host::{
    BackendChoice, Device,
    checkpoint::Checkpoint,
    export,
    render::{self, FrameWriter, PALETTES, Palette, mp4::Mp4Writer, output},
    transport::Layout,
};

use super::settings::{FramesTable, Given, RunTable, name_of};

/// GIF delays are whole hundredths of a second, and browsers play delays under 2 (above 50
/// frames per second) at about 10 frames per second.
pub const MAX_FPS: u32 = 50;

/// The smallest frame side OpenH264 encodes (it pads odd sides to 16 from 15; measured: 14
/// fails).
pub const MP4_MIN_SIDE: u32 = 15;

/// What differs between the simulations in the shared groups: defaults and variants.
pub trait Simulation: Send + Sync + 'static {
    /// The subcommand, also the name of its table in a settings file.
    const NAME: &'static str;
    /// The default `--gif` name.
    const GIF: &'static str;
    /// The default `--mp4` name.
    const MP4: &'static str;
    const FPS: &'static str;
    const FRAME_EVERY: &'static str;
    const PALETTE: &'static str;
    type Variant: ValueEnum + Copy + PartialEq + Send + Sync + 'static;
    /// The variant's `--variant` name.
    fn name(variant: Self::Variant) -> &'static str;
    /// The CPU variant.
    const CPU: Self::Variant;
    /// The variant run on a GPU when none is asked for.
    const GPU_DEFAULT: Self::Variant;
}

/// Where frames go, and how they look.
#[derive(Args, Debug)]
pub struct OutputArgs<S: Simulation> {
    /// Write an animated GIF (PATH defaults to the subcommand's name: grayscott.gif, heat.gif,
    /// physarum.gif).
    #[arg(long, value_name = "PATH", num_args = 0..=1, default_missing_value = S::GIF)]
    pub gif: Option<PathBuf>,
    /// Write an H.264 video in an MP4 container (PATH defaults to the subcommand's name:
    /// grayscott.mp4, heat.mp4, physarum.mp4), at --fps, from the same frames as --gif.
    #[arg(long, value_name = "PATH", num_args = 0..=1, default_missing_value = S::MP4)]
    pub mp4: Option<PathBuf>,
    /// Write numbered PNG frames (frame_00000.png, ...) into this directory: a new one (its
    /// parent must exist) or one holding only an earlier run's frames, which are replaced.
    #[arg(long, value_name = "DIR")]
    pub png_dir: Option<PathBuf>,
    /// Write the final frame as a PNG (heat: the middle z-slice), with the run's settings.
    #[arg(long, value_name = "PATH")]
    pub png: Option<PathBuf>,
    /// Steps between frames (a last frame is taken after the final step).
    #[arg(long, default_value = S::FRAME_EVERY, allow_hyphen_values = true)]
    pub frame_every: u32,
    /// GIF frames per second, 1 to 50 (delays are whole hundredths of a second).
    #[arg(long, default_value = S::FPS, allow_hyphen_values = true)]
    pub fps: u32,
    /// Colour palette; see --list-palettes.
    #[arg(long, default_value = S::PALETTE)]
    pub palette: String,
    /// Print the palettes and exit.
    #[arg(long)]
    pub list_palettes: bool,
    #[arg(skip)]
    _simulation: PhantomData<S>,
}

/// Where a run writes: the option that named it, the path, and whether it is a file or a
/// directory of frames.
#[derive(Clone, Debug)]
pub struct Target {
    pub option: &'static str,
    pub path: PathBuf,
    pub dir: bool,
}

impl Target {
    pub fn file(option: &'static str, path: &Path) -> Self {
        Self { option, path: path.to_owned(), dir: false }
    }
}

impl<S: Simulation> OutputArgs<S> {
    /// Checks the frame options; returns the palette.
    pub fn check(&self) -> Result<&'static Palette> {
        if self.frame_every == 0 {
            bail!("--frame-every must be at least 1");
        }
        if !(1..=MAX_FPS).contains(&self.fps) {
            bail!(
                "--fps must be between 1 and {MAX_FPS}, got {}: GIF frame delays are whole hundredths of a \
                 second, and browsers play delays under 0.02 s at about 10 frames per second",
                self.fps
            );
        }
        palette(&self.palette)
    }

    /// The frame outputs asked for, and `--png`.
    pub fn targets(&self) -> Vec<Target> {
        let mut targets = Vec::new();
        targets.extend(self.gif.as_deref().map(|p| Target::file("--gif", p)));
        targets.extend(self.mp4.as_deref().map(|p| Target::file("--mp4", p)));
        targets.extend(self.png_dir.as_deref().map(|p| Target {
            option: "--png-dir",
            path: p.to_owned(),
            dir: true,
        }));
        targets.extend(self.png.as_deref().map(|p| Target::file("--png", p)));
        targets
    }

    /// The frame writer's view of these options.
    pub fn outputs(&self) -> render::Outputs {
        render::Outputs { gif: self.gif.clone(), png_dir: self.png_dir.clone(), fps: self.fps }
    }

    /// Whether any output takes frames during the run (`--png` is written at the end).
    pub fn any(&self) -> bool {
        self.targets().iter().any(|t| t.option != "--png")
    }

    /// Checks now that `--png` can be written (only the process that writes outputs).
    pub fn check_png(&self) -> Result<()> {
        if let Some(path) = &self.png {
            drop(host::render::output::AtomicFile::create(path)?); // writable; written at the end
        }
        Ok(())
    }

    /// Writes `levels` (the final frame) to `--png`, if asked, recording `text`; returns the
    /// file written.
    pub fn write_png(
        &self,
        levels: &[u8],
        width: u32,
        height: u32,
        palette: &'static Palette,
        text: &str,
    ) -> Result<Option<PathBuf>> {
        let Some(path) = &self.png else { return Ok(None) };
        host::render::write_png_with_text(path, levels, width, height, palette, Some(text))?;
        Ok(Some(path.clone()))
    }

    /// Opens every frame output asked for (`None` without any), recording `text` where the
    /// format has room for it (GIF, PNG).
    pub fn open(
        &self,
        width: u32,
        height: u32,
        palette: &'static Palette,
        text: &str,
    ) -> Result<Option<Frames>> {
        if !self.any() {
            return Ok(None);
        }
        if self.mp4.is_some() && width.min(height) < MP4_MIN_SIDE {
            bail!(
                "--mp4: frames of {width}x{height} are too small for the H.264 encoder (OpenH264), which takes \
                 at least {MP4_MIN_SIDE} pixels a side; use --gif or --png-dir, or a larger grid"
            );
        }
        let outputs = self.outputs();
        let images = if outputs.any() {
            Some(FrameWriter::with_text(&outputs, width, height, palette, Some(text))?)
        } else {
            None
        };
        let video = match &self.mp4 {
            Some(path) => {
                let video = Mp4Writer::create(path, width, height, self.fps, palette)?;
                if !host::render::mp4::openh264_simd() {
                    crate::cli::note(
                        "this build's H.264 encoder lacks OpenH264's SIMD code (no nasm when it was built): \
                         --mp4 takes about twice the CPU time; run scripts/setup.sh, then `cargo clean -p openh264-sys2` and rebuild",
                    );
                }
                Some(video)
            }
            None => None,
        };
        Ok(Some(Frames { images, video }))
    }

    /// Takes the frame options the command line did not give from a settings file.
    pub fn apply(&mut self, frames: Option<FramesTable>, given: &Given) {
        let frames = frames.unwrap_or_default();
        given.fill("frame_every", &mut self.frame_every, frames.frame_every);
        given.fill("fps", &mut self.fps, frames.fps);
        given.fill("palette", &mut self.palette, frames.palette);
    }

    /// The frame options, for a settings file.
    pub fn table(&self) -> FramesTable {
        FramesTable {
            frame_every: Some(self.frame_every),
            fps: Some(self.fps),
            palette: Some(self.palette.clone()),
        }
    }
}

/// The frame outputs of a run: GIF and PNG frames on one encoder thread, the MP4 on another;
/// both get every frame.
pub struct Frames {
    images: Option<FrameWriter>,
    video: Option<Mp4Writer>,
}

impl Frames {
    /// Queues one frame of palette levels for every output.
    pub fn push(&mut self, levels: Vec<u8>) -> Result<()> {
        match (&mut self.images, &mut self.video) {
            (Some(images), Some(video)) => {
                video.push_frame(levels.clone())?;
                images.push(levels)?;
            }
            (Some(images), None) => images.push(levels)?,
            (None, Some(video)) => video.push_frame(levels)?,
            (None, None) => {}
        }
        Ok(())
    }

    /// Finishes the outputs on a thread of their own while `release` runs here (the caller
    /// drops the simulation and its GPU in it): releasing a GPU context takes 65–75 ms on an
    /// H200 (`scripts/cuda-floor.py`), which so overlaps the encoders' last frames instead of
    /// following them. Outputs done within 2 ms leave nothing to overlap: then `release` is
    /// not run, and process exit tears the context down, which costs less than a release
    /// followed by exit (startup-only run on an H200: 0.34–0.35 → 0.32 s, medians of 11 and
    /// 13 runs). Returns what [`Frames::finish`] returns.
    pub fn finish_while(self, release: impl FnOnce()) -> Result<Vec<PathBuf>> {
        let (done, finished) = std::sync::mpsc::channel();
        let finishing = std::thread::spawn(move || {
            let written = self.finish();
            let _ = done.send(());
            written
        });
        if finished.recv_timeout(std::time::Duration::from_millis(2)).is_ok() {
            // Nothing left to overlap: the simulation and its context are left to process
            // exit (which the caller's return leads to).
            std::mem::forget(release);
        } else {
            release();
        }
        finishing.join().unwrap_or_else(|_| Err(anyhow::anyhow!("the output encoder panicked")))
    }

    /// Finishes every output (the video first: it is the slower) and returns the paths
    /// written. On an error the outputs not yet finished are removed.
    pub fn finish(self) -> Result<Vec<PathBuf>> {
        let mut written = Vec::new();
        if let Some(video) = self.video {
            written.push(video.finish()?);
        }
        if let Some(images) = self.images {
            written.extend(images.finish()?);
        }
        Ok(written)
    }
}

/// Looks a palette up by name; the error lists the valid ones.
pub fn palette(name: &str) -> Result<&'static Palette> {
    render::palette(name).ok_or_else(|| {
        anyhow::anyhow!("unknown palette '{name}'; valid palettes: {}", render::palette::palette_names())
    })
}

/// `--list-palettes`.
pub fn list_palettes() -> Result<()> {
    for p in PALETTES {
        crate::say!("{:<10} {}", p.name, p.description);
    }
    Ok(())
}

/// Validates every output of a run before anything is created or simulated: first clashes
/// (two options naming the same path, or a file inside a frame directory), then each path on
/// its own ([`output::check_target`], [`render::check_png_dir`]).
pub fn check_targets(targets: &[Target]) -> Result<()> {
    let keys: Vec<PathBuf> = targets.iter().map(|t| identity(&t.path)).collect();
    for (i, a) in targets.iter().enumerate() {
        for (j, b) in targets.iter().enumerate().skip(i + 1) {
            if keys[i] == keys[j] {
                bail!(
                    "{} and {} both name {}; give each output its own path",
                    a.option,
                    b.option,
                    b.path.display()
                );
            }
        }
        for (j, b) in targets.iter().enumerate() {
            if b.dir && !a.dir && i != j && keys[i].starts_with(&keys[j]) {
                bail!(
                    "{} {} is inside {} {}, which holds only frames; write it elsewhere",
                    a.option,
                    a.path.display(),
                    b.option,
                    b.path.display()
                );
            }
        }
    }
    for target in targets {
        if target.dir {
            render::check_png_dir(&target.path)
        } else {
            output::check_target(&target.path).map(|_| ())
        }
        .map_err(|e| anyhow::anyhow!("{}: {e}", target.option))?;
    }
    Ok(())
}

/// A path as the file system sees it, for comparing outputs: its longest existing ancestor
/// resolved (symbolic links, `.` and `..`), the rest appended.
fn identity(path: &Path) -> PathBuf {
    let mut existing = path;
    let mut rest = Vec::new();
    loop {
        if let Ok(resolved) = std::fs::canonicalize(existing) {
            return rest.iter().rev().fold(resolved, |p, name| p.join(name));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name);
                existing = if parent.as_os_str().is_empty() { Path::new(".") } else { parent };
            }
            _ => return path.to_owned(),
        }
    }
}

/// Where to run.
#[derive(Args, Debug)]
pub struct BackendArgs<S: Simulation> {
    /// Where to run.
    #[arg(long, value_enum, default_value_t)]
    pub backend: BackendChoice,
    /// Step of the optimisation progression (default: the fastest on a GPU, cpu without); a GPU
    /// variant needs a GPU.
    #[arg(long, value_enum)]
    pub variant: Option<S::Variant>,
}

impl<S: Simulation> BackendArgs<S> {
    /// Whether these choices may open a GPU (anything but the CPU backend or variant).
    pub fn may_use_gpu(&self) -> bool {
        self.backend != BackendChoice::Cpu && self.variant.is_none_or(|v| v != S::CPU)
    }

    /// Refuses contradictory choices, without opening any device.
    pub fn check(&self) -> Result<()> {
        match (self.backend, self.variant) {
            (BackendChoice::Cuda, Some(v)) if v == S::CPU => {
                bail!("--variant cpu runs on the CPU; drop --backend cuda")
            }
            (BackendChoice::Cpu, Some(v)) if v != S::CPU => {
                bail!("--variant {} runs on a CUDA GPU; drop --backend cpu or pick --variant cpu", S::name(v))
            }
            _ => Ok(()),
        }
    }

    /// Takes the backend and variant from a settings file where the command line gave neither
    /// (one of them on the command line replaces both of the file's).
    pub fn apply(&mut self, run: Option<RunTable>, given: &Given) -> Result<()> {
        let run = run.unwrap_or_default();
        let variant = match &run.variant {
            Some(name) => Some(S::Variant::from_str(name, false).map_err(|_| {
                anyhow::anyhow!(
                    "--config: unknown variant '{name}' in [run]; valid variants: {}",
                    super::settings::names::<S::Variant>()
                )
            })?),
            None => None,
        };
        if given.has("backend") || self.variant.is_some() {
            return Ok(());
        }
        given.fill("backend", &mut self.backend, run.backend);
        self.variant = variant;
        Ok(())
    }

    /// The backend and variant asked for, for a settings file: the variant only where it is
    /// known before a device is opened (given, or the CPU's).
    pub fn table(&self) -> RunTable {
        let variant = match (self.backend, self.variant) {
            (_, Some(v)) => Some(v),
            (BackendChoice::Cpu, None) => Some(S::CPU),
            _ => None,
        };
        RunTable { backend: Some(self.backend), variant: variant.map(|v| name_of(&v)) }
    }

    /// The backend and variant a run used, for the settings its outputs record.
    pub fn ran(device: &Device, variant: S::Variant) -> RunTable {
        let backend = match device {
            Device::Cpu => BackendChoice::Cpu,
            Device::Cuda(_) => BackendChoice::Cuda,
        };
        RunTable { backend: Some(backend), variant: Some(name_of(&variant)) }
    }

    /// Opens the device: a GPU variant asks for the GPU, `cpu` for the CPU; without
    /// `--variant`, the default of the backend found. Prints a notice when `auto` falls back
    /// to the CPU.
    pub fn select(&self) -> Result<(Device, S::Variant)> {
        self.check()?;
        let (device, variant) = match (self.backend, self.variant) {
            (_, Some(v)) if v == S::CPU => (Device::Cpu, v),
            (_, Some(v)) => {
                let gpu = host::cuda::open()
                    .map_err(|e| anyhow::anyhow!("--variant {} needs a CUDA GPU: {e}", S::name(v)))?;
                (Device::Cuda(gpu), v)
            }
            (choice, None) => {
                let (device, notice) = Device::select(choice)?;
                if let Some(notice) = notice {
                    crate::cli::note(&notice);
                }
                let variant = if matches!(device, Device::Cpu) { S::CPU } else { S::GPU_DEFAULT };
                (device, variant)
            }
        };
        Ok((device, variant))
    }
}

/// `--gpus`: a count, or every GPU of the machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuCount {
    All,
    Count(u32),
}

fn gpu_count(text: &str) -> std::result::Result<GpuCount, String> {
    if text == "all" {
        return Ok(GpuCount::All);
    }
    match text.parse::<u32>() {
        Ok(0) => Err("must be at least 1 (or all)".into()),
        Ok(n) => Ok(GpuCount::Count(n)),
        Err(_) => Err(format!("{text:?} is not a number of GPUs (write e.g. 2, or all)")),
    }
}

/// Splitting the grid into parts that exchange halos (Gray-Scott's bands of rows, heat's z
/// slabs): on several GPUs of this process, several parts on one GPU (which runs the whole
/// decomposition: halos, exchanges, uneven parts), or one part per process under `mpirun` or
/// `srun` through NCCL. Results are bit-identical to one part.
#[derive(Args, Debug)]
pub struct PartsArgs {
    /// GPUs of this process to spread the parts over: a number, or all (default 1). Under a
    /// launcher, the job's GPUs: one per process (if given, it must equal the processes).
    #[arg(long, value_name = "N|all", value_parser = gpu_count, allow_hyphen_values = true)]
    pub gpus: Option<GpuCount>,
    /// Parts to split the grid into (default: one per GPU); parts beyond the GPUs share them.
    #[arg(long, value_name = "P", allow_hyphen_values = true)]
    pub split: Option<u32>,
    /// How halos travel: local (copies between parts of this process) or nccl (one part per
    /// process, NCCL between them). Default: nccl when started by mpirun or srun as one of
    /// several processes, else local. `--transport nccl` alone runs one rank whose periodic
    /// neighbour is itself.
    #[arg(long, value_enum, value_name = "HOW")]
    pub transport: Option<Transport>,
    /// With NCCL and several processes, and no NCCL_COMM_ID=HOST:PORT set: a file on a file
    /// system every rank sees, through which rank 0 hands out NCCL's id (removed once all
    /// are connected).
    #[arg(long, value_name = "PATH")]
    pub nccl_id_file: Option<PathBuf>,
    /// With NCCL: seconds any wait on another process (connecting, an exchange, a gather) may
    /// go without progress before this process stops with an error, so a rank that died or
    /// never started cannot hang the others.
    #[arg(long, value_name = "SECONDS", default_value_t = 120.0, allow_hyphen_values = true)]
    pub peer_timeout: f64,
    /// Overlap the halo exchange with computation. Gray-Scott (over NCCL only): a part steps
    /// the rows its neighbours need first and exchanges them while it steps its middle.
    /// Heat (the single variant, either transport): a slab is written in halves, in turns,
    /// each half's edge exchanged while the other is written. Off by default (see
    /// docs/multi-gpu.md for when it pays).
    #[arg(long)]
    pub overlap: bool,
}

/// How the halos of a split run travel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Transport {
    Local,
    Nccl,
}

impl PartsArgs {
    /// The parts of a split run (GPU 0 is `device`'s in one process), or `None` for a run in
    /// one part on one GPU. Refuses a CPU run, a split of zero, more GPUs than the machine
    /// has, and under a launcher anything that disagrees with its processes.
    /// `local_overlap`: whether `--overlap` is also taken by parts in one process (heat).
    pub fn open(&self, device: &Device, local_overlap: bool) -> Result<Option<Layout>> {
        if !(self.peer_timeout.is_finite() && self.peer_timeout > 0.0 && self.peer_timeout <= 86_400.0) {
            return Err(host::Error::SameOnEveryRank(format!(
                "--peer-timeout must be a number of seconds above 0, at most 86400, got {}",
                self.peer_timeout
            ))
            .into());
        }
        let job = host::decomposition::launch_rank(|name| std::env::var(name).ok())?;
        let several = job.is_some_and(|j| j.size > 1);
        let nccl = match self.transport {
            Some(Transport::Nccl) => true,
            Some(Transport::Local) if several => {
                let job = job.expect("several processes");
                return Err(host::Error::SameOnEveryRank(format!(
                    "--transport local keeps every part in one process, but {} started {} processes: leave it out \
                     to use NCCL between them",
                    job.launcher, job.size
                ))
                .into());
            }
            Some(Transport::Local) => false,
            None => several,
        };
        if nccl {
            return self.open_ranks(device, job, local_overlap).map(Some);
        }
        if self.overlap && !local_overlap {
            bail!(
                "--overlap overlaps the NCCL exchange between processes: it needs --transport nccl or a launcher job"
            );
        }
        if self.nccl_id_file.is_some() {
            bail!("--nccl-id-file is for NCCL runs of several processes (mpirun, srun)");
        }
        if self.gpus.is_none() && self.split.is_none() {
            return Ok(None);
        }
        let Device::Cuda(first) = device else {
            bail!("--gpus and --split split the grid over CUDA GPUs; this run is on the CPU");
        };
        let present = host::cuda::device_count()?;
        let gpus = match self.gpus {
            None => 1,
            Some(GpuCount::All) => present,
            Some(GpuCount::Count(n)) => n as usize,
        };
        if gpus > present {
            bail!(
                "--gpus {gpus}: this machine has {present} CUDA GPU{}",
                if present == 1 { "" } else { "s" }
            );
        }
        let split = self.split.unwrap_or(gpus as u32);
        if split == 0 {
            bail!("--split must be at least 1");
        }
        if (split as usize) < gpus {
            bail!("--split {split} is fewer parts than --gpus {gpus}: each GPU needs at least one part");
        }
        if split == 1 {
            return Ok(None);
        }
        let mut opened = vec![first.clone()];
        for ordinal in 1..gpus {
            opened.push(host::cuda::open_device(ordinal)?);
        }
        Ok(Some(Layout::Local { gpus: opened, split }))
    }

    /// This process's part of an NCCL job (rank 0 of 1 without a launcher): its GPU chosen
    /// by its rank on this host, connected to the others.
    /// `heat_overlap`: heat's `--overlap`, whose halves leave NCCL a few SMs only.
    fn open_ranks(
        &self,
        device: &Device,
        job: Option<host::decomposition::LaunchRank>,
        heat_overlap: bool,
    ) -> Result<Layout> {
        let (size, launcher) = job.map_or((1, "this command"), |j| (j.size, j.launcher));
        let disagree = |option: String| {
            anyhow::Error::from(host::Error::SameOnEveryRank(format!(
                "{option} disagrees with the {size} process{} {launcher} started: with NCCL each process holds one \
                 part on one GPU",
                if size == 1 { "" } else { "es" }
            )))
        };
        match self.gpus {
            Some(GpuCount::Count(n)) if n as usize != size => return Err(disagree(format!("--gpus {n}"))),
            _ => {}
        }
        match self.split {
            Some(p) if p as usize != size => return Err(disagree(format!("--split {p}"))),
            _ => {}
        }
        let Device::Cuda(first) = device else {
            bail!("--transport nccl exchanges halos between CUDA GPUs; this run is on the CPU");
        };
        let max_ctas = (self.overlap && heat_overlap).then_some(host::heat::parts::NCCL_FREE_SMS);
        Ok(Layout::Ranks(connect_rank(first, job, self.nccl_id_file.clone(), self.peer_timeout, max_ctas)?))
    }
}

/// This process's rank of an NCCL job (rank 0 of 1 without a launcher) on the GPU its rank
/// on this host takes (`first`, GPU 0 as opened, where that is the one), connected to the
/// others through `NCCL_COMM_ID` or `id_file`; `max_ctas`: see [`host::nccl::Bootstrap`].
pub fn connect_rank(
    first: &std::sync::Arc<host::cuda::Gpu>,
    job: Option<host::decomposition::LaunchRank>,
    id_file: Option<PathBuf>,
    peer_timeout: f64,
    max_ctas: Option<u32>,
) -> Result<host::nccl::Communicator> {
    host::nccl::check_library()?;
    let (rank, size) = job.map_or((0, 1), |j| (j.rank, j.size));
    if rank == 0 && size > 1 && host::resources::allowed_cpus() == Some(1) {
        eprintln!("{}", host::resources::ONE_CPU_ADVICE);
    }
    let ordinal = match job {
        Some(job) => host::decomposition::gpu_for_rank(
            &job,
            host::cuda::device_count()?,
            std::env::var_os("CUDA_VISIBLE_DEVICES").is_some(),
        )?,
        None => first.ordinal(),
    };
    let gpu = if ordinal == first.ordinal() { first.clone() } else { host::cuda::open_device(ordinal)? };
    let bootstrap = host::nccl::Bootstrap {
        id_file,
        timeout: std::time::Duration::from_secs_f64(peer_timeout),
        max_ctas,
    };
    Ok(host::nccl::Communicator::connect(gpu, rank, size, &bootstrap)?)
}

/// Physarum takes no `--gpus`/`--split`: its agents move anywhere on the plane each step and
/// deposit where they land, so a split would exchange agents, not halos; it runs on one GPU.
#[derive(Args, Debug)]
pub struct OneGpuArgs {
    /// Not for Physarum: its agents move anywhere each step (no halo to exchange), so it runs
    /// on one GPU.
    #[arg(long, value_name = "N")]
    pub gpus: Option<String>,
    /// Not for Physarum (see --gpus).
    #[arg(long, value_name = "P")]
    pub split: Option<String>,
}

impl OneGpuArgs {
    /// Refuses either option with the reason.
    pub fn check(&self) -> Result<()> {
        if self.gpus.is_some() || self.split.is_some() {
            bail!(
                "physarum runs on one GPU: its agents move anywhere on the plane each step, so there are no \
                 halos to exchange (--gpus and --split are for grayscott and heat)"
            );
        }
        Ok(())
    }
}

/// The seed of a run's random numbers.
#[derive(Args, Debug)]
pub struct SeedArgs {
    /// Seed of the random initial state (noise, positions, headings); runs are reproducible.
    #[arg(long, default_value_t = 1, allow_hyphen_values = true)]
    pub seed: u64,
}

/// `--steps` (every simulation): at least 1.
pub fn check_steps(steps: u32) -> Result<()> {
    if steps == 0 {
        bail!("--steps must be at least 1");
    }
    Ok(())
}

/// Refuses a non-finite `value` of `option`, or one beyond ±`max` (where the model would
/// leave float32), saying why.
pub fn at_most(option: &str, value: f64, max: f64, why: &str) -> Result<()> {
    if !value.is_finite() || value.abs() > max {
        bail!("{option} must be a finite number within ±{max:e}, got {value:e}: {why}");
    }
    Ok(())
}

/// The state a run saves and continues from: raw fields (`--save`), checkpoints
/// (`--checkpoint`) and a restart (`--resume`). `--steps` is the total step count, so a
/// resumed run does the steps left from its checkpoint's.
#[derive(Args, Debug)]
pub struct StateArgs {
    /// Write the final state as raw data, by extension: .npz (one archive) or .npy (one
    /// file per field, PATH's stem + _u, _v, ...); heat also .vti (VTK image, for ParaView).
    #[arg(long, value_name = "PATH")]
    pub save: Option<PathBuf>,
    /// Also write the state every N steps, numbered after --save: out_00000100.npz, ...
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub save_every: Option<u32>,
    /// Write a checkpoint of the whole state here at the end (and every --checkpoint-every
    /// steps), replacing the last one only once the new one is complete.
    #[arg(long, value_name = "PATH")]
    pub checkpoint: Option<PathBuf>,
    /// Steps between checkpoints.
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub checkpoint_every: Option<u32>,
    /// Continue from a checkpoint of this simulation with the same grid and parameters, up
    /// to --steps in all (the checkpoint's steps count towards them).
    #[arg(long, value_name = "PATH")]
    pub resume: Option<PathBuf>,
}

/// The summary's note on a resumed run: ` (resumed at step N)`, or nothing.
pub fn resumed(first: u64) -> String {
    if first > 0 { format!(" (resumed at step {first})") } else { String::new() }
}

/// What a simulation gives the state outputs.
pub trait State {
    /// Steps done since the initial state (the checkpoint's included).
    fn steps_done(&self) -> u64;
    /// The fields `--save` writes.
    fn fields(&mut self) -> host::Result<export::Fields>;
    fn save_checkpoint(&mut self, path: &Path) -> host::Result<PathBuf>;
    /// Whether this process writes the outputs. NCCL ranks other than 0 do not: they take
    /// part in gathering the fields to rank 0 (through [`State::fields`]) and write nothing.
    fn is_root(&self) -> bool {
        true
    }
}

impl StateArgs {
    /// Checks the options against each other and `--save`'s format against `formats` (the
    /// extensions this simulation writes).
    pub fn check(&self, formats: &[&str]) -> Result<()> {
        if self.save_every.is_some() && self.save.is_none() {
            bail!("--save-every needs --save PATH, after which the series is named (out_00000100.npz, ...)");
        }
        if self.checkpoint_every.is_some() && self.checkpoint.is_none() {
            bail!("--checkpoint-every needs --checkpoint PATH, the file it writes");
        }
        for (option, every) in
            [("--save-every", self.save_every), ("--checkpoint-every", self.checkpoint_every)]
        {
            if every == Some(0) {
                bail!("{option} must be at least 1");
            }
        }
        if let Some(path) = &self.save {
            let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
            if !ext.as_deref().is_some_and(|e| formats.contains(&e)) {
                bail!(
                    "--save {}: name the file .{} (the format goes by the extension)",
                    path.display(),
                    formats.join(", .")
                );
            }
        }
        Ok(())
    }

    /// The files asked for, for [`check_targets`].
    pub fn targets(&self) -> Vec<Target> {
        let mut targets = Vec::new();
        targets.extend(self.save.as_deref().map(|p| Target::file("--save", p)));
        targets.extend(self.checkpoint.as_deref().map(|p| Target::file("--checkpoint", p)));
        targets
    }

    /// Before any work: tries a temporary file beside each output (so an unwritable
    /// directory fails now), and reads `--resume`'s checkpoint, refusing a damaged file.
    pub fn prepare(&self) -> Result<Option<Checkpoint>> {
        for target in self.targets() {
            host::outfile::probe(&target.path).map_err(|e| anyhow::anyhow!("{}: {e}", target.option))?;
        }
        let Some(path) = &self.resume else { return Ok(None) };
        let checkpoint = Checkpoint::read(path).map_err(|e| anyhow::anyhow!("--resume: {e}"))?;
        Ok(Some(checkpoint))
    }

    /// After the checkpoint is restored (which refuses one of another simulation, grid or
    /// parameter set): refuses one already at or past `steps`, the total.
    pub fn check_resumed(&self, done: u64, steps: u32) -> Result<()> {
        if let Some(path) = &self.resume
            && done >= u64::from(steps)
        {
            bail!(
                "--resume {}: the checkpoint is at step {done}, and --steps {steps} is the total; ask for more steps",
                path.display()
            );
        }
        Ok(())
    }

    /// The steps to run at once from `done`: up to the next frame, save or checkpoint, or
    /// the end (`total`).
    pub fn next_chunk(&self, done: u64, total: u32, frame_every: u32) -> u32 {
        let next = |every: u32| (done / u64::from(every) + 1) * u64::from(every);
        let mut stop = u64::from(total).min(next(frame_every));
        for every in [self.save_every, self.checkpoint_every].into_iter().flatten() {
            stop = stop.min(next(every));
        }
        (stop - done) as u32
    }

    /// Writes what is due at the simulation's step: the numbered save and the checkpoint
    /// every so many steps.
    pub fn write_due(&self, sim: &mut impl State) -> Result<()> {
        let step = sim.steps_done();
        let due = |every: Option<u32>| every.is_some_and(|n| step.is_multiple_of(u64::from(n)));
        if let Some(path) = &self.save
            && due(self.save_every)
        {
            let fields = sim.fields()?;
            if sim.is_root() {
                export::save(&export::numbered(path, step), &fields)?;
            }
        }
        if let Some(path) = &self.checkpoint
            && due(self.checkpoint_every)
        {
            checkpoint_or_gather(sim, path)?;
        }
        Ok(())
    }

    /// Writes the final state (`--save`) and checkpoint (`--checkpoint`), once the run and
    /// its frame outputs are complete; returns the files written.
    pub fn write_final(&self, sim: &mut impl State) -> Result<Vec<PathBuf>> {
        let mut written = Vec::new();
        if let Some(path) = &self.save {
            let fields = sim.fields()?;
            if sim.is_root() {
                written.extend(export::save(path, &fields)?);
            }
        }
        if let Some(path) = &self.checkpoint {
            written.extend(checkpoint_or_gather(sim, path)?);
        }
        Ok(written)
    }
}

/// Rank 0 (or the only process) writes the checkpoint; other ranks send it their part (the
/// checkpoint's one gather of the fields).
fn checkpoint_or_gather(sim: &mut impl State, path: &Path) -> Result<Option<PathBuf>> {
    if sim.is_root() {
        return Ok(Some(sim.save_checkpoint(path)?));
    }
    sim.fields()?;
    Ok(None)
}
