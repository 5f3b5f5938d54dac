//! Output files that appear whole or not at all.
//!
//! A regular file (or a new one) is written under a short temporary name (`.tmpXXXXXX`) in its
//! directory and renamed over the destination when complete; a symbolic link is followed, so
//! the file it points to is replaced and the link stays. Any other existing target (a device
//! such as `/dev/null`, a FIFO) is never replaced: it is opened and written directly.
//!
//! Every temporary file and directory of the run is listed in one registry, so that
//! [`remove_temporaries`] (called on SIGINT, SIGTERM and SIGHUP) leaves no stray file.

use std::{
    fs::File,
    io::{BufWriter, ErrorKind, Write},
    path::{Path, PathBuf},
    sync::{Mutex, MutexGuard},
};

use tempfile::NamedTempFile;

use crate::error::{Error, Result};

/// A temporary path of this run, removed if the run does not finish.
#[derive(Debug, PartialEq, Eq)]
enum Temporary {
    /// A file under its temporary name.
    File(PathBuf),
    /// A staging directory and everything in it.
    Tree(PathBuf),
    /// A directory the run created for its output; removed only if empty.
    CreatedDir(PathBuf),
}

static TEMPORARIES: Mutex<Vec<Temporary>> = Mutex::new(Vec::new());

fn registry() -> MutexGuard<'static, Vec<Temporary>> {
    TEMPORARIES.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn unregister(list: &mut Vec<Temporary>, entry: &Temporary) {
    list.retain(|t| t != entry);
}

/// Removes every temporary file and directory of the run, newest first, and keeps the
/// registry locked for good: no output is created or committed afterwards. For a signal
/// handler that exits right after.
pub fn remove_temporaries() {
    let mut list = registry();
    for entry in list.drain(..).rev() {
        // Encoder threads may still be adding frames to a staging directory: try again
        // until it is gone (a few milliseconds at most).
        for _ in 0..100 {
            let removed = match &entry {
                Temporary::File(path) => std::fs::remove_file(path),
                Temporary::Tree(path) => std::fs::remove_dir_all(path),
                Temporary::CreatedDir(path) => std::fs::remove_dir(path),
            };
            match removed {
                Err(e) if e.kind() != ErrorKind::NotFound => {
                    std::thread::sleep(std::time::Duration::from_millis(2))
                }
                _ => break,
            }
        }
    }
    std::mem::forget(list);
}

/// A temporary directory for staging outputs inside `parent`; registered for removal.
pub(crate) fn staging_dir(parent: &Path) -> std::io::Result<PathBuf> {
    let mut list = registry();
    let path = tempfile::Builder::new().prefix(".tmp").tempdir_in(parent)?.keep();
    list.push(Temporary::Tree(path.clone()));
    Ok(path)
}

/// Creates `dir` (its parent must exist), registered for removal while the run is unfinished.
pub(crate) fn create_output_dir(dir: &Path) -> std::io::Result<()> {
    let mut list = registry();
    std::fs::create_dir(dir)?;
    list.push(Temporary::CreatedDir(dir.to_owned()));
    Ok(())
}

/// Removes a directory made by [`create_output_dir`], if it is still empty.
pub(crate) fn remove_created_dir(dir: &Path) {
    let mut list = registry();
    let _ = std::fs::remove_dir(dir);
    unregister(&mut list, &Temporary::CreatedDir(dir.to_owned()));
}

/// Runs `finish` (moving staged outputs to their final names) with the registry locked, then
/// forgets `staging` and `created`; or, if `finish` fails, removes them.
pub(crate) fn commit_staged(
    staging: &Path,
    created: Option<&Path>,
    finish: impl FnOnce() -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut list = registry();
    let result = finish();
    if result.is_err() {
        let _ = std::fs::remove_dir_all(staging);
        if let Some(dir) = created {
            let _ = std::fs::remove_dir(dir);
        }
    }
    unregister(&mut list, &Temporary::Tree(staging.to_owned()));
    if let Some(dir) = created {
        unregister(&mut list, &Temporary::CreatedDir(dir.to_owned()));
    }
    result
}

