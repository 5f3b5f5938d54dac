//! Host memory checks, so that an oversized run is refused with the sizes instead of being
//! killed by the operating system (or aborted by a failed allocation): what the machine has
//! free (`MemAvailable`), and what this process may still take under its address-space limit
//! (`ulimit -v`, `RLIMIT_AS`, as batch schedulers set) and its control group's memory limit
//! (`memory.max`), whichever is least ([`host_room`]). A model written on the library feeds
//! its bytes to [`check_host_need`].
//!
//! Under a hard limit (the address space or the control group: an allocation past it fails,
//! and the program aborts), a grid's check counts, besides its fields, what the run takes
//! after it: the buffers its outputs' encoders have promised ([`promise`], sized by
//! [`buffer_budget`] to fit), a copy of the state where `--save` or `--checkpoint` writes one
//! ([`promise_state_copy`]), the stacks of the threads started after the check and the
//! allocator's slack. Under an address-space limit the worker threads are started before any
//! check ([`start_workers_under_address_limit`]), so the space their stacks map is counted as
//! taken.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::{
    error::{Error, Result, human_bytes},
    resources::GPU_NEED,
};

pub use crate::resources::{available_host_bytes, total_host_bytes};

/// What bounds the host memory a run may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostBound {
    /// The machine's free memory (`MemAvailable`).
    Available,
    /// This process's address-space limit (`ulimit -v`, `RLIMIT_AS`), less what it maps now.
    AddressSpace,
    /// Its control group's memory limit (cgroup v2 `memory.max`), less what the group uses.
    ControlGroup,
}

/// The host memory this process can still take, and what bounds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostRoom {
    pub bytes: u64,
    pub bound: HostBound,
}

impl HostRoom {
    /// The refusal of `what` (`a 8192x8192 grid`) needing `need` bytes, and `later` more for
    /// what the run takes after its check ([`after_check`]), with `fix` (`use a smaller
    /// --size`).
    fn refusal(&self, what: &str, need: u64, later: u64, fix: &str) -> Error {
        let room = human_bytes(self.bytes);
        let need = match later {
            0 => format!("{} of host memory", human_bytes(need)),
            later => format!(
                "{} of host memory, and its outputs and threads {} more",
                human_bytes(need),
                human_bytes(later)
            ),
        };
        Error::InvalidInput(match self.bound {
            HostBound::Available => format!("{what} needs {need}, but only {room} is free; {fix}"),
            HostBound::AddressSpace => format!(
                "{what} needs {need}, but this process's address-space limit (ulimit -v) leaves it only {room}; \
                 {fix}, or raise the limit"
            ),
            HostBound::ControlGroup => format!(
                "{what} needs {need}, but its control group's memory limit (memory.max) leaves only {room}; \
                 {fix}, or raise the limit"
            ),
        })
    }

    /// Refuses `what` needing `need` bytes of fields where they do not fit; under a hard
    /// limit, with what the run takes after its check ([`after_check`]).
    fn check(&self, what: &str, need: u64, fix: &str) -> Result<()> {
        let later = if self.is_hard() { after_check(need) } else { 0 };
        match need.saturating_add(later) > self.bytes {
            true => Err(self.refusal(what, need, later, fix)),
            false => Ok(()),
        }
    }

    /// Whether an allocation past this bound fails (the address space, the control group),
    /// rather than the machine merely running short (`MemAvailable`).
    fn is_hard(&self) -> bool {
        self.bound != HostBound::Available
    }
}

/// The host memory this process can still take: the least of the machine's free memory,
/// the room left under its address-space limit and under its control group's memory limit.
/// `None` where none of them can be read (not Linux).
pub fn host_room() -> Option<HostRoom> {
    let bounds = [
        available_host_bytes().map(|bytes| HostRoom { bytes, bound: HostBound::Available }),
        address_space_room().map(|bytes| HostRoom { bytes, bound: HostBound::AddressSpace }),
        control_group_room().map(|bytes| HostRoom { bytes, bound: HostBound::ControlGroup }),
    ];
    bounds.into_iter().flatten().min_by_key(|room| room.bytes)
}

