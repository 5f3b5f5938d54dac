//! Frame outputs, shared by every simulation: the options (`--gif`, `--mp4`, `--png-dir`,
//! `--png`, `--frame-every`, `--fps`, `--palette`), their checks, and the writers.
//!
//! A run lists its output paths as [`Target`]s ([`OutputOptions::targets`], the state outputs'
//! and any of its own); [`check_targets`] validates them all, clashes between them included,
//! before anything is created. A new output kind is one field in [`OutputOptions`] (and its
//! flag in the command's twin, `host_cli::cli::driver_args::OutputArgs`) and one entry in
//! [`OutputOptions::targets`].

use std::{
    marker::PhantomData,
    path::{Path, PathBuf},
};

use crate::{
    error::{Result, invalid},
    render::{self, FrameWriter, Palette, mp4::Mp4Writer, output},
};

/// A simulation's defaults for the frame options: its name and the default file names,
/// frame rate, frame interval and palette (as a command line writes them: the command's
/// defaults, and [`OutputOptions::default`]'s).
pub trait FrameDefaults: Send + Sync + 'static {
    /// The simulation's name (a CLI subcommand, a model's command), also the name of its
    /// table in a settings file.
    const NAME: &'static str;
    /// The default `--gif` name.
    const GIF: &'static str;
    /// The default `--mp4` name.
    const MP4: &'static str;
    /// The default `--fps` (a number).
    const FPS: &'static str;
    /// The default `--frame-every` (a number).
    const FRAME_EVERY: &'static str;
    /// The default `--palette` (a palette's name).
    const PALETTE: &'static str;
    /// The program and its version that its pictures record as their software (a PNG's
    /// `Software`): the `rust-gpu-sim` command's unless a model's own program says otherwise
    /// (`concat!("barkley ", env!("CARGO_PKG_VERSION"))`).
    const SOFTWARE: &'static str = render::SOFTWARE;
}

/// GIF delays are whole hundredths of a second, and browsers play delays under 2 (above 50
/// frames per second) at about 10 frames per second.
pub const MAX_FPS: u32 = 50;

/// The smallest frame side OpenH264 encodes (it pads odd sides to 16 from 15; measured: 14
/// fails).
pub const MP4_MIN_SIDE: u32 = 15;

/// Where frames go, and how they look: what `--gif`, `--mp4`, `--png-dir`, `--png`,
/// `--frame-every`, `--fps` and `--palette` ask for. A command parses them with a parser of
/// its own (the `rust-gpu-sim` command and model crates: `host_cli::cli::driver_args::OutputArgs`,
/// on clap); [`Default`] is no output at `S`'s frame interval, rate and palette.
pub struct OutputOptions<S: FrameDefaults> {
    /// Write an animated GIF here.
    pub gif: Option<PathBuf>,
    /// Write an H.264 video in an MP4 container here, at `fps`, from the same frames as `gif`.
    pub mp4: Option<PathBuf>,
    /// Write numbered PNG frames (frame_00000.png, ...) into this directory: a new one (its
    /// parent must exist) or one holding only an earlier run's frames, which are replaced.
    pub png_dir: Option<PathBuf>,
    /// Write the final frame as a PNG here, with the run's settings.
    pub png: Option<PathBuf>,
    /// Steps between frames (a last frame is taken after the final step); at least 1.
    pub frame_every: u32,
    /// GIF frames per second, 1 to [`MAX_FPS`] (delays are whole hundredths of a second).
    pub fps: u32,
    /// Colour palette, by name ([`palette`]).
    pub palette: String,
    _simulation: PhantomData<fn() -> S>,
}

impl<S: FrameDefaults> Default for OutputOptions<S> {
    /// No output; `S`'s frame interval, rate and palette.
    ///
    /// # Panics
    /// If `S::FRAME_EVERY` or `S::FPS` is not a number.
    fn default() -> Self {
        let number = |text: &str, what: &str| {
            text.parse().unwrap_or_else(|_| panic!("FrameDefaults::{what} of {} is not a number", S::NAME))
        };
        Self {
            gif: None,
            mp4: None,
            png_dir: None,
            png: None,
            frame_every: number(S::FRAME_EVERY, "FRAME_EVERY"),
            fps: number(S::FPS, "FPS"),
            palette: S::PALETTE.to_owned(),
            _simulation: PhantomData,
        }
    }
}

impl<S: FrameDefaults> Clone for OutputOptions<S> {
    fn clone(&self) -> Self {
        Self {
            gif: self.gif.clone(),
            mp4: self.mp4.clone(),
            png_dir: self.png_dir.clone(),
            png: self.png.clone(),
            frame_every: self.frame_every,
            fps: self.fps,
            palette: self.palette.clone(),
            _simulation: PhantomData,
        }
    }
}

