//! The CUDA driver's teardown after the process has exited, not before it. A short command's
//! last 0.1 s on a GPU is the driver releasing its context and closing its device files
//! ([docs/startup.md](../../../docs/startup.md#cold-start)); nothing the user waits for needs
//! them. A program that ends with [`ExitTeardown`] hands them to a child process that holds
//! them until the program has exited: the teardown then runs when the child exits, after the
//! program's exit status has reached whoever waits for it.

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether this process hands the driver's teardown to a child at exit ([`ExitTeardown`]).
static HANDED_TO_CHILD_AT_EXIT: AtomicBool = AtomicBool::new(false);

/// Lets go of what a finished run holds on a GPU (its simulation and device) when nothing is
/// left to overlap its release with: drops it, releasing the context, or, in a program that
/// hands the driver's teardown to a child at exit ([`ExitTeardown`]), leaves it to exit (a
/// release here would only take the time that the hand-over saves). A run whose encoders are
/// still busy releases meanwhile instead ([`crate::driver::Finishing::finish_while`]).
pub fn let_go<T>(held: T) {
    if HANDED_TO_CHILD_AT_EXIT.load(Ordering::Relaxed) {
        std::mem::forget(held);
    } else {
        drop(held);
    }
}

/// Made by a program's `main` that exits when it is dropped: on drop, after every output is
/// finished, it hands the CUDA driver's files to a child process ([`hand_to_child`]) where
/// this process opened the driver. Meanwhile finished runs with nothing left to overlap
/// leave their contexts to exit ([`let_go`]).
#[must_use = "the hand-over happens when the value is dropped, at the end of `main`"]
pub struct ExitTeardown(());

impl ExitTeardown {
    /// Starts leaving GPU contexts to exit; the hand-over happens on drop.
    pub fn hand_to_child() -> Self {
        HANDED_TO_CHILD_AT_EXIT.store(true, Ordering::Relaxed);
        ExitTeardown(())
    }
}

impl Drop for ExitTeardown {
    fn drop(&mut self) {
        // No driver files: the driver was never opened, and there is nothing to tear down.
        let files = driver_files();
        if !files.is_empty() {
            hand_to_child(&files);
        }
    }
}

/// This process's open files that are the CUDA driver's (`/dev/nvidia*`), from `/proc/self/fd`.
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

/// Forks a child that keeps the files `kept` open (and no other: its standard streams become
/// `/dev/null`, every other file of ours is closed in it) until this process has exited, then
/// exits. Returns the child's process id, or `None` where no child could be made.
///
/// The child learns of our exit from a pipe whose writing end only we hold: [`Holder`] owns
/// it, and it closes with this process (or when the holder is dropped).
pub fn hand_to_child(kept: &[RawFd]) -> Option<Holder> {
    // Made before the fork: the child calls nothing but async-signal-safe system calls.
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
    let [alive_read, alive_write] = alive;
    // The ranges of descriptors the child closes: all from 3 up except `kept` and the pipe's
    // reading end (computed here: the child allocates nothing).
    let mut keep: Vec<RawFd> = kept.iter().copied().filter(|&fd| fd > 2).chain([alive_read]).collect();
    keep.sort_unstable();
    keep.dedup();
    let mut closed = Vec::with_capacity(keep.len() + 1);
    let mut from = 3;
    for &fd in &keep {
        if fd > from {
            closed.push((from as u32, (fd - 1) as u32));
        }
        from = fd + 1;
    }
    closed.push((from as u32, u32::MAX));
    // SAFETY: the child runs only async-signal-safe calls (dup2, close_range, read, _exit), as
    // a child of a multi-threaded process must, and touches no memory allocated after fork.
    match unsafe { libc::fork() } {
        0 => unsafe {
            for fd in 0..3 {
                libc::dup2(null, fd);
            }
            for &(first, last) in &closed {
                close_range(first, last);
            }
            // Returns 0 (end of file) once no writing end is open: when the parent has exited.
            let mut byte = 0u8;
            while libc::read(alive_read, (&raw mut byte).cast(), 1) < 0 {}
            libc::_exit(0)
        },
        child => {
            // SAFETY: the child's copies are its own; these two are ours and not used again.
            unsafe {
                libc::close(null);
                libc::close(alive_read);
            }
            if child < 0 {
                // SAFETY: ours, as above.
                unsafe { libc::close(alive_write) };
                return None;
            }
            Some(Holder { child, alive_write })
        }
    }
}

/// Closes the descriptors `first..=last`: `close_range` where the kernel has it (Linux 5.9),
/// else one `close` each up to the highest a process may have open. Async-signal-safe.
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

/// The child of [`hand_to_child`]: it exits once `alive_write`, this process's end of its
/// pipe, is closed, by [`Holder::release`] or by this process's exit. Dropping a `Holder`
/// keeps the end open (and leaves the child to its own exit) so that a program's exit, not
/// the drop, is what ends the child.
pub struct Holder {
    child: libc::pid_t,
    alive_write: RawFd,
}

impl Holder {
    /// The child's process id.
    pub fn pid(&self) -> libc::pid_t {
        self.child
    }

    /// Lets the child go now (closes this process's end of its pipe) and waits for it to exit;
    /// for callers that are not about to exit (tests).
    pub fn release(self) -> std::io::Result<()> {
        // SAFETY: our descriptor, closed once; waiting for our own child.
        unsafe { libc::close(self.alive_write) };
        let mut status = 0;
        if unsafe { libc::waitpid(self.child, &mut status, 0) } != self.child {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
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
        let holder = hand_to_child(&[kept_write]).expect("a child process");
        assert!(holder.pid() > 0);
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
        holder.release().expect("the child exits when let go");
        assert!(ends_within(kept_read, Duration::from_secs(10)), "the child's exit closes what it held");
        unsafe {
            libc::close(kept_read);
            libc::close(other_read);
        }
    }

    /// Without an [`ExitTeardown`] (a library's caller, a test), a finished run's GPU is
    /// dropped, not left to exit.
    #[test]
    fn let_go_drops_where_nothing_is_handed_to_a_child() {
        struct Counted<'a>(&'a std::cell::Cell<u32>);
        impl Drop for Counted<'_> {
            fn drop(&mut self) {
                self.0.set(self.0.get() + 1);
            }
        }
        let drops = std::cell::Cell::new(0);
        let_go(Counted(&drops));
        assert_eq!(drops.get(), 1);
    }
}
