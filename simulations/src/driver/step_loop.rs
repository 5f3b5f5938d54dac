//! The one step loop: [`StepLoop`] takes a [`DrivenSimulation`] to a target step count in chunks,
//! and is the one place that decides how far each chunk goes and what follows it (the frame
//! when one is due, else waiting for the steps; then the state outputs due). The command's
//! [`Driver`](super::Driver) and `serve`'s sessions both run through it; what differs between
//! them is said by [`LoopHooks`] between chunks (a stop flag, a slice limit, a lock, a
//! progress bar) and by [`FramesDue`].

use super::{simulation::DrivenSimulation, state::StateOptions};
use crate::error::Result;

/// Which frames a [`StepLoop`] takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FramesDue {
    /// None (each chunk ends by waiting for its steps).
    Never,
    /// The frame outputs': at every multiple of the interval ([`StepLoop::every`]) and at the
    /// target, taken through [`DrivenSimulation::take_frame`]; those that come back later are
    /// collected as they are ready, and all of them at the end.
    Outputs,
    /// At the target only, taken now through [`DrivenSimulation::frame`]: a live view's newest
    /// frame.
    AtTarget,
}

/// What a caller of [`StepLoop::run`] does between chunks and with the frames.
pub trait LoopHooks {
    /// Before each chunk, with the steps done: the most steps the chunk may run (at least 1
    /// is run), or `None` to stop the loop there. Default: no limit.
    fn limit(&mut self, _done: u64) -> Option<u32> {
        Some(u32::MAX)
    }
    /// Right after a chunk's `steps` are queued (on a GPU they may still run), before its
    /// frame and state outputs, with the steps now done. Default: nothing.
    fn stepped(&mut self, _done: u64, _steps: u32) -> Result<()> {
        Ok(())
    }
    /// A frame that was due, as palette levels, oldest first.
    fn frame(&mut self, levels: Vec<u8>) -> Result<()>;
}

/// A simulation's way to a target step count: chunks up to the next frame, save, checkpoint
/// or the target, and what is due after each.
#[derive(Clone, Copy, Debug)]
pub struct StepLoop<'a> {
    target: u64,
    every: Option<u32>,
    frames: FramesDue,
    state: Option<&'a StateOptions>,
}

impl<'a> StepLoop<'a> {
    /// To `target` steps in all, in one chunk, with no frames and no state outputs.
    pub fn new(target: u64) -> Self {
        Self { target, every: None, frames: FramesDue::Never, state: None }
    }

    /// Chunks also end at every multiple of `interval` (at least 1; the frame interval), where
    /// [`FramesDue::Outputs`] takes its frames.
    pub fn every(self, interval: u32) -> Self {
        Self { every: Some(interval.max(1)), ..self }
    }

    /// Takes the frames `frames` says.
    pub fn frames(self, frames: FramesDue) -> Self {
        Self { frames, ..self }
    }

    /// Chunks also end at every `--save-every` and `--checkpoint-every`, where those are
    /// written.
    pub fn state(self, state: &'a StateOptions) -> Self {
        Self { state: Some(state), ..self }
    }

    /// The steps the chunk from `done` runs: up to the next multiple of the interval, save
    /// or checkpoint, or the target, and at most `limit` (but at least 1).
    pub fn next_chunk(&self, done: u64, limit: u32) -> u32 {
        let next = |every: u32| (done / u64::from(every) + 1) * u64::from(every);
        let state = self.state.map_or([None, None], |s| [s.save_every, s.checkpoint_every]);
        let stop = [self.every].into_iter().chain(state).flatten().map(next).fold(self.target, u64::min);
        (stop.saturating_sub(done)).min(u64::from(limit)).max(1) as u32
    }

    /// Steps `sim` to the target, calling `hooks` between chunks and with the frames due.
    /// `Ok(true)` when the target is reached; `Ok(false)` when [`LoopHooks::limit`] stopped
    /// the loop first.
    pub fn run<S: DrivenSimulation + ?Sized>(&self, sim: &mut S, hooks: &mut impl LoopHooks) -> Result<bool> {
        while sim.steps_done() < self.target {
            let Some(limit) = hooks.limit(sim.steps_done()) else { return Ok(false) };
            self.chunk(sim, limit, hooks)?;
        }
        if self.frames == FramesDue::Outputs {
            for levels in sim.collect_frames(true)? {
                hooks.frame(levels)?;
            }
        }
        Ok(true)
    }