/// Under an address-space limit (`ulimit -v`), keeps glibc's allocator to one arena: each
/// further arena reserves 64 MiB of address space up front (a thread's first allocation), which
/// the limit counts as taken; a few threads' arenas then left the grid's own allocation
/// without room (a failed allocation and an abort, or a refusal for lack of room that was only
/// reserved). Call it first thing in `main`, before any thread starts; without a limit, or
/// off glibc, it does nothing.
pub fn one_arena_under_address_limit() {
    if address_space_limit().is_none() {
        return;
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an allocator parameter; no allocation is in flight on another
    // thread (none has started).
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

/// Under an address-space limit, starts rayon's worker threads now, so that the stacks they
/// map are in this process's size when a grid's check reads it (started later, by the first
/// parallel loop, they took room the check had found free) and so that a limit too low for
/// them is one line instead of a panic in rayon's pool. Call it early in `main`, after
/// [`one_arena_under_address_limit`]; without a limit it does nothing (the pool starts when
/// first used).
pub fn start_workers_under_address_limit() -> Result<()> {
    if address_space_limit().is_none() {
        return Ok(());
    }
    rayon::ThreadPoolBuilder::new()
        .spawn_handler(|thread| {
            let mut builder = std::thread::Builder::new();
            if let Some(name) = thread.name() {
                builder = builder.name(name.to_owned());
            }
            if let Some(bytes) = thread.stack_size() {
                builder = builder.stack_size(bytes);
            }
            spawn(builder, || thread.run()).map(drop)
        })
        .build_global()
        .map_err(|e| {
            let room = address_space_room().map_or_else(String::new, |room| format!(" {}", human_bytes(room)));
            Error::InvalidInput(format!(
                "cannot start the worker threads ({e}): this process's address-space limit (ulimit -v) leaves \
                 it only{room}; raise the limit"
            ))
        })
}

/// The words for a thread that could not start (`spawn`'s error): under an address-space limit
/// they say how much room the limit leaves, since a thread's stack is mapped whole when it
/// starts.
pub fn thread_start_failure(error: &std::io::Error) -> String {
    match address_space_room() {
        Some(room) => format!(
            "{error}: this process's address-space limit (ulimit -v) leaves it only {}; raise the limit",
            human_bytes(room)
        ),
        None => error.to_string(),
    }
}

/// Bytes promised by what has been set up to hold later (outputs' queues and encoders):
/// counted by every host check under a hard limit ([`promise`]).
static PROMISED: AtomicU64 = AtomicU64::new(0);

/// Checks under way that will write a copy of the state (`--save`, `--checkpoint`).
static STATE_COPIES: AtomicU64 = AtomicU64::new(0);

/// Bytes an output will hold at most, beyond what it holds now (its queue of frames, the
/// buffers of its encoders and the stacks of the threads it starts later), counted by every
/// grid's check while it lives. Dropped when the output is done.
#[derive(Debug)]
#[must_use = "the promise lasts as long as the value"]
pub struct Promise(u64);

impl Drop for Promise {
    fn drop(&mut self) {
        PROMISED.fetch_sub(self.0, Ordering::Relaxed);
    }
}

/// Promises `bytes`: the host checks count them until the [`Promise`] is dropped.
pub fn promise(bytes: u64) -> Promise {
    PROMISED.fetch_add(bytes, Ordering::Relaxed);
    Promise(bytes)
}

/// A run's promise to write a copy of its state (`--save`, `--checkpoint`): while it lives,
/// a grid's check under a hard limit counts the fields twice (the state a model copies out is
/// never larger than what it holds).
#[derive(Debug)]
#[must_use = "the promise lasts as long as the value"]
pub struct StateCopy(());

impl Drop for StateCopy {
    fn drop(&mut self) {
        STATE_COPIES.fetch_sub(1, Ordering::Relaxed);
    }
}

/// See [`StateCopy`].
pub fn promise_state_copy() -> StateCopy {
    STATE_COPIES.fetch_add(1, Ordering::Relaxed);
    StateCopy(())
}

/// The address space a thread maps when it starts: its stack (Rust's and rayon's:
/// `RUST_MIN_STACK`'s size, read as the standard library reads it, else 2 MiB) with its guard
/// page, and the alternate signal stack Rust's runtime maps inside the new thread
/// (`max(SIGSTKSZ, AT_MINSIGSTKSZ)` and a guard page, in whole pages). A thread whose stack fits
/// but whose alternate stack does not aborts the process (the runtime panics where no panic can
/// be caught), so [`spawn`] checks for both.
pub fn thread_stack_bytes() -> u64 {
    let stack =
        std::env::var_os("RUST_MIN_STACK").and_then(|s| s.to_str().and_then(|s| s.parse::<u64>().ok()));
    let page = page_bytes();
    stack.unwrap_or(2 << 20).next_multiple_of(page) + page + signal_stack_bytes(page)
}

/// The system's page size.
fn page_bytes() -> u64 {
    // SAFETY: sysconf reads a system setting.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(page).ok().filter(|&p| p > 0).unwrap_or(4096)
}

/// The alternate signal stack of a thread, with its guard page (Rust's runtime, on Linux).
fn signal_stack_bytes(page: u64) -> u64 {
    #[cfg(target_os = "linux")]
    // SAFETY: getauxval reads the process's auxiliary vector; 0 where the entry is missing.
    let least = unsafe { libc::getauxval(libc::AT_MINSIGSTKSZ) };
    #[cfg(not(target_os = "linux"))]
    let least = 0;
    (libc::SIGSTKSZ as u64).max(least).next_multiple_of(page) + page
}

/// Held across a check and the start it allows (see [`spawn`]).
static STARTING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Starts a thread, as `builder.spawn(body)`, but under an address-space limit only where the
/// room left holds all it maps ([`thread_stack_bytes`]): otherwise an error saying what a
/// thread maps, for the caller's one line ([`thread_start_failure`]), instead of a thread that
/// maps its stack and then aborts the process for want of its signal stack. Under a limit,
/// starts are one at a time and each waits for its thread to be running (its signal stack
/// mapped), so the next check reads all of it. The threads of the command's runs go through
/// here (rayon's workers through [`start_workers_under_address_limit`]); [`check_thread_room`]
/// is for pools that start their own.
pub fn spawn<F, T>(builder: std::thread::Builder, body: F) -> std::io::Result<std::thread::JoinHandle<T>>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    if address_space_limit().is_none() {
        return builder.spawn(body);
    }
    let _one_at_a_time = STARTING.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    check_thread_room(1)?;
    let (running, started) = std::sync::mpsc::sync_channel(0);
    let thread = builder.spawn(move || {
        let _ = running.send(());
        body()
    })?;
    let _ = started.recv();
    Ok(thread)
}

/// Under an address-space limit, whether the room left holds `threads` more threads
/// ([`thread_stack_bytes`] each); the error says what they map otherwise.
pub fn check_thread_room(threads: u64) -> std::io::Result<()> {
    let need = threads * thread_stack_bytes();
    if address_space_room().is_some_and(|room| room < need) {
        let what = if threads == 1 { "a thread maps".to_owned() } else { format!("{threads} threads map") };
        return Err(std::io::Error::new(
            std::io::ErrorKind::OutOfMemory,
            format!("{what} {}", human_bytes(need)),
        ));
    }
    Ok(())
}

/// Threads a run may start after its grid's check: Gray-Scott's start's builder, then the
/// outputs' finishing (glibc gives the second the first's cached stack), and one for
/// headroom. The outputs' own threads start before the check, and are in the size it reads.
const LATER_THREADS: u64 = 2;

/// What the allocator, the libraries and the run's small buffers take beyond what is counted
/// (seen at 1-2 MiB for Gray-Scott with no output, besides its start's thread).
const SLACK: u64 = 4 << 20;

/// What a run takes after a grid's check of `fields` bytes, under a hard limit: its outputs'
/// promises, a copy of the fields where the state is written, later threads and slack.
fn after_check(fields: u64) -> u64 {
    let copy = if STATE_COPIES.load(Ordering::Relaxed) > 0 { fields } else { 0 };
    PROMISED.load(Ordering::Relaxed) + copy + LATER_THREADS * thread_stack_bytes() + SLACK
}

/// The bytes of buffers an output may hold: `wanted` without a hard limit, and under one at
/// most an eighth of the room it leaves after what is promised, so that a run's outputs never
/// take most of it (a queue of frames then holds fewer frames, and the simulation waits for
/// its encoder sooner).
pub fn buffer_budget(wanted: u64) -> u64 {
    match host_room() {
        Some(room) if room.is_hard() => {
            wanted.min(room.bytes.saturating_sub(PROMISED.load(Ordering::Relaxed)) / 8)
        }
        _ => wanted,
    }
}

/// The address space left under `RLIMIT_AS` (its soft limit less this process's `VmSize`);
/// `None` without a limit.
fn address_space_room() -> Option<u64> {
    let limit = address_space_limit()?;
    let status = std::fs::read_to_string("/proc/self/status").ok();
    let mapped = status.as_deref().and_then(|s| kib_field(s, "VmSize:")).unwrap_or(0);
    Some(limit.saturating_sub(mapped))
}

/// This process's address-space limit (`RLIMIT_AS`'s soft limit) in bytes; `None` without one.
fn address_space_limit() -> Option<u64> {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: `limit` is a valid out-pointer for getrlimit.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) } != 0 || limit.rlim_cur == libc::RLIM_INFINITY {
        return None;
    }
    Some(limit.rlim_cur)
}

