//! The output-file rule, in one place: every file this program writes appears whole under
//! its name, or not at all, and an interrupted run leaves no stray file.
//!
//! - A new file, or an existing regular one, is written where nobody sees it and given its
//!   name only once complete ([`AtomicFile`]). On Linux it is an anonymous file (`O_TMPFILE`)
//!   in the destination's directory, which has no name at all until [`AtomicFile::commit`]
//!   links it in: even SIGKILL or a power cut during the run leaves nothing behind. Where the
//!   file system refuses `O_TMPFILE` (or `/proc` is not mounted, or
//!   [`NAMED_TEMPORARIES_VAR`] is set), it is a named temporary file `.tmpXXXXXX` beside
//!   the destination, as before; SIGKILL can leave that one behind.
//! - Replacing an existing file is atomic: readers see the old file or the new one. `linkat`
//!   cannot replace a name, so the anonymous file is linked to a fresh `.tmpXXXXXX` name in
//!   the same directory and renamed over the destination at once; only a SIGKILL or power cut
//!   between those two calls (microseconds) can leave that name behind.
//! - A symbolic link is followed: the file it points to is replaced and the link stays. Any
//!   other existing target (a device such as `/dev/null`, a FIFO) is never replaced: it is
//!   opened and written directly.
//! - Data worth the wait (checkpoints, `--save` fields) is flushed to disk before it gets its
//!   name ([`AtomicFile::create_synced`]); pictures, videos, charts and reports are not (a
//!   power loss costs no more than a rerun; flushing a 31 MB GIF took 24-41 ms of the run).
//! - Every named temporary file and staging directory of the run is listed in one registry,
//!   so that [`remove_temporaries`] (called on SIGINT, SIGTERM and SIGHUP) leaves no stray
//!   file; anonymous files need no listing (closing them frees them). Holding the registry
//!   (`hold_outputs`) makes that clean-up wait, so several files can be put in place as one
//!   step as far as those signals are concerned (the `--png-dir` frames).
//! - Data that waits for an output but never gets a name of its own (the `--png-dir` frames
//!   until the run completes) goes to an anonymous scratch file in the destination's file
//!   system ([`anonymous_scratch_file`]).

use std::{
    fs::File,
    io::{BufWriter, ErrorKind, Seek, SeekFrom, Write},
    path::{Path, PathBuf},
    sync::{Mutex, MutexGuard, OnceLock},
};

use tempfile::TempPath;

use crate::error::{Error, Result};

// Other systems than Linux have no anonymous files: stand-ins that say so, in a file of their
// own (which mutation testing, run on Linux, leaves out).
#[cfg(not(target_os = "linux"))]
mod not_linux;
#[cfg(not(target_os = "linux"))]
use not_linux::{link_into_place, open_anonymous};

/// Set to 1 to write outputs under named temporary files even where the file system offers
/// anonymous ones (`O_TMPFILE`): the fallback path, for tests and for comparison.
pub const NAMED_TEMPORARIES_VAR: &str = "RUST_GPU_SIM_NAMED_TEMPORARIES";

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
        remove_temporary(&entry);
    }
    std::mem::forget(list);
}

/// Removes one temporary. Encoder threads may still be adding frames to a staging directory
/// (its removal then fails): it is tried again every 2 ms until it is gone, for up to 0.2 s.
/// Returns the attempts made.
fn remove_temporary(entry: &Temporary) -> u32 {
    let mut attempts = 0;
    loop {
        attempts += 1;
        let removed = match entry {
            Temporary::File(path) => std::fs::remove_file(path),
            Temporary::Tree(path) => std::fs::remove_dir_all(path),
            Temporary::CreatedDir(path) => std::fs::remove_dir(path),
        };
        match removed {
            Err(e) if attempts < 100 && worth_another_try(&e) => {
                std::thread::sleep(std::time::Duration::from_millis(2))
            }
            _ => return attempts,
        }
    }
}

/// Whether a failed removal may succeed later: anything but the path being gone already.
fn worth_another_try(e: &std::io::Error) -> bool {
    e.kind() != ErrorKind::NotFound
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
        _ => crate::error::without_os_error(&e.to_string()),
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

/// Refuses a pipe (a FIFO, a socket, `/dev/stdout` on a pipe) as the target of an output written
/// with seeks (`what`: an MP4, a `.npz` archive): it would fail only after the whole run, with
/// "Illegal seek", and leave its reader half a file. `option` names the output in the message.
pub fn refuse_pipe(option: &str, dest: &Path, what: &str) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if let Ok(meta) = std::fs::metadata(dest)
            && (meta.file_type().is_fifo() || meta.file_type().is_socket())
        {
            return Err(Error::InvalidInput(format!(
                "{option} {}: a pipe cannot take {what}, which is written with seeks; write it to a file",
                dest.display()
            )));
        }
    }
    let _ = (option, dest, what);
    Ok(())
}

