//! The CUDA driver's teardown after the process has exited, not before it. A short command's
//! last 0.1 s on a GPU is the driver releasing its context and closing its device files
//! ([docs/startup.md](../../../docs/startup.md#the-drivers-teardown-after-exit)); nothing the
//! user waits for needs them. A program that ends with [`ExitTeardown`] hands them to a child
//! process that holds them until the program has exited: the teardown begins as the program's
//! exit closes its files and runs while its exit status goes to whoever waits for it.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set to 1 to tear the driver down in the process, before it exits, as without
/// [`ExitTeardown`] (for a script that needs the GPU free the moment the program has exited).
pub const IN_PROCESS_VAR: &str = "RUST_GPU_SIM_TEARDOWN_IN_PROCESS";

/// Whether this process hands the driver's teardown to a child at exit ([`ExitTeardown`]).
static HANDED_TO_CHILD_AT_EXIT: AtomicBool = AtomicBool::new(false);
/// Set when this process opened a GPU: a run on the CPU has no driver to hand over, and
/// nothing to leave to exit (its memory is freed as before).
static GPU_OPENED: AtomicBool = AtomicBool::new(false);
/// Set when a GPU was opened in a compute mode other than the default: there the next
/// process could not have the GPU while the child still holds this one's context.
static KEPT_IN_PROCESS: AtomicBool = AtomicBool::new(false);

/// Files that an output replaced, held open until this process has exited and then closed by
/// the teardown child ([`keep_replaced_until_exit`]): the output's path, the file, its bytes.
static REPLACED: Mutex<Vec<(PathBuf, OwnedFd, u64)>> = Mutex::new(Vec::new());
/// At most this many replaced files, of at most this many bytes in all, are held (one per
/// output path: a path replaced again frees the copy held before, as its rename did).
const MOST_REPLACED_HELD: usize = 16;
const MOST_REPLACED_BYTES: u64 = 256 << 20;

/// Whether the driver's teardown goes to a child at exit.
fn hands_over() -> bool {
    hands_over_when(
        HANDED_TO_CHILD_AT_EXIT.load(Ordering::Relaxed),
        GPU_OPENED.load(Ordering::Relaxed),
        KEPT_IN_PROCESS.load(Ordering::Relaxed),
    )
}

/// [`hands_over`] from its three facts: the program asked for the hand-over, opened a GPU,
/// and opened none that keeps the teardown in the process.
fn hands_over_when(asked: bool, gpu_opened: bool, kept_in_process: bool) -> bool {
    asked && gpu_opened && !kept_in_process
}

/// Records that this process opened a GPU, and its compute mode
/// (`CU_DEVICE_ATTRIBUTE_COMPUTE_MODE`, -1 where it could not be read): in any mode but the
/// default (0: several processes at once), for instance exclusive-process, the teardown stays
/// in this process, so that the GPU is free for the next one when this one has exited.
pub(crate) fn note_gpu_opened(mode: i32) {
    GPU_OPENED.store(true, Ordering::Relaxed);
    if mode != 0 {
        KEPT_IN_PROCESS.store(true, Ordering::Relaxed);
    }
}

/// Called just before an output is renamed over `dest`: in a program that hands the driver's
/// teardown to a child at exit, holds the file now at `dest` open until this process has
/// exited, so that the rename only unlinks it and the child frees its blocks and page cache
/// after exit. A rename over a 31 MB GIF (the default job's, replacing the previous run's)
/// otherwise frees it in the renaming call: 20-24 ms on an H100 host's disk, 15-19 ms on the
/// build machine's ([docs/startup.md](../../../docs/startup.md#the-replaced-output-after-exit)).
///
/// One copy is held per path: where `dest` was replaced before in this run (a checkpoint
/// written every N steps, `bench encode`'s repeats), the copy held then is closed now, freed
/// here as its rename would have freed it. Nothing is held elsewhere: no hand-over, `dest`
/// not a regular file with one name, not on a local file system (on NFS an open file that is
/// renamed over is kept under a `.nfs` name in the directory instead), or a file that would
/// take the held files past 16 or 256 MiB. A hold taken before a rename that then fails stays
/// until exit (the file is still in place; it costs a descriptor). Where the hand-over does
/// not happen after all (no driver file open at exit, no child), the held files close with
/// this process, freed in its exit instead of in the renames.
pub(crate) fn keep_replaced_until_exit(dest: &Path) {
    if let Some((file, bytes)) = hold_replaced_when(hands_over(), dest) {
        let mut held = REPLACED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        hold_one_per_path(&mut held, dest, file, bytes);
    }
}