/// The memory left to this process's control group (cgroup v2): `memory.max` less
/// `memory.current`; `None` without a limit.
fn control_group_room() -> Option<u64> {
    let groups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = groups.lines().find_map(|line| line.strip_prefix("0::"))?;
    let dir = std::path::Path::new("/sys/fs/cgroup").join(path.trim_start_matches('/'));
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).ok();
    let max: u64 = read("memory.max")?.trim().parse().ok()?; // "max": no limit
    let current: u64 = read("memory.current").and_then(|c| c.trim().parse().ok()).unwrap_or(0);
    Some(max.saturating_sub(current))
}

/// A `NAME:  N kB` line of a `/proc` status file, in bytes.
fn kib_field(text: &str, field: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(field))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Refuses a `width × height` run that needs `need` bytes of host memory when this process
/// cannot have them ([`host_room`]). Where nothing can be read (not Linux), nothing is refused.
pub fn check_host(width: u32, height: u32, need: u64) -> Result<()> {
    check_host_box([width, height, 1], need)
}

/// [`check_host`] for a 3-D `n[0] × n[1] × n[2]` box, named so in the refusal
/// (`a 900x900x900 grid`; a depth of 1 is left out).
pub fn check_host_box(n: [u32; 3], need: u64) -> Result<()> {
    match host_room() {
        Some(HostRoom { bytes, bound: HostBound::Available }) => require_box(n, need, bytes, "host"),
        Some(room) => {
            let grid = match n {
                [width, height, 1] => format!("a {width}x{height} grid"),
                [width, height, depth] => format!("a {width}x{height}x{depth} grid"),
            };
            room.check(&grid, need, "use a smaller --size")
        }
        None => Ok(()),
    }
}

