//! The one step loop: a [`Simulation`] driven to its total step count in chunks, frames
//! when due, the state outputs when due, `--png` and the final state at the end.

use std::{path::PathBuf, time::Instant};

use super::{
    console::progress_bar,
    frames::{FrameDefaults, Frames, OutputArgs, Target, check_targets},
    state::{State, StateArgs},
};
use crate::{checkpoint::Checkpoint, error::Result, render::Palette};

/// What the driver needs of a simulation beyond its state ([`State`]).
pub trait Simulation: State {
    /// Queues `steps` steps (on a GPU they may still run when this returns).
    fn step(&mut self, steps: u32) -> Result<()>;
    /// Waits for the queued steps (a chunk that ends with no frame).
    fn synchronize(&mut self) -> Result<()> {
        Ok(())
    }
    /// The frame's width and height in pixels.
    fn frame_size(&self) -> (u32, u32);
    /// The current frame as palette levels, one byte per pixel, row by row. Every process of
    /// a job calls it (the processes gather to rank 0); other ranks may return nothing.
    fn frame(&mut self) -> Result<Vec<u8>>;
    /// Continues from `checkpoint`, refusing one of another simulation, grid or parameters.
    fn restore(&mut self, checkpoint: Checkpoint) -> Result<()>;
    /// Where and how it runs, for a summary line (`cuda fused on NVIDIA H200`).
    fn describe(&self) -> String;
}

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
pub struct Driver<'a, F: FrameDefaults> {
    output: &'a OutputArgs<F>,
    state: &'a StateArgs,
    palette: &'static Palette,
    settings: String,
    size: (u32, u32),
    frames: Option<Frames>,
    resume: Option<Checkpoint>,
    root: bool,
    started: Instant,
}

impl<'a, F: FrameDefaults> Driver<'a, F> {
    /// Checks every option and output path (`targets`: the run's own besides the frame and
    /// state outputs; `formats`: the `--save` extensions it writes) and reads `--resume`.
    pub fn new(
        output: &'a OutputArgs<F>,
        state: &'a StateArgs,
        formats: &[&str],
        targets: Vec<Target>,
    ) -> Result<Self> {
        let palette = output.check()?;
        let mut all = output.targets();
        all.extend(state.targets());
        all.extend(targets);
        check_targets(&all)?;
        state.check(formats)?;
        let resume = state.prepare()?;
        Ok(Self {
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
    /// process; then `--png`, `--save` and `--checkpoint`.
    pub fn run(mut self, sim: &mut impl Simulation, steps: u32, unit: &str) -> Result<Report> {
        if let Some(checkpoint) = self.resume.take() {
            sim.restore(checkpoint)?;
        }
        self.state.check_resumed(sim.steps_done(), steps)?;
        let first = sim.steps_done();
        let progress = progress_bar(steps - first as u32, unit);
        if !self.root {
            progress.set_draw_target(indicatif::ProgressDrawTarget::hidden());
        }
        let (every, any) = (self.output.frame_every, self.output.any());
        let mut frames = 0u32;
        while sim.steps_done() < u64::from(steps) {
            let chunk = self.state.next_chunk(sim.steps_done(), steps, every);
            sim.step(chunk)?;
            let done = sim.steps_done();
            // Every process of a job takes the frames (gathered to rank 0).
            if any && (done == u64::from(steps) || done.is_multiple_of(u64::from(every))) {
                let levels = sim.frame()?;
                if let Some(writer) = &mut self.frames {
                    writer.push(levels)?;
                    frames += 1;
                }
            } else {
                sim.synchronize()?;
            }
            self.state.write_due(sim)?;
            progress.inc(u64::from(chunk));
        }
        progress.finish_and_clear();
        let mut written = match self.frames.take() {
            Some(writer) => writer.finish()?,
            None => Vec::new(),
        };
        written.extend(self.state.write_final(sim)?);
        if self.output.png.is_some() {
            // Every process takes the frame (a gather); rank 0 writes it.
            let levels = sim.frame()?;
            if self.root {
                let (width, height) = self.size;
                written.extend(self.output.write_png(
                    &levels,
                    width,
                    height,
                    self.palette,
                    &self.settings,
                )?);
            }
        }
        Ok(Report { first, frames, written, seconds: self.started.elapsed().as_secs_f64() })
    }
}
