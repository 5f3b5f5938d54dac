//! A command's run: a [`DrivenSimulation`] driven to its total step count through the one step
//! loop ([`StepLoop`]: chunks, frames when due, the state outputs when due), with `--resume`
//! before it, a progress bar, and `--png` and the final state at the end.

use std::{path::PathBuf, time::Instant};

use super::{
    console::progress_bar,
    frames::{FrameDefaults, Frames, OutputOptions, Target, check_targets},
    simulation::DrivenSimulation,
    state::StateOptions,
    step_loop::{FramesDue, LoopHooks, StepLoop},
};
use crate::{checkpoint::Checkpoint, error::Result, render::Palette};

/// What a driven run did.
#[derive(Debug)]
pub struct Report {
    /// The step it started from (a resumed checkpoint's, else 0).
    pub first: u64,
    /// Frames written (0 on ranks other than 0).
    pub frames: u32,
    /// The files written, in order.
    pub written: Vec<PathBuf>,
    /// From [`Driver::open`] to the last output written.
    pub seconds: f64,
}

/// One run's outputs, checked and opened before the simulation is built (so a bad option or
/// an unwritable path fails before any work), then the step loop ([`Driver::run`]).
pub struct Driver<F: FrameDefaults> {
    output: OutputOptions<F>,
    state: StateOptions,
    palette: &'static Palette,
    settings: String,
    size: (u32, u32),
    frames: Option<Frames>,
    resume: Option<Checkpoint>,
    root: bool,
    started: Instant,
    /// Where the state is written (`--save`, `--checkpoint`): the copy it takes is counted by
    /// the host memory checks of the simulation built meanwhile.
    _state_copy: Option<crate::memory::StateCopy>,
}

impl<F: FrameDefaults> Driver<F> {
    /// Checks every option and output path (`targets`: the run's own besides the frame and
    /// state outputs; `formats`: the `--save` extensions it writes) and reads `--resume`.
    /// `output` and `state` are the options, or what converts into them (a command's parsed
    /// arguments: `&host_cli::cli::driver_args::OutputArgs<F>` and `&StateArgs`).
    pub fn new(
        output: impl Into<OutputOptions<F>>,
        state: impl Into<StateOptions>,
        formats: &[&str],
        targets: Vec<Target>,
    ) -> Result<Self> {
        let (output, state) = (output.into(), state.into());
        let palette = output.check()?;
        let mut all = output.targets();
        all.extend(state.targets());
        all.extend(targets);
        check_targets(&all)?;
        state.check(formats)?;
        let resume = state.prepare()?;
        let copies = state.save.is_some() || state.checkpoint.is_some();
        Ok(Self {
            _state_copy: copies.then(crate::memory::promise_state_copy),
            output,
            state,
            palette,
            settings: String::new(),
            size: (0, 0),
            frames: None,
            resume,
            root: true,
            started: Instant::now(),
        })
    }

    /// On the writing process (`root`), opens the frame outputs for frames of `size`,
    /// recording `settings` where the format has room for it (GIF, PNG).
    pub fn open(mut self, size: (u32, u32), root: bool, settings: String) -> Result<Self> {
        if root {
            self.frames = self.output.open(size.0, size.1, self.palette, &settings)?;
            self.output.check_png()?;
        }
        self.started = Instant::now();
        Ok(Self { size, root, settings, ..self })
    }

    /// The checkpoint `--resume` named, for a simulation that restores it itself (instead of
    /// through [`Driver::run`]).
    pub fn take_resume(&mut self) -> Option<Checkpoint> {
        self.resume.take()
    }

    /// Runs `sim` to `steps` steps in all (resuming `--resume`'s checkpoint first): chunks up
    /// to the next frame, save or checkpoint; a progress bar counting `unit` on the writing
    /// process; then `--png`'s frame and `--save` and `--checkpoint`. The frame outputs are
    /// finished by [`Finishing`].
    pub fn run(self, sim: &mut impl DrivenSimulation, steps: u32, unit: &str) -> Result<Finishing> {
        self.run_with(sim, steps, unit, |_| Ok(()))
    }

