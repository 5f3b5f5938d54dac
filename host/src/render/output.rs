//! Output files that appear whole or not at all: written under a temporary name in the
//! destination's directory, then renamed over the destination.

use std::{
    fs::File,
    io::{BufWriter, Write},
    path::{Path, PathBuf},
};

use crate::error::{Error, Result};

/// A file being written; it reaches its final name only through [`AtomicFile::commit`].
/// Dropped uncommitted, it is removed.
#[derive(Debug)]
pub struct AtomicFile {
    dest: PathBuf,
    temp: PathBuf,
    writer: Option<BufWriter<File>>,
}

impl AtomicFile {
    /// Creates the temporary file next to `dest`, so an unwritable destination is reported
    /// now, before any work.
    pub fn create(dest: &Path) -> Result<Self> {
        let fail = |reason: String| Error::Output { path: dest.to_owned(), reason };
        let name = dest.file_name().ok_or_else(|| fail("not a file name".into()))?;
        let dir = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        if !dir.is_dir() {
            return Err(fail(format!("the directory {} does not exist", dir.display())));
        }
        if dest.is_dir() {
            return Err(fail("it is a directory".into()));
        }
        let temp = dir.join(format!(".{}.{}.tmp", name.to_string_lossy(), std::process::id()));
        let file = File::create(&temp).map_err(|e| fail(e.to_string()))?;
        Ok(Self { dest: dest.to_owned(), temp, writer: Some(BufWriter::new(file)) })
    }

    /// The final path.
    pub fn path(&self) -> &Path {
        &self.dest
    }

    /// Flushes, syncs and renames the file to its final name.
    pub fn commit(mut self) -> Result<PathBuf> {
        let fail = |e: std::io::Error| Error::Output { path: self.dest.clone(), reason: e.to_string() };
        let writer = self.writer.take().expect("writer present until commit");
        let file = writer.into_inner().map_err(|e| fail(e.into_error()))?;
        file.sync_all().map_err(fail)?;
        std::fs::rename(&self.temp, &self.dest).map_err(fail)?;
        Ok(self.dest.clone())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.writer.as_mut().expect("writer present until commit").write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.writer.as_mut().expect("writer present until commit").flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.writer.take().is_some() {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}
