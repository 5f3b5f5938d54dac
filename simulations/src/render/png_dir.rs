//! `--png-dir`: a directory of numbered PNG frames (`frame_00000.png`, ...) that appears
//! only when the run completes, replacing the frames of an earlier run, and is left as it was
//! by a run that fails or is interrupted.
//!
//! On Linux the encoded frames are appended to one anonymous spill file (`O_TMPFILE`, no
//! name at all) while the run goes on; only when it completes does each frame get a file of
//! its own: written anonymously, copied out of the spill file (`copy_file_range` where the
//! kernel offers it) and linked into place. So even SIGKILL or a power cut during the run
//! leaves the directory exactly as it was: a directory the run would create does not exist
//! before that moment (the spill file lives in its parent), and no frame of the run has a
//! name. One spill file holds any number of frames, where an anonymous file per frame would
//! need one open descriptor per frame until the end.
//!
//! Putting the frames in place takes a moment (see docs/reliability.md for a measurement):
//! SIGINT, SIGTERM and SIGHUP wait until it is done; a SIGKILL or power cut in it leaves
//! complete frame files only, but possibly this run's first frames beside the earlier run's
//! later ones.
//!
//! Where the file system has no `O_TMPFILE` (or `/proc` is not mounted, or
//! `RUST_GPU_SIM_NAMED_TEMPORARIES=1`), the frames are staged as files in a named temporary
//! directory `.tmpXXXXXX` inside the target and moved in at the end: signals remove it, a
//! SIGKILL can leave it behind.

use std::{
    collections::HashSet,
    fs::File,
    io::{ErrorKind, Read, Seek, SeekFrom, Write},
    path::{Path, PathBuf},
};

use rayon::prelude::*;

use super::output::{self, Staging, describe_io};
use crate::error::{Error, Result};

/// Whether `name` is a frame this writer writes (`frame_00042.png`).
fn is_frame_name(name: &str) -> bool {
    name.strip_prefix("frame_")
        .and_then(|rest| rest.strip_suffix(".png"))
        .is_some_and(|digits| digits.len() >= 5 && digits.bytes().all(|b| b.is_ascii_digit()))
}

/// The name of frame `index`.
fn frame_name(index: usize) -> String {
    format!("frame_{index:05}.png")
}

/// Checks, without touching anything, that `dir` can take PNG frames: an existing directory
/// holding only frames of an earlier run (they are replaced), or a new one whose parent
/// exists.
pub fn check_png_dir(dir: &Path) -> Result<()> {
    let fail = |reason: String| Error::Output { path: dir.to_owned(), reason };
    match std::fs::metadata(dir) {
        Ok(meta) if !meta.is_dir() => Err(fail("it exists and is not a directory".into())),
        Ok(_) => {
            let entries = std::fs::read_dir(dir).map_err(|e| fail(describe_io(&e)))?;
            for entry in entries {
                let entry = entry.map_err(|e| fail(describe_io(&e)))?;
                let name = entry.file_name();
                if !name.to_str().is_some_and(is_frame_name) {
                    return Err(fail(format!(
                        "it holds {} besides frames; --png-dir takes a new directory, or one with only \
                         the frame_*.png files of an earlier run (which are replaced)",
                        name.to_string_lossy()
                    )));
                }
                // A frame's place taken by a directory, link or device: named, not the
                // directory, since it is what blocks.
                if !entry.file_type().is_ok_and(|t| t.is_file()) {
                    return Err(Error::Output {
                        path: entry.path(),
                        reason: "it is not a regular file (a frame of --png-dir goes there)".into(),
                    });
                }
            }
            Ok(())
        }
        Err(e) if e.kind() == ErrorKind::NotFound => {
            let parent = output::parent_dir(dir);
            if !parent.is_dir() {
                return Err(fail(format!("the directory {} does not exist", parent.display())));
            }
            Ok(())
        }
        Err(e) => Err(fail(describe_io(&e))),
    }
}

/// Encodes one frame of palette levels as a PNG into the writer given.
pub(super) type Encode<'a> = &'a (dyn Fn(&[u8], &mut dyn Write) -> std::result::Result<(), String> + Sync);

/// A `--png-dir` being written.
pub(super) enum PngDir {
    /// Frames in one anonymous spill file until the run completes.
    Spilled(SpilledFrames),
    /// Frames in a named staging directory inside the target (the fallback).
    Staged(StagedFrames),
}