/// A model's own memory check (a program written on the library, such as `barkley`): refuses
/// `what` (`a 8192x8192 grid`) needing `need` bytes of host memory (its fields, the copies
/// its steps and outputs make) where this process cannot have them ([`host_room`]), saying
/// `fix` (`use a smaller --width or --height`): one line, before any of it is allocated.
pub fn check_host_need(what: &str, need: u64, fix: &str) -> Result<()> {
    match host_room() {
        Some(room) => room.check(what, need, fix),
        None => Ok(()),
    }
}

/// [`check_host`] for a run of `agents` agents on a `width × height` grid: `agent_bytes` for
/// the agents, `grid_bytes` for the grid (see [`require_agents`]).
pub fn check_host_agents(
    width: u32,
    height: u32,
    agents: u32,
    agent_bytes: u64,
    grid_bytes: u64,
) -> Result<()> {
    match host_room() {
        Some(HostRoom { bytes, bound: HostBound::Available }) => {
            require_agents(width, height, agents, agent_bytes, grid_bytes, bytes, "host")
        }
        Some(room) => room.check(
            &format!("a {width}x{height} grid with {agents} agents"),
            agent_bytes.saturating_add(grid_bytes),
            if agent_bytes > grid_bytes { "use fewer --agents" } else { "use a smaller --size" },
        ),
        None => Ok(()),
    }
}