/// The directory a path's file goes into (`.` for a bare name).
pub fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// An [`Error::Output`] for `path`.
pub(crate) fn output_error(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Output { path: path.to_owned(), reason: e.to_string() }
}

/// Whether a file reaches the disk before it gets its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// Visible once written; a power loss right after may lose it (pictures, videos).
    Cached,
    /// Flushed to disk (`fsync`) before it gets its name: after a power loss the name holds
    /// the old file or the new one, whole (checkpoints, saved fields).
    Synced,
}

/// Where an unfinished output lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Staging {
    /// An anonymous file (`O_TMPFILE`) where the file system has them, else a named one.
    Anonymous,
    /// A named temporary file `.tmpXXXXXX` beside the destination.
    Named,
}

impl Staging {
    /// [`Staging::Named`] if [`NAMED_TEMPORARIES_VAR`] is `1`, else [`Staging::Anonymous`].
    pub fn from_env() -> Self {
        if std::env::var(NAMED_TEMPORARIES_VAR).is_ok_and(|v| v == "1") {
            Staging::Named
        } else {
            Staging::Anonymous
        }
    }
}

/// How an [`AtomicFile`] is being written.
#[derive(Debug)]
enum Backing {
    /// An anonymous file in `dir`, linked in at commit.
    Anonymous,
    /// A named temporary file (listed in the registry), renamed at commit.
    Named(TempPath),
    /// An existing device or FIFO, written directly.
    Direct,
}

/// What an [`AtomicFile`] is written through, for tests and diagnostics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Via {
    /// An anonymous (`O_TMPFILE`) file.
    Anonymous,
    /// A named temporary file.
    Named,
    /// The destination itself (a device or FIFO).
    Direct,
}

/// A file being written; it reaches its final name only through [`AtomicFile::commit`].
/// Dropped uncommitted, its temporary file is removed (a direct target is left as it is).
/// Seekable (the MP4 writer goes back to fill in sizes), except a direct target that is not.
#[derive(Debug)]
pub struct AtomicFile {
    dest: PathBuf,
    writer: Option<BufWriter<File>>,
    backing: Backing,
    durability: Durability,
}

impl AtomicFile {
    /// Creates the temporary file next to `dest` (or opens a device or FIFO there), so an
    /// unwritable destination is reported now, before any work. Not flushed to disk before
    /// it gets its name ([`Durability::Cached`]); the staging as [`Staging::from_env`].
    pub fn create(dest: &Path) -> Result<Self> {
        Self::create_with(dest, Durability::Cached, Staging::from_env())
    }

    /// [`AtomicFile::create`], flushed to disk before it gets its name ([`Durability::Synced`]):
    /// for checkpoints and saved fields.
    pub fn create_synced(dest: &Path) -> Result<Self> {
        Self::create_with(dest, Durability::Synced, Staging::from_env())
    }

    /// An output for `dest` with the given durability and staging.
    pub fn create_with(dest: &Path, durability: Durability, staging: Staging) -> Result<Self> {
        let fail = |e: std::io::Error| output_error(dest, describe_io(&e));
        let (dest, file, backing) = match check_target(dest)? {
            Target::Direct(path) => {
                let file = std::fs::OpenOptions::new().write(true).open(&path).map_err(fail)?;
                (path, file, Backing::Direct)
            }
            Target::Replace(path) => {
                let (file, backing) = open_temporary(&path, staging).map_err(fail)?;
                (path, file, backing)
            }
        };
        Ok(Self { dest, writer: Some(BufWriter::new(file)), backing, durability })
    }

    /// The final path.
    pub fn path(&self) -> &Path {
        &self.dest
    }

    /// What the file is written through.
    pub fn via(&self) -> Via {
        match self.backing {
            Backing::Anonymous => Via::Anonymous,
            Backing::Named(_) => Via::Named,
            Backing::Direct => Via::Direct,
        }
    }

    /// Flushes the file (to disk too, if [`Durability::Synced`]) and gives it its final name
    /// (a direct target is only flushed).
    pub fn commit(self) -> Result<PathBuf> {
        let written = self.finish()?;
        // Locked: a signal's clean-up waits until the name is in place (and after one, nothing
        // is linked in any more).
        let mut list = registry();
        let named = written.put(&mut list);
        hold_after_naming_for_tests();
        named
    }