/// Removes an unfinished staging directory (and the output directory the run created).
pub(crate) fn abandon_staged(staging: &Path, created: Option<&Path>) {
    let mut list = registry();
    let _ = std::fs::remove_dir_all(staging);
    unregister(&mut list, &Temporary::Tree(staging.to_owned()));
    if let Some(dir) = created {
        let _ = std::fs::remove_dir(dir);
        unregister(&mut list, &Temporary::CreatedDir(dir.to_owned()));
    }
}

/// One short line for an I/O error, without the `(os error N)` suffix.
pub fn describe_io(e: &std::io::Error) -> String {
    match e.kind() {
        ErrorKind::StorageFull => "no space left on the device".into(),
        ErrorKind::BrokenPipe => "the reading end of the pipe was closed".into(),
        ErrorKind::IsADirectory => "it is a directory".into(),
        ErrorKind::InvalidFilename => "the name is too long".into(),
        ErrorKind::PermissionDenied => "permission denied".into(),
        ErrorKind::ReadOnlyFilesystem => "the file system is read-only".into(),
        ErrorKind::NotADirectory => "a component of the path is not a directory".into(),
        ErrorKind::QuotaExceeded => "the disk quota is exceeded".into(),
        _ => {
            let text = e.to_string();
            match text.find(" (os error") {
                Some(end) => text[..end].to_owned(),
                None => text,
            }
        }
    }
}

/// The longest file name most Linux file systems accept, in bytes.
pub const NAME_MAX: usize = 255;

/// How an output reaches `dest`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// Written under a temporary name next to this path (the destination with symbolic links
    /// followed), then renamed over it.
    Replace(PathBuf),
    /// An existing file that is not a regular one (a device, a FIFO): written directly.
    Direct(PathBuf),
}

/// Checks, without touching anything, that `dest` can be an output file: a file name of at
/// most [`NAME_MAX`] bytes, not ending in `/`, in an existing directory, and not a
/// directory itself. Says whether it will be replaced or written directly.
pub fn check_target(dest: &Path) -> Result<Target> {
    let fail = |reason: String| Error::Output { path: dest.to_owned(), reason };
    let text = dest.as_os_str().as_encoded_bytes();
    if text.ends_with(b"/") {
        return Err(fail("the name ends with '/', which names a directory".into()));
    }
    let name = dest.file_name().ok_or_else(|| fail("not a file name".into()))?;
    if name.len() > NAME_MAX {
        return Err(fail(format!("the file name is longer than {NAME_MAX} bytes")));
    }
    match std::fs::metadata(dest) {
        Ok(meta) if meta.is_dir() => Err(fail("it is a directory".into())),
        Ok(meta) if meta.is_file() => {
            let link = std::fs::symlink_metadata(dest).is_ok_and(|m| m.file_type().is_symlink());
            let resolved = if link {
                std::fs::canonicalize(dest).map_err(|e| fail(describe_io(&e)))?
            } else {
                dest.to_owned()
            };
            Ok(Target::Replace(resolved))
        }
        Ok(_) => Ok(Target::Direct(dest.to_owned())),
        Err(e) if e.kind() == ErrorKind::NotFound => {
            if std::fs::symlink_metadata(dest).is_ok() {
                return Err(fail("it is a symbolic link to a missing file".into()));
            }
            let dir = parent_dir(dest);
            if !dir.is_dir() {
                return Err(fail(format!("the directory {} does not exist", dir.display())));
            }
            Ok(Target::Replace(dest.to_owned()))
        }
        Err(e) => Err(fail(describe_io(&e))),
    }
}

/// The directory a path's file goes into (`.` for a bare name).
pub fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

#[derive(Debug)]
enum Sink {
    Temp(BufWriter<NamedTempFile>),
    Direct(BufWriter<File>),
}

/// A file being written; it reaches its final name only through [`AtomicFile::commit`].
/// Dropped uncommitted, its temporary file is removed (a direct target is left as it is).
#[derive(Debug)]
pub struct AtomicFile {
    dest: PathBuf,
    sink: Option<Sink>,
}