/// [`require`] for a run of `agents` agents on a `width × height` grid, which needs
/// `agent_bytes` for its agents and `grid_bytes` for its grid: where the agents take most of
/// it, the refusal says so and asks for fewer `--agents` (a smaller grid would not help).
pub fn require_agents(
    width: u32,
    height: u32,
    agents: u32,
    agent_bytes: u64,
    grid_bytes: u64,
    available: u64,
    device: &'static str,
) -> Result<()> {
    let need = agent_bytes.saturating_add(grid_bytes);
    if need > available && agent_bytes > grid_bytes {
        let fix = match grid_bytes > available {
            true => "use fewer --agents and a smaller --size",
            false => "use fewer --agents",
        };
        return Err(Error::InvalidInput(format!(
            "a {width}x{height} grid with {agents} agents needs {} of {device} memory ({} of it for the \
             agents), but only {} is free; {fix}",
            human_bytes(need),
            human_bytes(agent_bytes),
            human_bytes(available)
        )));
    }
    require(width, height, need, available, device)
}

/// Refuses a `width × height` run that needs more than `available` bytes of `device` memory.
pub fn require(width: u32, height: u32, need: u64, available: u64, device: &'static str) -> Result<()> {
    if device == "GPU" && need <= available {
        *GPU_NEED.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) =
            Some((width, height, need, available));
        crate::faults::pause_after_gpu_check();
    }
    if need > available {
        return Err(Error::TooBig { width, height, depth: 1, need, available, device });
    }
    Ok(())
}

/// [`require`] for a 3-D `n[0] × n[1] × n[2]` box, named so in the refusal.
pub fn require_box(n: [u32; 3], need: u64, available: u64, device: &'static str) -> Result<()> {
    require(n[0], n[1].saturating_mul(n[2]), need, available, device).map_err(|e| match e {
        Error::TooBig { need, available, device, .. } => {
            Error::TooBig { width: n[0], height: n[1], depth: n[2], need, available, device }
        }
        other => other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusal_states_need_and_availability() {
        assert!(require(10, 10, 100, 100, "GPU").is_ok());
        let message = require(8192, 8192, 3 << 30, 512 << 20, "GPU").unwrap_err().to_string();
        assert_eq!(
            message,
            "a 8192x8192 grid needs 3.0 GiB of GPU memory, but only 512.0 MiB is free; use a smaller --size"
        );
        let message = require_box([3000, 3000, 3000], 3 << 30, 512 << 20, "GPU").unwrap_err().to_string();
        assert!(message.starts_with("a 3000x3000x3000 grid needs 3.0 GiB"), "{message}");
    }

    #[test]
    fn a_refusal_under_a_hard_limit_names_what_the_outputs_and_threads_take() {
        let room = HostRoom { bytes: 3 << 20, bound: HostBound::AddressSpace };
        assert_eq!(
            room.refusal("a 256x256 grid", 1 << 20, 20 << 20, "use a smaller --size").to_string(),
            "a 256x256 grid needs 1.0 MiB of host memory, and its outputs and threads 20.0 MiB more, but this \
             process's address-space limit (ulimit -v) leaves it only 3.0 MiB; use a smaller --size, or raise \
             the limit"
        );
        // Fields that fit alone are refused with what comes after the check.
        assert!(room.check("a 256x256 grid", 1 << 20, "use a smaller --size").is_err());
        let free = HostRoom { bytes: 3 << 20, bound: HostBound::Available };
        assert!(free.check("a 256x256 grid", 1 << 20, "use a smaller --size").is_ok());
    }

    #[test]
    fn a_refusal_names_the_agents_where_they_take_most_of_the_memory() {
        assert!(require_agents(64, 64, 1000, 24_000, 49_152, 1 << 20, "host").is_ok());
        let message =
            require_agents(64, 64, 1 << 30, 24 << 30, 49_152, 8 << 30, "host").unwrap_err().to_string();
        assert_eq!(
            message,
            "a 64x64 grid with 1073741824 agents needs 24.0 GiB of host memory (24.0 GiB of it for the \
             agents), but only 8.0 GiB is free; use fewer --agents"
        );
        let message =
            require_agents(32768, 32768, 10, 240, 12 << 30, 8 << 30, "GPU").unwrap_err().to_string();
        assert!(message.ends_with("; use a smaller --size") && !message.contains("agents"), "{message}");
        let message = require_agents(8192, 8192, 1 << 30, 24 << 30, 9 << 30, 8 << 30, "host").unwrap_err();
        assert!(message.to_string().ends_with("; use fewer --agents and a smaller --size"), "{message}");
    }
}