    /// Flushes the file (to disk too, if [`Durability::Synced`]): everything of the commit but
    /// the name.
    fn finish(mut self) -> Result<Written> {
        let dest = self.dest.clone();
        let fail = |e: std::io::Error| output_error(&dest, describe_io(&e));
        let writer = self.writer.take().expect("writer present until commit");
        let file = writer.into_inner().map_err(|e| fail(e.into_error()))?;
        if self.durability == Durability::Synced && !matches!(self.backing, Backing::Direct) {
            file.sync_all().map_err(fail)?;
        }
        let backing = std::mem::replace(&mut self.backing, Backing::Direct);
        Ok(Written { dest, file, backing })
    }
}

/// Gives several files their names as one step ([`AtomicFile::commit`] for each): every file
/// is written and flushed first, so a write that fails (a full disk) names none of them; then
/// all are named under one hold of the registry, so SIGINT, SIGTERM or SIGHUP clean up before
/// the first name or after the last (SIGKILL, or a rename the file system refuses midway, can
/// still leave the first ones named). For outputs of several files (`--save out.npy`: one
/// file per field).
pub fn commit_all(files: Vec<AtomicFile>) -> Result<Vec<PathBuf>> {
    let written = files.into_iter().map(AtomicFile::finish).collect::<Result<Vec<_>>>()?;
    let mut list = registry();
    written
        .into_iter()
        .map(|file| {
            let named = file.put(&mut list);
            hold_after_naming_for_tests();
            named
        })
        .collect()
}

/// Set to a number of milliseconds to hold the outputs' registry that long after each file is
/// named (test only: a signal then arrives while its clean-up waits, as it can at any commit).
pub const HOLD_AFTER_NAMING_VAR: &str = "RUST_GPU_SIM_HOLD_AFTER_NAMING_MS";

fn hold_after_naming_for_tests() {
    if let Some(ms) = std::env::var(HOLD_AFTER_NAMING_VAR).ok().and_then(|v| v.parse::<u64>().ok()) {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}

/// A finished output waiting for its name.
struct Written {
    dest: PathBuf,
    file: File,
    backing: Backing,
}

impl Written {
    /// Links or renames the file into place, the registry held (`list`).
    fn put(self, list: &mut Vec<Temporary>) -> Result<PathBuf> {
        let Self { dest, file, backing } = self;
        let fail = |e: std::io::Error| output_error(&dest, describe_io(&e));
        match backing {
            Backing::Direct => {}
            Backing::Anonymous => link_into_place(&file, &dest).map_err(fail)?,
            Backing::Named(temp) => {
                crate::cuda::keep_replaced_until_exit(&dest);
                let entry = Temporary::File(temp.to_path_buf());
                let result = temp.persist(&dest);
                unregister(list, &entry);
                // A failed rename drops (removes) the temporary file.
                result.map_err(|e| fail(e.error))?;
            }
        }
        Ok(dest)
    }
}

/// Whether `/proc/self/fd` is there, through which an anonymous file is linked in.
fn proc_fd_available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| Path::new("/proc/self/fd").is_dir())
}

/// Opens an unnamed file in `dest`'s directory, or (where that is not possible, or
/// `staging` asks for it) a named temporary file listed in the registry.
fn open_temporary(dest: &Path, staging: Staging) -> std::io::Result<(File, Backing)> {
    let dir = parent_dir(dest);
    if staging == Staging::Anonymous
        && proc_fd_available()
        && let Some(file) = open_anonymous(dir, Access::WriteOnly)?
    {
        return Ok((file, Backing::Anonymous));
    }
    let mut list = registry();
    let mut builder = tempfile::Builder::new();
    builder.prefix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // As `File::create`: read-write for all, less the umask.
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let (file, path) = builder.tempfile_in(dir)?.into_parts();
    list.push(Temporary::File(path.to_path_buf()));
    Ok((file, Backing::Named(path)))
}

/// How an anonymous file is opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Access {
    WriteOnly,
    ReadWrite,
}