/// Adds `file` (the copy replaced at `dest`, of `bytes`) to `held`, closing the copy held
/// before for the same path, unless that would take `held` past [`MOST_REPLACED_HELD`] files
/// or [`MOST_REPLACED_BYTES`] (then `file` is closed here).
fn hold_one_per_path(held: &mut Vec<(PathBuf, OwnedFd, u64)>, dest: &Path, file: OwnedFd, bytes: u64) {
    held.retain(|(path, _, _)| path != dest);
    let total: u64 = held.iter().map(|(_, _, bytes)| bytes).sum();
    if held.len() < MOST_REPLACED_HELD && total + bytes <= MOST_REPLACED_BYTES {
        held.push((dest.to_owned(), file, bytes));
    }
}

/// File systems (`statfs`'s `f_type`) where a file renamed over while open is freed at its
/// last close, with nothing left in the directory: ext2/3/4, XFS, Btrfs, tmpfs, overlayfs,
/// ZFS, F2FS.
const LOCAL_FILE_SYSTEMS: [i64; 7] =
    [0xEF53, 0x5846_5342, 0x9123_683E, 0x0102_1994, 0x794C_7630, 0x2FC1_2FC1, 0xF2F5_2010];

/// [`keep_replaced_until_exit`]'s file and the bytes it holds on disk: `dest` opened as a path
/// only (`O_PATH`: no read permission needed, nothing read), where `handing_over` and it is a
/// regular file whose one name is `dest` (the rename over it would free it), on one of the
/// [`LOCAL_FILE_SYSTEMS`]; `None` otherwise.
fn hold_replaced_when(handing_over: bool, dest: &Path) -> Option<(OwnedFd, u64)> {
    use std::os::{fd::FromRawFd, unix::ffi::OsStrExt};
    if !handing_over {
        return None;
    }
    let path = std::ffi::CString::new(dest.as_os_str().as_bytes()).ok()?;
    // SAFETY: a NUL-terminated path that lives across the call.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC) };
    if fd < 0 {
        return None;
    }
    // SAFETY: `fd` was just opened and is ours alone.
    let file = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: `stat` is a plain struct the call fills in.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: an open descriptor (fstat takes an O_PATH one since Linux 3.6) and a valid stat.
    if unsafe { libc::fstat(file.as_raw_fd(), &mut stat) } != 0 {
        return None;
    }
    if stat.st_mode & libc::S_IFMT != libc::S_IFREG || stat.st_nlink != 1 {
        return None;
    }
    // SAFETY: `statfs` is a plain struct the call fills in.
    let mut fs: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: an open descriptor (fstatfs takes an O_PATH one) and a valid statfs.
    if unsafe { libc::fstatfs(file.as_raw_fd(), &mut fs) } != 0
        || !LOCAL_FILE_SYSTEMS.contains(&(fs.f_type as i64))
    {
        return None;
    }
    let bytes = (stat.st_blocks as u64).saturating_mul(512).max(stat.st_size as u64);
    Some((file, bytes))
}

/// Lets go of what a finished run holds on a GPU (its simulation and device) when nothing is
/// left to overlap its release with: drops it, releasing the context, or, in a program that
/// hands the driver's teardown to a child at exit ([`ExitTeardown`]), leaves it to exit (a
/// release here would only take the time that the hand-over saves); the same rule as
/// [`release_or_let_go`], for a value.
pub fn let_go<T>(held: T) {
    release_or_let_go(move || drop(held));
}

/// Runs `release` (which drops what a finished run holds on a GPU: its simulation and
/// device), or, in a program that hands the driver's teardown to a child at exit
/// ([`ExitTeardown`]), leaves what it holds to exit without running it. There a release here,
/// even one overlapping the encoders' last frames, costs more than it saves: on an H100 the
/// default GIF job took 0.31 s releasing while encoding against 0.30 s leaving the context
/// to the child, run alone, and 0.40 s against 0.26 s run back to back (medians of 9 and 5;
/// docs/startup.md). Anywhere else (no GPU opened, no hand-over) it runs here, so a library's
/// caller keeps no context it gave up. For a process's last run only: a run left to exit is
/// never released.
pub fn release_or_let_go(release: impl FnOnce()) {
    release_unless_left(hands_over(), release);
}