impl AtomicFile {
    /// Creates the temporary file next to `dest` (or opens a device or FIFO there), so an
    /// unwritable destination is reported now, before any work.
    pub fn create(dest: &Path) -> Result<Self> {
        let fail = |e: std::io::Error| Error::Output { path: dest.to_owned(), reason: describe_io(&e) };
        let sink = match check_target(dest)? {
            Target::Direct(path) => Sink::Direct(BufWriter::new(
                std::fs::OpenOptions::new().write(true).open(path).map_err(fail)?,
            )),
            Target::Replace(path) => {
                let mut list = registry();
                let mut builder = tempfile::Builder::new();
                builder.prefix(".tmp");
                #[cfg(unix)]
                {
                    use std::os::unix::fs::PermissionsExt;
                    // As `File::create`: read-write for all, less the umask.
                    builder.permissions(std::fs::Permissions::from_mode(0o666));
                }
                let temp = builder.tempfile_in(parent_dir(&path)).map_err(fail)?;
                list.push(Temporary::File(temp.path().to_owned()));
                return Ok(Self { dest: path, sink: Some(Sink::Temp(BufWriter::new(temp))) });
            }
        };
        Ok(Self { dest: dest.to_owned(), sink: Some(sink) })
    }

    /// The final path.
    pub fn path(&self) -> &Path {
        &self.dest
    }

    /// Flushes and renames the file to its final name (a direct target is flushed). It does
    /// not wait for the disk (see [`crate::export::rename_into_place`]): the outputs written
    /// this way are pictures, charts, reports and the autotune cache, which a power loss costs
    /// no more than a rerun.
    pub fn commit(mut self) -> Result<PathBuf> {
        let fail = |e: std::io::Error| Error::Output { path: self.dest.clone(), reason: describe_io(&e) };
        match self.sink.take().expect("sink present until commit") {
            Sink::Direct(writer) => {
                writer.into_inner().map_err(|e| fail(e.into_error()))?;
            }
            Sink::Temp(writer) => {
                let temp = writer.into_inner().map_err(|e| fail(e.into_error()))?;
                let entry = Temporary::File(temp.path().to_owned());
                let mut list = registry();
                temp.persist(&self.dest).map_err(|e| fail(e.error))?;
                unregister(&mut list, &entry);
            }
        }
        Ok(self.dest.clone())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self.sink.as_mut().expect("sink present until commit") {
            Sink::Temp(w) => w.write(buf),
            Sink::Direct(w) => w.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self.sink.as_mut().expect("sink present until commit") {
            Sink::Temp(w) => w.flush(),
            Sink::Direct(w) => w.flush(),
        }
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if let Some(Sink::Temp(writer)) = self.sink.take() {
            let mut list = registry();
            let (temp, _) = writer.into_parts();
            unregister(&mut list, &Temporary::File(temp.path().to_owned()));
            drop(temp); // removes the file
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_legal_name_gets_a_short_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("x".repeat(250));
        let mut file = AtomicFile::create(&dest).unwrap();
        file.write_all(b"data").unwrap();
        assert_eq!(file.commit().unwrap(), dest);
        assert_eq!(std::fs::read(&dest).unwrap(), b"data");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn bad_targets_are_refused_before_anything_is_created() {
        let dir = tempfile::tempdir().unwrap();
        for (path, reason) in [
            (dir.path().join("out.gif/"), "ends with '/'"),
            (dir.path().join("y".repeat(256)), "longer than 255 bytes"),
            (dir.path().join("missing/out.gif"), "does not exist"),
            (dir.path().to_owned(), "it is a directory"),
        ] {
            let message = AtomicFile::create(&path).unwrap_err().to_string();
            assert!(message.contains(reason), "{path:?}: {message}");
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn devices_are_written_directly_and_links_followed() {
        assert_eq!(check_target(Path::new("/dev/null")).unwrap(), Target::Direct("/dev/null".into()));
        let mut file = AtomicFile::create(Path::new("/dev/null")).unwrap();
        file.write_all(b"gone").unwrap();
        file.commit().unwrap();
        use std::os::unix::fs::FileTypeExt;
        assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device());

        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.txt");
        std::fs::write(&real, b"old").unwrap();
        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let mut file = AtomicFile::create(&link).unwrap();
        file.write_all(b"new").unwrap();
        file.commit().unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link stays");
        assert_eq!(std::fs::read(&real).unwrap(), b"new");
    }

    #[test]
    fn an_uncommitted_file_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let mut file = AtomicFile::create(&dir.path().join("o.gif")).unwrap();
        file.write_all(b"half").unwrap();
        drop(file);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
