//! Files that are complete or absent: every output is written to a temporary file in its
//! target's directory and renamed over the target only once it is whole, so an interrupted
//! run leaves the previous file (or nothing), never half a file.

use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

use crate::error::{Error, Result};

/// A temporary file next to `dest` (same directory, so the final rename is atomic). Fails
/// with a message naming `dest` if its directory is missing or not writable.
pub fn temp_for(dest: &Path) -> Result<NamedTempFile> {
    let dir = match dest.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(Error::Output {
            path: dest.to_owned(),
            reason: format!("the directory {} does not exist", dir.display()),
        });
    }
    let mut builder = tempfile::Builder::new();
    // Temporaries are private (0600) by default; the finished file should be readable like
    // any other output.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644));
    builder.tempfile_in(dir).map_err(|e| output_error(dest, e))
}

/// Flushes `file` to disk and renames it to `dest`, replacing any file there.
pub fn persist(file: NamedTempFile, dest: &Path) -> Result<PathBuf> {
    file.as_file().sync_all().map_err(|e| output_error(dest, e))?;
    file.persist(dest).map_err(|e| output_error(dest, e.error))?;
    Ok(dest.to_owned())
}

/// An [`Error::Output`] for `path`.
pub(crate) fn output_error(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Output { path: path.to_owned(), reason: e.to_string() }
}