/// Runs `release`, or, where `left_to_exit`, neither runs nor drops it (nor what it holds).
fn release_unless_left(left_to_exit: bool, release: impl FnOnce()) {
    if left_to_exit {
        std::mem::forget(release);
    } else {
        release();
    }
}

/// Made by a program's `main` that exits when it is dropped: on drop, after every output is
/// finished, it hands the CUDA driver's files to a child process (`hand_to_child`) where
/// this process opened the driver, with the outputs its renames replaced
/// ([`keep_replaced_until_exit`]). Meanwhile finished runs leave their contexts to exit
/// ([`let_go`], [`release_or_let_go`]). Nothing is handed over where [`IN_PROCESS_VAR`]
/// is 1, or where a GPU was opened in a compute mode other than the default
/// (noted when it is opened).
#[must_use = "the hand-over happens when the value is dropped, at the end of `main`"]
pub struct ExitTeardown(());

impl ExitTeardown {
    /// Starts leaving GPU contexts to exit (unless [`IN_PROCESS_VAR`] is 1); the hand-over
    /// happens on drop.
    pub fn hand_to_child() -> Self {
        let in_process = std::env::var(IN_PROCESS_VAR).is_ok_and(|v| v == "1");
        HANDED_TO_CHILD_AT_EXIT.store(!in_process, Ordering::Relaxed);
        ExitTeardown(())
    }
}

impl Drop for ExitTeardown {
    fn drop(&mut self) {
        if !hands_over() {
            return;
        }
        // No driver files: the driver was never opened, and there is nothing to tear down
        // (the replaced outputs held then close with this process, as they would have been
        // freed in their renames).
        let mut files = driver_files();
        if !files.is_empty() {
            let replaced = REPLACED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            files.extend(replaced.iter().map(|(_, file, _)| file.as_raw_fd()));
            hand_to_child(&files, linger_ms());
        }
    }
}

/// This process's open files that are the CUDA driver's (`/dev/nvidia*`, `/dev/nvidia-caps/*`),
/// from `/proc/self/fd`.
fn driver_files() -> Vec<RawFd> {
    let Ok(entries) = std::fs::read_dir("/proc/self/fd") else { return Vec::new() };
    let mut files: Vec<RawFd> = entries
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let fd = entry.file_name().to_str()?.parse().ok()?;
            let target = std::fs::read_link(entry.path()).ok()?;
            target.starts_with("/dev").then_some(())?;
            target.file_name()?.to_str()?.starts_with("nvidia").then_some(fd)
        })
        .collect();
    files.sort_unstable();
    files
}

/// What the child of [`hand_to_child`] does, all decided before it starts: it allocates
/// nothing.
struct ChildPlan {
    /// `/dev/null`, for its standard streams.
    null: RawFd,
    /// The reading end of the pipe whose end of file says the parent has exited.
    alive_read: RawFd,
    /// The ranges of descriptors it closes (`first..=last`).
    closed: Vec<(u32, u32)>,
    /// How long it waits after the parent's exit before it exits itself ([`LINGER_VAR`]).
    linger: libc::timespec,
}

/// Set to a number of milliseconds for the teardown child to wait that long (at most 10 s)
/// after the program has exited before it closes what it holds (test only: the GPU test then
/// reads the child's files before its exit has begun; otherwise the child's exit races the
/// reading).
pub const LINGER_VAR: &str = "RUST_GPU_SIM_TEARDOWN_LINGER_MS";

/// [`LINGER_VAR`]'s wait in milliseconds (none where it is unset or not a number).
fn linger_ms() -> u32 {
    // At most 10 s: the child blocks every signal, so only SIGKILL would end a longer wait.
    std::env::var(LINGER_VAR).ok().and_then(|v| v.parse::<u32>().ok()).unwrap_or(0).min(10_000)
}