impl<S: FrameDefaults> std::fmt::Debug for OutputOptions<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutputOptions")
            .field("simulation", &S::NAME)
            .field("gif", &self.gif)
            .field("mp4", &self.mp4)
            .field("png_dir", &self.png_dir)
            .field("png", &self.png)
            .field("frame_every", &self.frame_every)
            .field("fps", &self.fps)
            .field("palette", &self.palette)
            .finish()
    }
}

/// Where a run writes: the option that named it, the path, whether it is a file or a
/// directory of frames, and the names it writes beside the path ([`Derived`]).
#[derive(Clone, Debug)]
pub struct Target {
    pub option: &'static str,
    pub path: PathBuf,
    pub dir: bool,
    pub derived: Derived,
}

/// The names an output writes beside its path, besides the path itself: what `--save` makes
/// of its name ([`crate::export::save`], [`crate::export::numbered`]). The one place that
/// knows them, for [`check_targets`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Derived {
    /// One `STEM_FIELD.npy` per field (a `.npy` save of several fields; field names are the
    /// simulation's, so any `STEM_*.npy` counts).
    pub per_field: bool,
    /// A numbered series `STEM_NNNNNNNN.EXT` (`--save-every`), each one per field where
    /// `per_field` (`STEM_NNNNNNNN_FIELD.npy`).
    pub series: bool,
}

impl Target {
    pub fn file(option: &'static str, path: &Path) -> Self {
        Self { option, path: path.to_owned(), dir: false, derived: Derived::default() }
    }

    /// A file that also writes the names `derived` says beside it.
    pub fn with_derived(option: &'static str, path: &Path, derived: Derived) -> Self {
        Self { derived, ..Self::file(option, path) }
    }

    /// What this output writes under the file name `name` beside its path, other than the
    /// path itself (`one s_FIELD.npy per field`), or `None` if it writes no such name.
    fn derives(&self, name: &std::ffi::OsStr) -> Option<String> {
        let (name, stem) = (name.to_str()?, self.path.file_stem()?.to_str()?);
        let rest = name.strip_prefix(stem)?.strip_prefix('_')?;
        if self.derived.per_field {
            let field = rest.strip_suffix(".npy")?;
            return (!field.is_empty()).then(|| match self.derived.series {
                true => format!("the series' {stem}_NNNNNNNN_FIELD.npy, one per field"),
                false => format!("one {stem}_FIELD.npy per field"),
            });
        }
        if self.derived.series {
            let step = match self.path.extension().and_then(|e| e.to_str()) {
                Some(ext) => rest.strip_suffix(ext)?.strip_suffix('.')?,
                None => rest,
            };
            let ext = self.path.extension().map_or(String::new(), |e| format!(".{}", e.to_string_lossy()));
            return (step.len() >= 8 && step.bytes().all(|b| b.is_ascii_digit()))
                .then(|| format!("the series {stem}_NNNNNNNN{ext}"));
        }
        None
    }
}