    /// One chunk of at most `limit` steps, then what is due after it.
    fn chunk<S: DrivenSimulation + ?Sized>(
        &self,
        sim: &mut S,
        limit: u32,
        hooks: &mut impl LoopHooks,
    ) -> Result<()> {
        let steps = self.next_chunk(sim.steps_done(), limit);
        sim.step(steps)?;
        let done = sim.steps_done();
        hooks.stepped(done, steps)?;
        let at_interval = self.every.is_some_and(|every| done.is_multiple_of(u64::from(every)));
        match self.frames {
            // Every process of a job takes the frames (gathered to rank 0).
            FramesDue::Outputs if done == self.target || at_interval => {
                if let Some(levels) = sim.take_frame()? {
                    hooks.frame(levels)?;
                }
                for levels in sim.collect_frames(false)? {
                    hooks.frame(levels)?;
                }
            }
            FramesDue::AtTarget if done == self.target => hooks.frame(sim.frame()?)?,
            _ => sim.synchronize()?,
        }
        if let Some(state) = self.state {
            state.write_due(sim)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::{checkpoint::Checkpoint, driver::State, error::invalid, export::Fields};

    /// A simulation that records what the loop asks of it; its frame is its step count.
    #[derive(Default)]
    struct Recording {
        done: u64,
        chunks: Vec<u32>,
        waits: u32,
    }

    impl State for Recording {
        fn steps_done(&self) -> u64 {
            self.done
        }
        fn fields(&mut self) -> Result<Fields> {
            Err(invalid!("no fields"))
        }
        fn save_checkpoint(&mut self, _path: &Path) -> Result<PathBuf> {
            Err(invalid!("no checkpoints"))
        }
    }

    impl DrivenSimulation for Recording {
        fn step(&mut self, steps: u32) -> Result<()> {
            self.chunks.push(steps);
            self.done += u64::from(steps);
            Ok(())
        }
        fn synchronize(&mut self) -> Result<()> {
            self.waits += 1;
            Ok(())
        }
        fn frame_size(&self) -> (u32, u32) {
            (1, 1)
        }
        fn frame(&mut self) -> Result<Vec<u8>> {
            Ok(vec![self.done as u8])
        }
        fn restore(&mut self, _checkpoint: Checkpoint) -> Result<()> {
            Ok(())
        }
        fn describe(&self) -> String {
            "a recording".into()
        }
    }

    /// Hooks that allow `limit` steps a chunk for `chunks` chunks, and keep the frames.
    struct Keep {
        limit: u32,
        chunks: u32,
        frames: Vec<u8>,
    }

    impl LoopHooks for Keep {
        fn limit(&mut self, _done: u64) -> Option<u32> {
            self.chunks = self.chunks.checked_sub(1)?;
            Some(self.limit)
        }
        fn frame(&mut self, levels: Vec<u8>) -> Result<()> {
            self.frames.extend(levels);
            Ok(())
        }
    }

    #[test]
    fn the_outputs_frames_come_at_the_interval_and_the_target() {
        let state = StateOptions { save_every: Some(30), ..Default::default() };
        let mut sim = Recording::default();
        let mut hooks = Keep { limit: u32::MAX, chunks: u32::MAX, frames: Vec::new() };
        let steps = StepLoop::new(110).every(25).frames(FramesDue::Outputs).state(&state);
        assert!(steps.run(&mut sim, &mut hooks).unwrap());
        assert_eq!(sim.chunks, [25, 5, 20, 10, 15, 15, 10, 10]);
        assert_eq!(hooks.frames, [25, 50, 75, 100, 110]);
        assert_eq!(sim.waits, 3, "the chunks with no frame wait for their steps");
    }

    #[test]
    fn a_live_frame_comes_at_the_target_and_hooks_limit_or_stop_the_chunks() {
        let mut sim = Recording { done: 3, ..Default::default() };
        let mut hooks = Keep { limit: 7, chunks: u32::MAX, frames: Vec::new() };
        let steps = StepLoop::new(23).frames(FramesDue::AtTarget);
        assert!(steps.run(&mut sim, &mut hooks).unwrap());
        assert_eq!((sim.chunks.as_slice(), hooks.frames.as_slice()), ([7, 7, 6].as_slice(), [23].as_slice()));

        let mut hooks = Keep { limit: 4, chunks: 2, frames: Vec::new() };
        let steps = StepLoop::new(43).frames(FramesDue::AtTarget);
        assert!(!steps.run(&mut sim, &mut hooks).unwrap(), "stopped before the target");
        assert_eq!((sim.done, hooks.frames.len()), (31, 0));
    }

    #[test]
    fn chunks_end_at_the_interval_the_state_outputs_and_the_target() {
        let state = StateOptions { save_every: Some(30), checkpoint_every: Some(70), ..Default::default() };
        let steps = StepLoop::new(100).every(25).state(&state);
        let mut done = 0;
        let mut ends = Vec::new();
        while done < 100 {
            done += u64::from(steps.next_chunk(done, u32::MAX));
            ends.push(done);
        }
        assert_eq!(ends, [25, 30, 50, 60, 70, 75, 90, 100]);
        assert_eq!(steps.next_chunk(0, 7), 7, "a limit shortens a chunk");
        assert_eq!(StepLoop::new(40).next_chunk(12, 0), 1, "a chunk runs at least one step");
    }
}