/// An anonymous file (`O_TMPFILE`) in `dir`; `None` where the file system (or the kernel)
/// does not offer them.
#[cfg(target_os = "linux")]
fn open_anonymous(dir: &Path, access: Access) -> std::io::Result<Option<File>> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).read(access == Access::ReadWrite);
    // Mode as `File::create`: read-write for all, less the umask.
    match options.custom_flags(libc::O_TMPFILE).mode(0o666).open(dir) {
        Ok(file) => Ok(Some(file)),
        // EOPNOTSUPP: the file system has no O_TMPFILE; EISDIR or EINVAL: the kernel (or a
        // seccomp filter) does not know the flag.
        Err(e) if matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL)) => {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// An anonymous file (`O_TMPFILE`) in `dir`, open for reading and writing: scratch space on
/// that file system which never gets a name and vanishes when closed, even after SIGKILL or
/// a power cut. `None` where outputs are staged under names instead: the file system has no
/// `O_TMPFILE`, `/proc` is not mounted (so nothing written anonymously could be linked in
/// later), or `staging` is [`Staging::Named`].
pub fn anonymous_scratch_file(dir: &Path, staging: Staging) -> std::io::Result<Option<File>> {
    if staging == Staging::Named || !proc_fd_available() {
        return Ok(None);
    }
    open_anonymous(dir, Access::ReadWrite)
}

/// The registry held: a signal's clean-up ([`remove_temporaries`]) waits until it is released,
/// so several files put in place under one hold appear all together as far as SIGINT,
/// SIGTERM and SIGHUP are concerned (SIGKILL can still stop it between two files).
/// Creating or committing an [`AtomicFile`] while holding it would wait for ever.
pub(crate) struct HeldOutputs {
    _list: MutexGuard<'static, Vec<Temporary>>,
}

/// Takes the registry (waits while another thread holds it).
pub(crate) fn hold_outputs() -> HeldOutputs {
    HeldOutputs { _list: registry() }
}

impl HeldOutputs {
    /// Writes a new file with `fill` and gives it the name `dest`, replacing whatever is
    /// there as a rename does (a symbolic link is replaced, not followed): the file is
    /// anonymous until `fill` has written all of it, then linked in (on Linux with
    /// `O_TMPFILE`; elsewhere, or where it is refused, under a named temporary file beside
    /// `dest`, removed again on failure). `dest` is not checked ([`check_target`]): the
    /// caller knows what it replaces.
    pub(crate) fn put_file(
        &self,
        dest: &Path,
        fill: impl FnOnce(&mut File) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        let dir = parent_dir(dest);
        if proc_fd_available()
            && let Some(mut file) = open_anonymous(dir, Access::WriteOnly)?
        {
            fill(&mut file)?;
            return link_into_place(&file, dest);
        }
        let mut builder = tempfile::Builder::new();
        builder.prefix(".tmp");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(0o666));
        }
        // Not listed in the registry: it is held, so no clean-up runs before this file is
        // renamed or (dropped on an error) removed.
        let mut named = builder.tempfile_in(dir)?;
        fill(named.as_file_mut())?;
        crate::cuda::keep_replaced_until_exit(dest);
        named.persist(dest).map(drop).map_err(|e| e.error)
    }
}

/// Gives the anonymous `file` the name `dest`: linked straight to `dest` if nothing is
/// there, else linked to a fresh `.tmpXXXXXX` name beside it and renamed over it.
#[cfg(target_os = "linux")]
fn link_into_place(file: &File, dest: &Path) -> std::io::Result<()> {
    use std::os::{fd::AsRawFd, unix::ffi::OsStrExt};
    let source =
        std::ffi::CString::new(format!("/proc/self/fd/{}", file.as_raw_fd())).expect("no NUL in a number");
    let link = |to: &Path| -> std::io::Result<()> {
        let to = std::ffi::CString::new(to.as_os_str().as_bytes())
            .map_err(|_| std::io::Error::new(ErrorKind::InvalidInput, "a NUL byte in the path"))?;
        // SAFETY: both are NUL-terminated paths that live across the call.
        let status = unsafe {
            libc::linkat(
                libc::AT_FDCWD,
                source.as_ptr(),
                libc::AT_FDCWD,
                to.as_ptr(),
                libc::AT_SYMLINK_FOLLOW,
            )
        };
        if status == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
    };
    match link(dest) {
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
        other => return other,
    }
    // Replace: a fresh name in the same directory (retried while taken), renamed over `dest`.
    // The name is removed again if the rename fails (dropped `NamedTempFile`).
    let named = tempfile::Builder::new().prefix(".tmp").make_in(parent_dir(dest), |path| link(path))?;
    crate::cuda::keep_replaced_until_exit(dest);
    named.persist(dest).map(drop).map_err(|e| e.error)
}

/// Checks that an output can be written to `dest`, writing nothing: [`check_target`], then
/// (for a file to be replaced or created) a temporary file opened and dropped in its
/// directory, so an unwritable directory fails now. A device or FIFO is not opened.
pub fn probe(dest: &Path) -> Result<()> {
    if let Target::Replace(path) = check_target(dest)? {
        let (file, backing) =
            open_temporary(&path, Staging::from_env()).map_err(|e| output_error(dest, describe_io(&e)))?;
        drop(file);
        if let Backing::Named(temp) = backing {
            let mut list = registry();
            unregister(&mut list, &Temporary::File(temp.to_path_buf()));
            drop(temp);
        }
    }
    Ok(())
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.writer.as_mut().expect("writer present until commit").write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.writer.as_mut().expect("writer present until commit").flush()
    }
}