impl<S: FrameDefaults> OutputOptions<S> {
    /// Checks the frame options; returns the palette.
    pub fn check(&self) -> Result<&'static Palette> {
        if let Some(path) = &self.mp4 {
            crate::outfile::refuse_pipe("--mp4", path, "an MP4")?;
        }
        if self.frame_every == 0 {
            return Err(invalid!("--frame-every must be at least 1"));
        }
        if !(1..=MAX_FPS).contains(&self.fps) {
            return Err(invalid!(
                "--fps must be between 1 and {MAX_FPS}, got {}: GIF frame delays are whole hundredths of a \
                 second, and browsers play delays under 0.02 s at about 10 frames per second",
                self.fps
            ));
        }
        palette(&self.palette)
    }

    /// The frame outputs asked for, and `--png`.
    pub fn targets(&self) -> Vec<Target> {
        let mut targets = Vec::new();
        targets.extend(self.gif.as_deref().map(|p| Target::file("--gif", p)));
        targets.extend(self.mp4.as_deref().map(|p| Target::file("--mp4", p)));
        targets.extend(self.png_dir.as_deref().map(|p| Target { dir: true, ..Target::file("--png-dir", p) }));
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
            drop(crate::render::output::AtomicFile::create(path)?); // writable; written at the end
        }
        Ok(())
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
            return Err(invalid!(
                "--mp4: frames of {width}x{height} are too small for the H.264 encoder (OpenH264), which takes \
                 at least {MP4_MIN_SIDE} pixels a side; use --gif or --png-dir, or a larger grid"
            ));
        }
        let outputs = self.outputs();
        let images = if outputs.any() {
            let text = render::MadeBy { software: S::SOFTWARE, settings: text };
            Some(FrameWriter::with_text(&outputs, width, height, palette, Some(text))?)
        } else {
            None
        };
        let video = match &self.mp4 {
            Some(path) => {
                let video = Mp4Writer::create(path, width, height, self.fps, palette)?;
                if !crate::render::mp4::openh264_simd() {
                    note(
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
    /// drops the simulation and its GPU in it): releasing a GPU context takes 50–75 ms
    /// (`scripts/cuda-floor.py`), which so overlaps the encoders' last frames instead of
    /// following them. In a program that hands the driver's teardown to a child at exit
    /// ([`crate::cuda::ExitTeardown`]) `release` is not run and what it holds is left to exit
    /// ([`crate::cuda::release_or_let_go`], which says why). Returns what [`Frames::finish`]
    /// returns.
    pub fn finish_while(self, release: impl FnOnce()) -> Result<Vec<PathBuf>> {
        let frames = std::sync::Arc::new(std::sync::Mutex::new(Some(self)));
        let handed = frames.clone();
        let spawned =
            crate::memory::spawn(std::thread::Builder::new().name("outputs-finishing".into()), move || {
                let frames = handed.lock().unwrap_or_else(|p| p.into_inner()).take();
                frames.map(Frames::finish)
            });
        let Ok(finishing) = spawned else {
            // No thread to be had (an address-space limit): finish here, then release.
            let frames = frames.lock().unwrap_or_else(|p| p.into_inner()).take();
            let written = frames.map_or_else(|| Ok(Vec::new()), Frames::finish);
            crate::cuda::release_or_let_go(release);
            return written;
        };
        crate::cuda::release_or_let_go(release);
        match finishing.join() {
            Ok(Some(written)) => written,
            Ok(None) => Ok(Vec::new()),
            Err(_) => Err(invalid!("the output encoder panicked")),
        }
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
        invalid!("unknown palette '{name}'; valid palettes: {}", render::palette::palette_names())
    })
}

/// Validates every output of a run before anything is created or simulated: first clashes
/// (two options naming the same path, one naming a file another derives from its own name
/// ([`Derived`]), or a file inside a frame directory), then each path on its own
/// ([`output::check_target`], [`render::check_png_dir`]).
pub fn check_targets(targets: &[Target]) -> Result<()> {
    let keys: Vec<PathBuf> = targets.iter().map(|t| identity(&t.path)).collect();
    // Each path's directory as the file system sees it, and its own name (not resolved: a
    // derived name is written beside the path as given).
    let beside: Vec<(PathBuf, Option<&std::ffi::OsStr>)> =
        targets.iter().map(|t| (identity(crate::outfile::parent_dir(&t.path)), t.path.file_name())).collect();
    for (i, a) in targets.iter().enumerate() {
        for (j, b) in targets.iter().enumerate().skip(i + 1) {
            if keys[i] == keys[j] {
                return Err(invalid!(
                    "{} and {} both name {}; give each output its own path",
                    a.option,
                    b.option,
                    b.path.display()
                ));
            }
        }
        for (j, b) in targets.iter().enumerate() {
            let derived = match (&beside[j], i != j && beside[i].0 == beside[j].0) {
                ((_, Some(name)), true) => a.derives(name),
                _ => None,
            };
            if let Some(derived) = derived {
                return Err(invalid!(
                    "{} {} is a name that {} {} writes ({derived}); give each output its own path",
                    b.option,
                    b.path.display(),
                    a.option,
                    a.path.display()
                ));
            }
        }
        for (j, b) in targets.iter().enumerate() {
            if b.dir && !a.dir && i != j && keys[i].starts_with(&keys[j]) {
                return Err(invalid!(
                    "{} {} is inside {} {}, which holds only frames; write it elsewhere",
                    a.option,
                    a.path.display(),
                    b.option,
                    b.path.display()
                ));
            }
        }
    }
    for target in targets {
        if target.dir {
            render::check_png_dir(&target.path)
        } else {
            output::check_target(&target.path).map(|_| ())
        }
        .map_err(|e| invalid!("{}: {e}", target.option))?;
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

/// Writes `note: {message}` to stderr (ignoring a failing stderr).
fn note(message: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr().lock(), "note: {message}");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the release holds is dropped, run or not, where no child takes the driver's
    /// teardown (a library's caller): finishing never keeps a simulation it was given.
    #[test]
    fn finishing_drops_what_the_release_holds_without_a_hand_over() {
        struct Held<'a>(&'a std::sync::atomic::AtomicU32);
        impl Drop for Held<'_> {
            fn drop(&mut self) {
                self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        }
        let drops = std::sync::atomic::AtomicU32::new(0);
        let held = Held(&drops);
        let written = Frames { images: None, video: None }.finish_while(move || drop(held)).unwrap();
        assert!(written.is_empty());
        assert_eq!(drops.load(std::sync::atomic::Ordering::Relaxed), 1, "the simulation was kept");
    }
}