    /// [`Driver::run`], calling `after_chunk` with the steps done after each chunk.
    pub fn run_with(
        mut self,
        sim: &mut impl DrivenSimulation,
        steps: u32,
        unit: &str,
        after_chunk: impl FnMut(u64) -> Result<()>,
    ) -> Result<Finishing> {
        if let Some(checkpoint) = self.resume.take() {
            sim.restore(checkpoint)?;
        }
        self.state.check_resumed(sim.steps_done(), steps)?;
        let first = sim.steps_done();
        let progress = progress_bar(steps - first as u32, unit);
        if !self.root {
            progress.set_draw_target(indicatif::ProgressDrawTarget::hidden());
        }
        let frames = if self.output.any() { FramesDue::Outputs } else { FramesDue::Never };
        let step_loop =
            StepLoop::new(u64::from(steps)).every(self.output.frame_every).frames(frames).state(&self.state);
        let mut hooks = DriverHooks { writer: &mut self.frames, taken: 0, after_chunk, progress: &progress };
        step_loop.run(sim, &mut hooks)?;
        let frames = hooks.taken;
        progress.finish_and_clear();
        crate::timeline::mark("simulated, frames handed to the encoders");
        // --png's frame: every process takes part (a gather); rank 0 writes it.
        let last = match &self.output.png {
            Some(_) => Some(sim.frame()?),
            None => None,
        };
        let saved = self.state.write_final(sim)?;
        let png = match (last, &self.output.png, self.root) {
            (Some(levels), Some(path), true) => Some((path.clone(), levels)),
            _ => None,
        };
        Ok(Finishing {
            frames: self.frames.take(),
            png,
            palette: self.palette,
            size: self.size,
            settings: std::mem::take(&mut self.settings),
            software: F::SOFTWARE,
            saved,
            first,
            taken: frames,
            started: self.started,
        })
    }
}

/// What the driver does between chunks: `after_chunk`, the progress bar, and the frames to
/// the frame outputs (on the writing process; the others take part in gathering them).
struct DriverHooks<'a, A> {
    writer: &'a mut Option<Frames>,
    taken: u32,
    after_chunk: A,
    progress: &'a indicatif::ProgressBar,
}

impl<A: FnMut(u64) -> Result<()>> LoopHooks for DriverHooks<'_, A> {
    fn stepped(&mut self, done: u64, steps: u32) -> Result<()> {
        (self.after_chunk)(done)?;
        self.progress.inc(u64::from(steps));
        Ok(())
    }

    fn frame(&mut self, levels: Vec<u8>) -> Result<()> {
        if let Some(writer) = self.writer {
            writer.push(levels)?;
            self.taken += 1;
        }
        Ok(())
    }
}

/// A run whose steps are done and whose state outputs are written, with its frame outputs
/// still encoding: [`Finishing::finish`] waits for them, [`Finishing::finish_while`] lets
/// the caller release the simulation meanwhile.
pub struct Finishing {
    frames: Option<Frames>,
    png: Option<(PathBuf, Vec<u8>)>,
    palette: &'static Palette,
    size: (u32, u32),
    settings: String,
    /// What `--png` records as its software ([`FrameDefaults::SOFTWARE`]).
    software: &'static str,
    saved: Vec<PathBuf>,
    first: u64,
    taken: u32,
    started: Instant,
}

impl Finishing {
    /// Finishes the frame outputs, then writes `--png`.
    pub fn finish(self) -> Result<Report> {
        self.finish_while(|| {})
    }

    /// [`Finishing::finish`], running `release` meanwhile (dropping the simulation and its
    /// GPU: a context's release overlaps the encoders' last frames), or leaving what it holds
    /// to exit where a child takes the driver's teardown ([`Frames::finish_while`]).
    pub fn finish_while(self, release: impl FnOnce()) -> Result<Report> {
        let mut written = match self.frames {
            Some(frames) => frames.finish_while(release)?,
            None => {
                crate::cuda::release_or_let_go(release);
                Vec::new()
            }
        };
        crate::timeline::mark("outputs finished");
        if let Some((path, levels)) = &self.png {
            let (width, height) = self.size;
            crate::render::write_png_with_text(
                path,
                levels,
                width,
                height,
                self.palette,
                Some(crate::render::MadeBy { software: self.software, settings: &self.settings }),
            )?;
            written.push(path.clone());
        }
        written.extend(self.saved);
        Ok(Report {
            first: self.first,
            frames: self.taken,
            written,
            seconds: self.started.elapsed().as_secs_f64(),
        })
    }
}