impl PngDir {
    /// Checks `dir` and opens where the frames wait: an anonymous spill file (in `dir`, or in
    /// its parent if the run is to create it), else a staging directory inside `dir`
    /// (created now, with `dir` if needed). An unwritable directory fails here.
    pub(super) fn prepare(dir: &Path) -> Result<Self> {
        check_png_dir(dir)?;
        let existed = dir.is_dir();
        let spill_dir = if existed { dir } else { output::parent_dir(dir) };
        match output::anonymous_scratch_file(spill_dir, Staging::from_env()) {
            Ok(Some(spill)) => Ok(Self::Spilled(SpilledFrames {
                target: dir.to_owned(),
                existed,
                spill,
                frames: Vec::new(),
                end: 0,
            })),
            Ok(None) => StagedFrames::prepare(dir).map(Self::Staged),
            Err(e) => Err(Error::Output { path: dir.to_owned(), reason: describe_io(&e) }),
        }
    }

    /// Encodes `batch` (frames `first_index`, ...) in parallel and keeps it until the commit.
    pub(super) fn write_batch(
        &mut self,
        first_index: usize,
        batch: &[Vec<u8>],
        encode: Encode,
    ) -> Result<()> {
        match self {
            Self::Spilled(frames) => frames.write_batch(first_index, batch, encode),
            Self::Staged(frames) => frames.write_batch(first_index, batch, encode),
        }
    }

    /// Replaces the earlier run's frames with this run's; returns the directory.
    pub(super) fn commit(self) -> Result<PathBuf> {
        match self {
            Self::Spilled(frames) => frames.commit(),
            Self::Staged(frames) => frames.commit(),
        }
    }
}

/// Frames appended to one anonymous file, found again by their (offset, length).
pub(super) struct SpilledFrames {
    target: PathBuf,
    /// Whether `target` existed when the run started (else the commit creates it).
    existed: bool,
    spill: File,
    /// Each frame's offset and length in `spill`, in order.
    frames: Vec<(u64, u64)>,
    /// The end of the data in `spill`.
    end: u64,
}

impl SpilledFrames {
    fn write_batch(&mut self, first_index: usize, batch: &[Vec<u8>], encode: Encode) -> Result<()> {
        use std::os::unix::fs::FileExt;
        let target = &self.target;
        let encoded: Vec<Vec<u8>> = batch
            .par_iter()
            .enumerate()
            .map(|(i, levels)| {
                let mut png = Vec::new();
                encode(levels, &mut png).map_err(|reason| Error::Output {
                    path: target.join(frame_name(first_index + i)),
                    reason,
                })?;
                Ok(png)
            })
            .collect::<Result<_>>()?;
        let mut offsets = Vec::with_capacity(encoded.len());
        for png in &encoded {
            let length = png.len() as u64;
            offsets.push((self.end, length));
            self.end += length;
        }
        let spill = &self.spill;
        encoded
            .par_iter()
            .zip(&offsets)
            .try_for_each(|(png, &(offset, _))| spill.write_all_at(png, offset))
            .map_err(|e| Error::Output { path: target.clone(), reason: describe_io(&e) })?;
        self.frames.extend(offsets);
        Ok(())
    }

    fn commit(self) -> Result<PathBuf> {
        // Held throughout: a catchable signal waits until every frame is in place.
        let held = output::hold_outputs();
        let mut created = false;
        let mut placed: Vec<PathBuf> = Vec::with_capacity(self.frames.len());
        let result = self.put_frames_in_place(&held, &mut created, &mut placed);
        if result.is_err() {
            // Remove what this run put there (frames it replaced are lost; the earlier run's
            // others stay), and the directory if the run created it.
            for path in &placed {
                let _ = std::fs::remove_file(path);
            }
            if created {
                let _ = std::fs::remove_dir(&self.target);
            }
        }
        drop(held);
        result.map_err(|e| Error::Output { path: self.target.clone(), reason: describe_io(&e) })?;
        Ok(self.target)
    }

    fn put_frames_in_place(
        &self,
        held: &output::HeldOutputs,
        created: &mut bool,
        placed: &mut Vec<PathBuf>,
    ) -> std::io::Result<()> {
        let target = &self.target;
        if !self.existed {
            match std::fs::create_dir(target) {
                Ok(()) => *created = true,
                // Made by someone else since the run started: used if it still only holds
                // frames.
                Err(e) if e.kind() == ErrorKind::AlreadyExists && check_png_dir(target).is_ok() => {}
                Err(e) => return Err(e),
            }
        }
        let mut names = HashSet::with_capacity(self.frames.len());
        for (index, &(offset, length)) in self.frames.iter().enumerate() {
            let name = frame_name(index);
            let path = target.join(&name);
            held.put_file(&path, |out| copy_range(&self.spill, offset, length, out))?;
            placed.push(path);
            names.insert(name);
            // The spill file's copy is no longer needed: give its space back, so the disk
            // holds the frames about once, not twice (where holes can be punched).
            punch_hole(&self.spill, offset, length);
        }
        // The earlier run's frames beyond this run's last one.
        for entry in std::fs::read_dir(target)? {
            let name = entry?.file_name();
            if let Some(name) = name.to_str()
                && is_frame_name(name)
                && !names.contains(name)
            {
                std::fs::remove_file(target.join(name))?;
            }
        }
        Ok(())
    }
}