/// Forks a child that keeps the files `kept` open until this process has exited, then exits
/// (`linger_ms` milliseconds later: [`LINGER_VAR`], for a test). It keeps no other file of
/// ours: its standard streams become `/dev/null` (so `kept` descriptors 0 to 2 are not kept)
/// and every other descriptor is closed in it. Returns `None`
/// where no child could be made.
///
/// `fork` copies the page tables of the memory this process has touched, in this process,
/// before it exits (a copy of this function on the 2-core build machine: 14 ms with 1 GiB
/// touched, 99 ms with 8 GiB).
///
/// Returns the child's process id and our end of the pipe whose end of file tells it that
/// we have exited: only we hold it, and it closes with this process (a caller that is not
/// about to exit closes it to let the child go).
fn hand_to_child(kept: &[RawFd], linger_ms: u32) -> Option<(libc::pid_t, RawFd)> {
    // SAFETY: plain system calls on descriptors this function creates.
    let null = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
    if null < 0 {
        return None;
    }
    let mut alive = [0; 2];
    // SAFETY: `alive` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(alive.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        // SAFETY: `null` is ours.
        unsafe { libc::close(null) };
        return None;
    }
    let [mut alive_read, alive_write] = alive;
    if alive_read < 3 {
        // A process started with its standard streams closed: the child's own would replace it.
        // SAFETY: duplicating our descriptor to one numbered 3 or above, then closing the old.
        let moved = unsafe { libc::fcntl(alive_read, libc::F_DUPFD_CLOEXEC, 3) };
        unsafe { libc::close(alive_read) };
        alive_read = moved;
    }
    if alive_read < 0 {
        // SAFETY: ours, not used again.
        unsafe {
            libc::close(null);
            libc::close(alive_write);
        }
        return None;
    }
    let plan = ChildPlan {
        null,
        alive_read,
        closed: closed_ranges(kept, alive_read),
        linger: libc::timespec {
            tv_sec: (linger_ms / 1000).into(),
            tv_nsec: (linger_ms % 1000 * 1_000_000).into(),
        },
    };
    // SAFETY: the child runs `hold_until_parent_exits`, which makes only system calls and
    // allocates nothing, as the child of a multi-threaded process must.
    let child = unsafe { libc::fork() };
    if child == 0 {
        hold_until_parent_exits(&plan);
    }
    // SAFETY: the child's copies of these are its own; ours are not used again.
    unsafe {
        libc::close(null);
        libc::close(alive_read);
    }
    if child < 0 {
        // SAFETY: no child holds it.
        unsafe { libc::close(alive_write) };
        return None;
    }
    Some((child, alive_write))
}

/// The ranges of descriptors the child closes: all from 3 up but `kept` and `alive_read`.
fn closed_ranges(kept: &[RawFd], alive_read: RawFd) -> Vec<(u32, u32)> {
    let mut keep: Vec<RawFd> = kept.iter().copied().filter(|&fd| fd > 2).chain([alive_read]).collect();
    keep.sort_unstable();
    keep.dedup();
    let mut closed = Vec::with_capacity(keep.len() + 1);
    let mut from = 3;
    for &fd in &keep {
        if fd > from {
            closed.push((from as u32, (fd - 1) as u32));
        }
        from = from.max(fd + 1);
    }
    closed.push((from as u32, u32::MAX));
    closed
}

/// The child of [`hand_to_child`]: signals blocked (a terminal's Ctrl-C must not run our
/// handlers in it), standard streams `/dev/null`, every descriptor but the kept ones closed;
/// then it waits for the end of file on `alive_read` and exits.
fn hold_until_parent_exits(plan: &ChildPlan) -> ! {
    // SAFETY: system calls only, on descriptors of the child's own.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::sigprocmask(libc::SIG_BLOCK, &all, std::ptr::null_mut());
        for fd in 0..3 {
            libc::dup2(plan.null, fd);
        }
        for &(first, last) in &plan.closed {
            close_range(first, last);
        }
        // Returns 0 (end of file) once no writing end is open: when the parent has exited. With
        // every signal blocked nothing interrupts it; an error ends the wait after a few tries.
        let mut byte = 0u8;
        for _ in 0..100 {
            if libc::read(plan.alive_read, (&raw mut byte).cast(), 1) >= 0 {
                break;
            }
        }
        if plan.linger.tv_sec > 0 || plan.linger.tv_nsec > 0 {
            libc::nanosleep(&plan.linger, std::ptr::null_mut());
        }
        libc::_exit(0)
    }
}

