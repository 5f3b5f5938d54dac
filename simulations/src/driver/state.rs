//! State outputs, shared by every simulation: `--save` (and `--save-every`),
//! `--checkpoint` (and `--checkpoint-every`) and `--resume`, and when each is due.

use std::path::{Path, PathBuf};

use super::frames::{Derived, Target};
use crate::{
    checkpoint::Checkpoint,
    error::{Result, invalid},
    export,
};

/// The state a run saves and continues from: raw fields (`--save`), checkpoints
/// (`--checkpoint`) and a restart (`--resume`). `--steps` is the total step count, so a
/// resumed run does the steps left from its checkpoint's. A command parses them with a parser
/// of its own (the `rust-gpu-sim` command and model crates: `host_cli::cli::driver_args::StateArgs`,
/// on clap); [`Default`] is none of them.
#[derive(Clone, Debug, Default)]
pub struct StateOptions {
    /// Write the final state as raw data here, by extension: .npz (one archive) or .npy (one
    /// file per field, the stem + _u, _v, ...), or another the simulation writes (heat: .vti).
    pub save: Option<PathBuf>,
    /// Also write the state every N steps (at least 1), numbered after `save`:
    /// out_00000100.npz, ...
    pub save_every: Option<u32>,
    /// Write a checkpoint of the whole state here at the end (and every `checkpoint_every`
    /// steps), replacing the last one only once the new one is complete.
    pub checkpoint: Option<PathBuf>,
    /// Steps between checkpoints (at least 1).
    pub checkpoint_every: Option<u32>,
    /// Continue from a checkpoint of this simulation with the same grid and parameters, up
    /// to the run's steps in all (the checkpoint's steps count towards them).
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
    fn fields(&mut self) -> Result<export::Fields>;
    fn save_checkpoint(&mut self, path: &Path) -> Result<PathBuf>;
    /// Whether this process writes the outputs. NCCL ranks other than 0 do not: they take
    /// part in gathering the fields to rank 0 (through [`State::fields`]) and write nothing.
    fn is_root(&self) -> bool {
        true
    }
}

impl StateOptions {
    /// Checks the options against each other and `--save`'s format against `formats` (the
    /// extensions this simulation writes).
    pub fn check(&self, formats: &[&str]) -> Result<()> {
        if self.save_every.is_some() && self.save.is_none() {
            return Err(invalid!(
                "--save-every needs --save PATH, after which the series is named (out_00000100.npz, ...)"
            ));
        }
        if self.checkpoint_every.is_some() && self.checkpoint.is_none() {
            return Err(invalid!("--checkpoint-every needs --checkpoint PATH, the file it writes"));
        }
        for (option, every) in
            [("--save-every", self.save_every), ("--checkpoint-every", self.checkpoint_every)]
        {
            if every == Some(0) {
                return Err(invalid!("{option} must be at least 1"));
            }
        }
        if let Some(path) = &self.save {
            let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
            if !ext.as_deref().is_some_and(|e| formats.contains(&e)) {
                return Err(invalid!(
                    "--save {}: name the file .{} (the format goes by the extension)",
                    path.display(),
                    formats.join(", .")
                ));
            }
            if ext.as_deref() == Some("npz") {
                crate::outfile::refuse_pipe("--save", path, "a .npz archive")?;
            }
        }
        Ok(())
    }

    /// The files asked for, for [`check_targets`](super::check_targets).
    pub fn targets(&self) -> Vec<Target> {
        let mut targets = Vec::new();
        targets.extend(self.save.as_deref().map(|p| {
            let npy = p.extension().is_some_and(|e| e.eq_ignore_ascii_case("npy"));
            let derived = Derived { per_field: npy, series: self.save_every.is_some() };
            Target::with_derived("--save", p, derived)
        }));
        targets.extend(self.checkpoint.as_deref().map(|p| Target::file("--checkpoint", p)));
        targets
    }

    /// Before any work: tries a temporary file beside each output (so an unwritable
    /// directory fails now), and reads `--resume`'s checkpoint, refusing a damaged file.
    pub fn prepare(&self) -> Result<Option<Checkpoint>> {
        for target in self.targets() {
            crate::outfile::probe(&target.path).map_err(|e| invalid!("{}: {e}", target.option))?;
        }
        let Some(path) = &self.resume else { return Ok(None) };
        let checkpoint = Checkpoint::read(path).map_err(|e| invalid!("--resume: {e}"))?;
        Ok(Some(checkpoint))
    }

    /// After the checkpoint is restored (which refuses one of another simulation, grid or
    /// parameter set): refuses one already at or past `steps`, the total.
    pub fn check_resumed(&self, done: u64, steps: u32) -> Result<()> {
        if let Some(path) = &self.resume
            && done >= u64::from(steps)
        {
            return Err(invalid!(
                "--resume {}: the checkpoint is at step {done}, and --steps {steps} is the total; ask for more steps",
                path.display()
            ));
        }
        Ok(())
    }

    /// Writes what is due at the simulation's step: the numbered save and the checkpoint
    /// every so many steps.
    pub fn write_due(&self, sim: &mut (impl State + ?Sized)) -> Result<()> {
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
fn checkpoint_or_gather(sim: &mut (impl State + ?Sized), path: &Path) -> Result<Option<PathBuf>> {
    if sim.is_root() {
        return Ok(Some(sim.save_checkpoint(path)?));
    }
    sim.fields()?;
    Ok(None)
}