/// Copies `length` bytes at `offset` of `source` to the end of `out`, in the kernel where it
/// can (`std::io::copy` uses `copy_file_range` between files on Linux).
fn copy_range(source: &File, offset: u64, length: u64, out: &mut File) -> std::io::Result<()> {
    let mut source = source;
    source.seek(SeekFrom::Start(offset))?;
    let copied = std::io::copy(&mut source.take(length), out)?;
    if copied != length {
        return Err(std::io::Error::new(ErrorKind::UnexpectedEof, "a frame was cut short in the spill file"));
    }
    Ok(())
}

/// Frees the disk space of `length` bytes at `offset` of `file` (a hole reads as zeros); does
/// nothing where the file system cannot.
#[cfg(target_os = "linux")]
fn punch_hole(file: &File, offset: u64, length: u64) {
    use std::os::fd::AsRawFd;
    // SAFETY: fallocate only acts on the open descriptor it is given.
    let _ = unsafe {
        libc::fallocate(
            file.as_raw_fd(),
            libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
            offset as libc::off_t,
            length as libc::off_t,
        )
    };
}

#[cfg(not(target_os = "linux"))]
fn punch_hole(_file: &File, _offset: u64, _length: u64) {}

/// Frames as files in a named staging directory inside the target, moved in at the end.
pub(super) struct StagedFrames {
    target: PathBuf,
    staging: PathBuf,
    /// Whether this run created `target` (removed again if the run does not complete).
    created: bool,
    committed: bool,
}

impl StagedFrames {
    /// Creates the directory if needed and the staging directory inside it.
    fn prepare(dir: &Path) -> Result<Self> {
        let fail = |e: std::io::Error| Error::Output { path: dir.to_owned(), reason: describe_io(&e) };
        let created = !dir.is_dir();
        if created {
            output::create_output_dir(dir).map_err(fail)?;
        }
        let staging = match output::staging_dir(dir) {
            Ok(staging) => staging,
            Err(e) => {
                if created {
                    output::remove_created_dir(dir);
                }
                return Err(fail(e));
            }
        };
        Ok(Self { target: dir.to_owned(), staging, created, committed: false })
    }

    fn write_batch(&self, first_index: usize, batch: &[Vec<u8>], encode: Encode) -> Result<()> {
        batch.par_iter().enumerate().try_for_each(|(i, levels)| {
            let name = frame_name(first_index + i);
            let fail = |reason: String| Error::Output { path: self.target.join(&name), reason };
            let file = File::create(self.staging.join(&name)).map_err(|e| fail(describe_io(&e)))?;
            encode(levels, &mut std::io::BufWriter::new(file)).map_err(fail)
        })
    }

    /// Replaces the earlier run's frames with this run's.
    fn commit(mut self) -> Result<PathBuf> {
        self.committed = true;
        let (target, staging) = (&self.target, &self.staging);
        let created = self.created.then_some(target.as_path());
        output::commit_staged(staging, created, || {
            for entry in std::fs::read_dir(target)? {
                let name = entry?.file_name();
                if name.to_str().is_some_and(is_frame_name) {
                    std::fs::remove_file(target.join(&name))?;
                }
            }
            for entry in std::fs::read_dir(staging)? {
                let name = entry?.file_name();
                std::fs::rename(staging.join(&name), target.join(&name))?;
            }
            std::fs::remove_dir(staging)
        })
        .map_err(|e| Error::Output { path: target.clone(), reason: describe_io(&e) })?;
        Ok(self.target.clone())
    }
}

impl Drop for StagedFrames {
    fn drop(&mut self) {
        if !self.committed {
            output::abandon_staged(&self.staging, self.created.then_some(self.target.as_path()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_names() {
        assert!(is_frame_name(&frame_name(0)));
        assert!(is_frame_name("frame_123456.png"));
        assert!(!is_frame_name("frame_1234.png"));
        assert!(!is_frame_name("frame_0000a.png"));
        assert!(!is_frame_name(".tmpabcdef"));
    }

    #[test]
    fn a_range_is_copied_out_of_the_middle() {
        let dir = tempfile::tempdir().unwrap();
        let mut source = tempfile::tempfile_in(dir.path()).unwrap();
        source.write_all(b"0123456789").unwrap();
        let mut out = tempfile::tempfile_in(dir.path()).unwrap();
        copy_range(&source, 3, 4, &mut out).unwrap();
        copy_range(&source, 0, 1, &mut out).unwrap();
        out.seek(SeekFrom::Start(0)).unwrap();
        let mut copied = String::new();
        out.read_to_string(&mut copied).unwrap();
        assert_eq!(copied, "34560");
        let short = copy_range(&source, 8, 4, &mut out).unwrap_err();
        assert_eq!(short.kind(), ErrorKind::UnexpectedEof);
    }
}