/// Closes the descriptors `first..=last`: `close_range` where the kernel has it (Linux 5.9),
/// else one `close` each up to the highest a process may have open (at most 65,536).
/// Async-signal-safe.
unsafe fn close_range(first: u32, last: u32) {
    // SAFETY: a system call on plain integers.
    if unsafe { libc::syscall(libc::SYS_close_range, first, last, 0) } == 0 {
        return;
    }
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: `limit` is a valid rlimit to write.
    let highest = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0 {
        limit.rlim_cur.min(1 << 16) as u32
    } else {
        1024
    };
    for fd in first..=last.min(highest) {
        // SAFETY: closing a descriptor number, open or not.
        unsafe { libc::close(fd as i32) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn pipe() -> (RawFd, RawFd) {
        let mut ends = [0; 2];
        // O_CLOEXEC: programs other tests start in this process do not inherit them.
        assert_eq!(unsafe { libc::pipe2(ends.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
        (ends[0], ends[1])
    }

    /// Whether `read_end` reaches end of file within `wait` (its writers all closed).
    fn ends_within(read_end: RawFd, wait: Duration) -> bool {
        let started = Instant::now();
        loop {
            let mut poll = libc::pollfd { fd: read_end, events: libc::POLLIN, revents: 0 };
            if unsafe { libc::poll(&mut poll, 1, 10) } == 1 {
                let mut byte = 0u8;
                return unsafe { libc::read(read_end, (&raw mut byte).cast(), 1) } == 0;
            }
            if started.elapsed() > wait {
                return false;
            }
        }
    }

    /// The child holds the files it is given and no other, until it is let go.
    #[test]
    fn the_child_holds_only_the_kept_files_until_let_go() {
        let (kept_read, kept_write) = pipe();
        let (other_read, other_write) = pipe();
        let (child, alive_write) = hand_to_child(&[kept_write], 0).expect("a child process");
        assert!(child > 0);
        // Our writing ends closed: only the child can hold a pipe open now.
        unsafe {
            libc::close(kept_write);
            libc::close(other_write);
        }
        assert!(ends_within(other_read, Duration::from_secs(10)), "the child kept a file it was not given");
        assert!(
            !ends_within(kept_read, Duration::from_millis(200)),
            "the child let go of a file it was given"
        );
        // Let go: our end of its pipe closed, the child exits.
        unsafe { libc::close(alive_write) };
        let mut status = 0;
        while unsafe { libc::waitpid(child, &mut status, 0) } != child {
            assert_eq!(std::io::Error::last_os_error().kind(), std::io::ErrorKind::Interrupted);
        }
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "the child's status {status:#x}");
        assert!(ends_within(kept_read, Duration::from_secs(10)), "the child's exit closes what it held");
        unsafe {
            libc::close(kept_read);
            libc::close(other_read);
        }
    }

    /// Asked to linger ([`LINGER_VAR`]), the child holds the kept files that long after it is
    /// let go, then exits.
    #[test]
    fn the_child_lingers_after_it_is_let_go_when_asked() {
        let (kept_read, kept_write) = pipe();
        let (child, alive_write) = hand_to_child(&[kept_write], 300).expect("a child process");
        unsafe { libc::close(kept_write) };
        let let_go = Instant::now();
        unsafe { libc::close(alive_write) };
        assert!(ends_within(kept_read, Duration::from_secs(10)), "the child's exit closes what it held");
        let held = let_go.elapsed();
        assert!(held >= Duration::from_millis(300), "held {held:?} after it was let go");
        let mut status = 0;
        while unsafe { libc::waitpid(child, &mut status, 0) } != child {
            assert_eq!(std::io::Error::last_os_error().kind(), std::io::ErrorKind::Interrupted);
        }
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "the child's status {status:#x}");
        unsafe { libc::close(kept_read) };
    }

    /// The child closes every descriptor from 3 up but the kept ones and its pipe's end:
    /// adjacent, repeated, unordered and standard-stream descriptors among them.
    #[test]
    fn the_child_closes_every_descriptor_but_the_kept_ones() {
        assert_eq!(closed_ranges(&[], 3), vec![(4, u32::MAX)]);
        assert_eq!(closed_ranges(&[9, 5, 6, 9, 1], 7), vec![(3, 4), (8, 8), (10, u32::MAX)]);
        assert_eq!(closed_ranges(&[0, 2], 12), vec![(3, 11), (13, u32::MAX)]);
    }

    /// A replaced output held for the child stays whole past the rename over it (it is freed
    /// when the last holder closes it); nothing is held where no hand-over was asked for, nor
    /// where the path is missing, a directory, a symbolic link or a file with a second name
    /// (a rename over it frees nothing).
    #[test]
    fn a_replaced_output_is_held_whole_past_the_rename_over_it() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("o.gif");
        std::fs::write(&dest, b"the previous run's").unwrap();
        assert!(hold_replaced_when(false, &dest).is_none());
        let (held, bytes) = hold_replaced_when(true, &dest).expect("a regular file with one name is held");
        assert!(bytes >= 18, "{bytes} bytes held");
        let fresh = dir.path().join("fresh");
        std::fs::write(&fresh, b"this run's").unwrap();
        std::fs::rename(&fresh, &dest).unwrap();
        let mut stat: libc::stat = unsafe { std::mem::zeroed() };
        assert_eq!(unsafe { libc::fstat(held.as_raw_fd(), &mut stat) }, 0);
        assert_eq!(stat.st_nlink, 0, "unlinked by the rename");
        let previous = std::fs::read(format!("/proc/self/fd/{}", held.as_raw_fd())).unwrap();
        assert_eq!(previous, b"the previous run's");
        assert_eq!(std::fs::read(&dest).unwrap(), b"this run's");

        assert!(hold_replaced_when(true, &dir.path().join("absent")).is_none());
        assert!(hold_replaced_when(true, dir.path()).is_none());
        let link = dir.path().join("link.gif");
        symlink(&dest, &link).unwrap();
        assert!(hold_replaced_when(true, &link).is_none());
        std::fs::hard_link(&dest, dir.path().join("second name")).unwrap();
        assert!(hold_replaced_when(true, &dest).is_none());
    }

    /// One copy is held per path (the one before is closed), and none past the limits.
    #[test]
    fn one_replaced_copy_is_held_per_path_within_the_limits() {
        use std::os::fd::FromRawFd;
        // Pipes' writing ends stand for held files: a closed one ends its reading end.
        let end = || {
            let (read, write) = pipe();
            (read, unsafe { OwnedFd::from_raw_fd(write) })
        };
        // A closed writing end shows at once; an open one is given 50 ms.
        let closed = |read: RawFd| ends_within(read, Duration::from_millis(50));
        let mut held = Vec::new();
        let (first_read, first) = end();
        hold_one_per_path(&mut held, Path::new("o.gif"), first, 31 << 20);
        let (second_read, second) = end();
        hold_one_per_path(&mut held, Path::new("o.gif"), second, 31 << 20);
        assert!(closed(first_read), "the copy held before for the same path is closed");
        assert!(!closed(second_read), "the latest copy is held");
        let (big_read, big) = end();
        hold_one_per_path(&mut held, Path::new("big.npz"), big, MOST_REPLACED_BYTES);
        assert!(closed(big_read), "past the bytes' limit: not held");
        let mut reads = vec![second_read, first_read, big_read];
        for i in 1..MOST_REPLACED_HELD + 1 {
            let (read, file) = end();
            hold_one_per_path(&mut held, Path::new(&format!("frame-{i}.png")), file, 1);
            assert_eq!(closed(read), i >= MOST_REPLACED_HELD, "file {i}");
            reads.push(read);
        }
        assert_eq!(held.len(), MOST_REPLACED_HELD);
        drop(held);
        for read in reads {
            unsafe { libc::close(read) };
        }
    }

    /// Counts its drops: what a finished run holds.
    struct Counted<'a>(&'a std::cell::Cell<u32>);

    impl Drop for Counted<'_> {
        fn drop(&mut self) {
            self.0.set(self.0.get() + 1);
        }
    }

    /// Without an [`ExitTeardown`] (a library's caller, a test), a finished run's GPU is
    /// dropped, not left to exit.
    #[test]
    fn let_go_drops_where_nothing_is_handed_to_a_child() {
        let drops = std::cell::Cell::new(0);
        let_go(Counted(&drops));
        assert_eq!(drops.get(), 1);
    }

    /// Only a program that asked for the hand-over and opened a GPU, none in an exclusive
    /// compute mode, leaves its runs to exit: a CPU run is dropped as before.
    #[test]
    fn runs_are_left_to_exit_only_after_a_gpu_was_opened_for_the_hand_over() {
        assert!(hands_over_when(true, true, false));
        for (asked, opened, kept) in [(true, false, false), (false, true, false), (true, true, true)] {
            assert!(!hands_over_when(asked, opened, kept), "{asked} {opened} {kept}");
        }
    }

    /// A run's release is run where the teardown stays in the process, and neither run nor
    /// its simulation dropped where it is left to exit.
    #[test]
    fn a_release_runs_unless_the_run_is_left_to_exit() {
        for left in [false, true] {
            let (drops, runs) = (std::cell::Cell::new(0), std::cell::Cell::new(0));
            let held = Counted(&drops);
            release_unless_left(left, || {
                runs.set(1);
                drop(held);
            });
            let want = if left { 0 } else { 1 };
            assert_eq!((runs.get(), drops.get()), (want, want), "left to exit: {left}");
        }
    }
}