impl Seek for AtomicFile {
    fn seek(&mut self, position: SeekFrom) -> std::io::Result<u64> {
        self.writer.as_mut().expect("writer present until commit").seek(position)
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if let Backing::Named(temp) = std::mem::replace(&mut self.backing, Backing::Direct) {
            let mut list = registry();
            unregister(&mut list, &Temporary::File(temp.to_path_buf()));
            // Unflushed data is discarded; the file is closed, then removed.
            if let Some(writer) = self.writer.take() {
                drop(writer.into_parts());
            }
            drop(temp);
        }
        // An anonymous file vanishes when closed; a direct target is left as it is.
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registered(entry: &Temporary) -> bool {
        registry().contains(entry)
    }

    /// The registry forgets exactly what a commit or an abandonment finished with, and keeps
    /// every other run's temporaries (a long-lived `serve` commits many outputs; a signal
    /// later must not touch what was committed). Tests run in parallel on one registry, so
    /// only this test's own entries are looked at.
    #[test]
    fn commits_and_abandonments_forget_their_own_temporaries_only() {
        let dir = tempfile::tempdir().unwrap();
        let (kept, committed, abandoned) = (
            staging_dir(dir.path()).unwrap(),
            staging_dir(dir.path()).unwrap(),
            staging_dir(dir.path()).unwrap(),
        );
        let created = dir.path().join("frames");
        create_output_dir(&created).unwrap();
        let tree = |p: &Path| Temporary::Tree(p.to_owned());
        assert!(registered(&tree(&kept)) && registered(&tree(&committed)) && registered(&tree(&abandoned)));
        assert!(registered(&Temporary::CreatedDir(created.clone())));

        commit_staged(&committed, Some(&created), || Ok(())).unwrap();
        assert!(!registered(&tree(&committed)) && !registered(&Temporary::CreatedDir(created.clone())));
        assert!(registered(&tree(&kept)) && registered(&tree(&abandoned)));

        abandon_staged(&abandoned, None);
        assert!(!registered(&tree(&abandoned)) && !abandoned.exists());
        assert!(registered(&tree(&kept)));

        // A failed commit removes its staging directory and forgets it too.
        let failing = staging_dir(dir.path()).unwrap();
        assert!(commit_staged(&failing, None, || Err(std::io::Error::other("no"))).is_err());
        assert!(!registered(&tree(&failing)) && !failing.exists());
        abandon_staged(&kept, None);
        assert!(!registered(&tree(&kept)));

        // A directory the run created and left empty goes, and is forgotten.
        let empty = dir.path().join("empty");
        create_output_dir(&empty).unwrap();
        remove_created_dir(&empty);
        assert!(!empty.exists() && !registered(&Temporary::CreatedDir(empty)));

        // A named temporary file of an output dropped unfinished goes, and is forgotten.
        let mut file =
            AtomicFile::create_with(&dir.path().join("o.npz"), Durability::Cached, Staging::Named).unwrap();
        file.write_all(b"half").unwrap();
        let Backing::Named(temp) = &file.backing else { panic!("a named temporary was asked for") };
        let temp = Temporary::File(temp.to_path_buf());
        assert!(registered(&temp));
        drop(file);
        assert!(!registered(&temp));
    }

    /// The longest name a directory entry may have is accepted, one byte more is refused.
    #[test]
    fn names_of_up_to_name_max_bytes_are_accepted() {
        let dir = tempfile::tempdir().unwrap();
        assert!(check_target(&dir.path().join("a".repeat(NAME_MAX))).is_ok());
        let too_long = check_target(&dir.path().join("a".repeat(NAME_MAX + 1))).unwrap_err();
        assert!(too_long.to_string().contains("longer than"), "{too_long}");
    }

    /// A path through a regular file says so, not that a directory is missing.
    #[test]
    fn a_path_through_a_file_is_refused_for_what_it_is() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("file"), b"x").unwrap();
        let refused = check_target(&dir.path().join("file").join("out.gif")).unwrap_err();
        assert!(refused.to_string().contains("a component of the path is not a directory"), "{refused}");
    }

    /// Each kind a user meets gets its own short words; any other keeps the system's text
    /// without the `(os error N)` suffix.
    #[test]
    fn io_errors_are_said_in_a_few_words() {
        // From the bare kind, and from the operating system's error, whose own text differs
        // ("Permission denied"): what a user meets.
        for (kind, errno, words) in [
            (ErrorKind::StorageFull, libc::ENOSPC, "no space left on the device"),
            (ErrorKind::BrokenPipe, libc::EPIPE, "the reading end of the pipe was closed"),
            (ErrorKind::IsADirectory, libc::EISDIR, "it is a directory"),
            (ErrorKind::InvalidFilename, libc::ENAMETOOLONG, "the name is too long"),
            (ErrorKind::PermissionDenied, libc::EACCES, "permission denied"),
            (ErrorKind::ReadOnlyFilesystem, libc::EROFS, "the file system is read-only"),
            (ErrorKind::NotADirectory, libc::ENOTDIR, "a component of the path is not a directory"),
            (ErrorKind::QuotaExceeded, libc::EDQUOT, "the disk quota is exceeded"),
        ] {
            assert_eq!(describe_io(&std::io::Error::from(kind)), words, "{kind:?}");
            assert_eq!(describe_io(&std::io::Error::from_raw_os_error(errno)), words, "errno {errno}");
        }
        // EFBIG, which has no words of its own here: the system's text without the number.
        assert_eq!(describe_io(&std::io::Error::from_raw_os_error(libc::EFBIG)), "File too large");
    }

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

    /// A checkpoint or a saved field into a FIFO is written straight through and only flushed:
    /// fsync of a FIFO fails (EINVAL), so a synced output must not sync a direct target.
    #[test]
    fn a_synced_output_into_a_fifo_is_flushed_not_synced() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: `path` is a NUL-terminated string that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0, "mkfifo");
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        let mut file = AtomicFile::create_synced(&fifo).unwrap();
        assert_eq!(file.via(), Via::Direct);
        file.write_all(b"checkpoint").unwrap();
        file.commit().expect("a synced output into a FIFO commits");
        assert_eq!(reader.join().unwrap(), b"checkpoint");
    }

    #[test]
    fn an_uncommitted_file_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let mut file = AtomicFile::create(&dir.path().join("o.gif")).unwrap();
        file.write_all(b"half").unwrap();
        drop(file);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    /// The names in `dir`, sorted.
    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// The permission bits a plain `File::create` gets in `dir` (0o666 less the umask).
    fn created_mode(dir: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        let probe = dir.join("mode-probe");
        File::create(&probe).unwrap();
        let mode = std::fs::metadata(&probe).unwrap().permissions().mode() & 0o777;
        std::fs::remove_file(&probe).unwrap();
        mode
    }

    /// Writes "new" over an existing "old" with `staging` and checks what the directory holds
    /// while writing and after; returns how the file was written.
    fn replace_with(staging: Staging, durability: Durability) -> Via {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let mode = created_mode(dir.path());
        let dest = dir.path().join("out.npy");
        std::fs::write(&dest, b"old").unwrap();
        let mut file = AtomicFile::create_with(&dest, durability, staging).unwrap();
        file.write_all(b"new data").unwrap();
        file.flush().unwrap();
        let via = file.via();
        let during = names(dir.path());
        match via {
            Via::Anonymous => assert_eq!(during, ["out.npy"], "an anonymous file has no name"),
            _ => {
                assert_eq!(during.len(), 2, "{during:?}");
                assert!(during[0].starts_with(".tmp"), "{during:?}");
            }
        }
        assert_eq!(std::fs::read(&dest).unwrap(), b"old", "the old file until the commit");
        assert_eq!(file.commit().unwrap(), dest);
        assert_eq!(std::fs::read(&dest).unwrap(), b"new data");
        assert_eq!(names(dir.path()), ["out.npy"], "nothing left beside it");
        assert_eq!(std::fs::metadata(&dest).unwrap().permissions().mode() & 0o777, mode);
        // And a new file, straight to its name.
        let fresh = dir.path().join("fresh.gif");
        let mut file = AtomicFile::create_with(&fresh, durability, staging).unwrap();
        file.write_all(b"gif").unwrap();
        file.commit().unwrap();
        assert_eq!(std::fs::read(&fresh).unwrap(), b"gif");
        assert_eq!(names(dir.path()), ["fresh.gif", "out.npy"]);
        via
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn outputs_are_anonymous_until_committed() {
        // ext4, xfs, btrfs and tmpfs (where tests run) all have O_TMPFILE.
        assert_eq!(replace_with(Staging::Anonymous, Durability::Cached), Via::Anonymous);
        assert_eq!(replace_with(Staging::Anonymous, Durability::Synced), Via::Anonymous);
    }

    #[test]
    fn the_named_fallback_replaces_atomically_too() {
        assert_eq!(replace_with(Staging::Named, Durability::Cached), Via::Named);
        assert_eq!(replace_with(Staging::Named, Durability::Synced), Via::Named);
    }

    #[test]
    fn uncommitted_outputs_leave_nothing_either_way() {
        for staging in [Staging::Anonymous, Staging::Named] {
            let dir = tempfile::tempdir().unwrap();
            let dest = dir.path().join("keep.npz");
            std::fs::write(&dest, b"old").unwrap();
            let mut file = AtomicFile::create_with(&dest, Durability::Synced, staging).unwrap();
            file.write_all(&vec![7u8; 1 << 20]).unwrap();
            drop(file);
            assert_eq!(names(dir.path()), ["keep.npz"], "{staging:?}");
            assert_eq!(std::fs::read(&dest).unwrap(), b"old");
        }
    }

    #[test]
    fn outputs_seek_back() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("video.mp4");
        let mut file = AtomicFile::create(&dest).unwrap();
        file.write_all(b"xxxx tail").unwrap();
        file.seek(SeekFrom::Start(0)).unwrap();
        file.write_all(b"head").unwrap();
        file.commit().unwrap();
        assert_eq!(std::fs::read(&dest).unwrap(), b"head tail");
    }

    #[test]
    fn put_file_names_only_a_whole_file_and_replaces_like_rename() {
        let dir = tempfile::tempdir().unwrap();
        let [new, old, link, elsewhere] =
            ["new.png", "old.png", "link.png", "elsewhere"].map(|name| dir.path().join(name));
        std::fs::write(&old, b"old").unwrap();
        std::fs::write(&elsewhere, b"elsewhere").unwrap();
        std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
        let held = hold_outputs();
        for dest in [&new, &old, &link] {
            held.put_file(dest, |file| file.write_all(b"frame")).unwrap();
        }
        // A fill that fails leaves nothing, and the name as it was.
        let failed = held
            .put_file(&old, |file| file.write_all(b"half").and(Err(std::io::Error::other("full"))))
            .unwrap_err();
        drop(held);
        assert_eq!(failed.to_string(), "full");
        assert_eq!(names(dir.path()), ["elsewhere", "link.png", "new.png", "old.png"]);
        for dest in [&new, &old, &link] {
            assert_eq!(std::fs::read(dest).unwrap(), b"frame", "{dest:?}");
        }
        assert!(!std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link is replaced");
        assert_eq!(std::fs::read(&elsewhere).unwrap(), b"elsewhere", "not followed");
    }

    /// Which removals are tried again: a directory still being filled (the encoder threads'
    /// frames), or any error but the path being gone already.
    #[test]
    fn a_removal_is_tried_again_unless_the_path_is_gone() {
        assert!(!worth_another_try(&std::io::Error::from(ErrorKind::NotFound)));
        assert!(worth_another_try(&std::io::Error::from(ErrorKind::DirectoryNotEmpty)));
        assert!(worth_another_try(&std::io::Error::from(ErrorKind::PermissionDenied)));
        // A created directory that another thread empties 20 ms later is gone at the end.
        let dir = tempfile::tempdir().unwrap();
        let created = dir.path().join("frames");
        std::fs::create_dir(&created).unwrap();
        let frame = created.join("frame_0001.png");
        std::fs::write(&frame, b"frame").unwrap();
        let encoder = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(20));
            std::fs::remove_file(frame).unwrap();
        });
        let attempts = remove_temporary(&Temporary::CreatedDir(created.clone()));
        encoder.join().unwrap();
        assert!(!created.exists(), "removed once emptied");
        assert!((2..100).contains(&attempts), "{attempts} attempts");
        // One that is gone already is not an error, nor tried again; one that stays (a
        // created directory someone else filled) is given up after 100 attempts.
        assert_eq!(remove_temporary(&Temporary::Tree(created)), 1);
        let kept = dir.path().join("kept");
        std::fs::create_dir_all(kept.join("theirs")).unwrap();
        assert_eq!(remove_temporary(&Temporary::CreatedDir(kept.clone())), 100);
        assert!(kept.join("theirs").exists());
    }

    /// Where `O_TMPFILE` is refused (a file system without it, an old kernel, a seccomp
    /// filter), an output falls back to a named temporary for exactly the errors that mean
    /// so, and any other error is the run's. Provoked on this thread alone by a seccomp
    /// filter that fails `openat` with that flag (seccomp filters are per thread).
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    #[test]
    fn o_tmpfile_refusals_fall_back_to_named_temporaries() {
        for (errno, falls_back) in
            [(libc::EOPNOTSUPP, true), (libc::EISDIR, true), (libc::EINVAL, true), (libc::EACCES, false)]
        {
            let dir = tempfile::tempdir().unwrap();
            let dest = dir.path().join("a.npy");
            let opened = std::thread::spawn(move || {
                refuse_o_tmpfile(errno)?;
                open_temporary(&dest, Staging::Anonymous)
                    .map(|(_, backing)| matches!(backing, Backing::Named(_)))
            })
            .join()
            .unwrap();
            match opened {
                Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {
                    eprintln!("skipped: this kernel has no seccomp filters");
                    return;
                }
                Ok(named) => assert!(falls_back && named, "errno {errno}: named {named}"),
                Err(e) => assert!(!falls_back && e.raw_os_error() == Some(errno), "errno {errno}: {e}"),
            }
        }
    }

    /// Makes `openat` with `O_TMPFILE` fail with `errno` on this thread from now on (and
    /// lets every other call through). `ENOSYS` where the kernel has no seccomp filters.
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    fn refuse_o_tmpfile(errno: i32) -> std::io::Result<()> {
        // seccomp_data: nr at 0, arch at 4, args[i] at 16 + 8i (openat's flags: args[2], whose
        // low word comes first on these little-endian machines).
        #[cfg(target_arch = "x86_64")]
        const AUDIT_ARCH: u32 = 0xC000_003E;
        #[cfg(target_arch = "aarch64")]
        const AUDIT_ARCH: u32 = 0xC000_00B7;
        let statement = |code: u32, k: u32| libc::sock_filter { code: code as u16, jt: 0, jf: 0, k };
        let jump = |code: u32, k: u32, jt: u8, jf: u8| libc::sock_filter { code: code as u16, jt, jf, k };
        let (load, jeq, jset, ret) = (
            libc::BPF_LD | libc::BPF_W | libc::BPF_ABS,
            libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K,
            libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K,
            libc::BPF_RET | libc::BPF_K,
        );
        let only_tmpfile = (libc::O_TMPFILE & !libc::O_DIRECTORY) as u32;
        let mut program = [
            statement(load, 4),
            jump(jeq, AUDIT_ARCH, 0, 5),
            statement(load, 0),
            jump(jeq, libc::SYS_openat as u32, 0, 3),
            statement(load, 32),
            jump(jset, only_tmpfile, 0, 1),
            statement(ret, libc::SECCOMP_RET_ERRNO | errno as u32),
            statement(ret, libc::SECCOMP_RET_ALLOW),
        ];
        let filter = libc::sock_fprog { len: program.len() as u16, filter: program.as_mut_ptr() };
        // SAFETY: prctl with the documented arguments; the program outlives the call (the
        // kernel copies it).
        unsafe {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::prctl(
                    libc::PR_SET_SECCOMP,
                    libc::SECCOMP_MODE_FILTER,
                    &filter as *const libc::sock_fprog,
                ) != 0
            {
                return match std::io::Error::last_os_error() {
                    e if e.raw_os_error() == Some(libc::EINVAL) => {
                        Err(std::io::Error::from_raw_os_error(libc::ENOSYS))
                    }
                    e => Err(e),
                };
            }
        }
        Ok(())
    }

    /// Where linking the finished file in fails for another reason than a file of that name
    /// (here its directory was removed meanwhile), that error is the commit's, as the system
    /// said it: no detour through a temporary name that never existed.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_failed_link_reports_its_own_error() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("gone");
        std::fs::create_dir(&gone).unwrap();
        let file =
            open_anonymous(&gone, Access::WriteOnly).unwrap().expect("O_TMPFILE on the test's file system");
        std::fs::remove_dir(&gone).unwrap();
        let error = link_into_place(&file, &gone.join("a.npy")).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::NotFound);
        assert_eq!(error.to_string(), std::io::Error::from_raw_os_error(libc::ENOENT).to_string());
    }

    /// `flush` passes the buffered bytes on to the file (nothing in the program needs it
    /// before `commit`, which flushes too, but a writer that ignored it would be a trap).
    #[test]
    fn flush_reaches_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut file = AtomicFile::create(&dir.path().join("a.npy")).unwrap();
        file.write_all(b"data").unwrap();
        let on_file = |file: &AtomicFile| file.writer.as_ref().unwrap().get_ref().metadata().unwrap().len();
        assert_eq!(on_file(&file), 0, "buffered");
        file.flush().unwrap();
        assert_eq!(on_file(&file), 4);
    }

    #[test]
    fn a_probe_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        probe(&dir.path().join("a.npy")).unwrap();
        probe(Path::new("/dev/null")).unwrap();
        assert!(names(dir.path()).is_empty());
        let message = probe(&dir.path().join("missing/a.npy")).unwrap_err().to_string();
        assert!(message.contains("does not exist"), "{message}");
    }
}
