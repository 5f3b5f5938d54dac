//! The NCCL transport: halo exchanges between processes, one per GPU, started by `mpirun` or
//! `srun` (or one process alone, whose periodic neighbour is itself). NCCL moves the bytes
//! (NVLink or PCIe in a host, InfiniBand or sockets between hosts) through grouped
//! send/receive on the part's own stream. The library is loaded at run time (cudarc's
//! `dynamic-loading`): builds, CPU runs and runs in one process need no NCCL.
//!
//! No wait on another process is unbounded: a [`Watchdog`] ends the process with one line
//! (exit 1, temporary outputs removed) when connecting, an exchange or a gather makes no
//! progress for the peer timeout, because another rank died, hangs or never started.

use std::{
    ffi::CStr,
    io::Write as _,
    path::PathBuf,
    sync::{Arc, Condvar, Mutex},
    time::{Duration, Instant},
};

use cudarc::{
    driver::{CudaSlice, CudaStream, DevicePtr},
    nccl::{result, sys},
};

use crate::{
    cuda::Gpu,
    error::{CudaContext as _, Error, Result},
};

/// The library NCCL is loaded from, for messages.
pub const LIBRARY: &str = "libnccl.so";

/// How the processes of a job find each other.
#[derive(Clone, Debug)]
pub struct Bootstrap {
    /// A file on a file system every rank sees, through which rank 0 hands out NCCL's id
    /// (else `NCCL_COMM_ID=host:port` must be set, or the job must be of one process).
    pub id_file: Option<PathBuf>,
    /// How long any wait on another rank may go without progress.
    pub timeout: Duration,
    /// The most blocks an NCCL kernel may take (`NCCL_MAX_CTAS`, unless the environment
    /// already sets it), where this rank leaves only so many SMs free beside its own kernels
    /// (heat's `--overlap`: more blocks would wait for SMs that the halves hold).
    pub max_ctas: Option<u32>,
}

/// NCCL's socket transport where this program's ranks talk over NCCL's network and the
/// environment sets neither of its settings: helper threads per connection
/// (`NCCL_SOCKET_NTHREADS`) and sockets per thread (`NCCL_NSOCKS_PERTHREAD`). NCCL's default is
/// one of each; over sockets between two ranks (simulated hosts, 2 H200s) heat 1200³ ran at
/// 43.2% of one GPU with it and 96.1% with 4 × 4 (5.3 GB/s against 2.24), 8 × 8 was slower
/// than 4 × 4. Over InfiniBand NCCL takes its IB transport, which these do not touch. Only the
/// environment is read: a value in NCCL's own configuration files (`~/.nccl.conf`,
/// `/etc/nccl.conf`), which do not override the environment, gives way to these.
pub const NETWORK_SOCKETS: (u32, u32) = (4, 4);

/// The sockets' variables [`NETWORK_SOCKETS`] sets.
const SOCKET_VARS: [&str; 2] = ["NCCL_SOCKET_NTHREADS", "NCCL_NSOCKS_PERTHREAD"];

/// Where `over_network` and the environment (read through `var`) sets neither of NCCL's
/// socket settings, the values to set ([`NETWORK_SOCKETS`]) and the line that says so.
pub fn sockets_to_widen(
    over_network: bool,
    var: impl Fn(&str) -> Option<String>,
) -> Option<[(&'static str, String); 2]> {
    if !over_network || SOCKET_VARS.iter().any(|name| var(name).is_some()) {
        return None;
    }
    let (threads, sockets) = NETWORK_SOCKETS;
    Some([(SOCKET_VARS[0], threads.to_string()), (SOCKET_VARS[1], sockets.to_string())])
}

/// Widens NCCL's sockets as [`sockets_to_widen`] says, from this process's environment, and
/// returns the line that says so (for rank 0 to print). Call it before NCCL starts (it reads
/// them at its initialisation), on every rank alike, while no other thread of this process
/// reads or writes the environment (as at a rank's connection, [`Communicator::connect`]).
pub fn widen_sockets(over_network: bool) -> Option<String> {
    let values = sockets_to_widen(over_network, |name| std::env::var(name).ok())?;
    for (name, value) in &values {
        // SAFETY: set before NCCL starts, which reads it at initialisation; no other thread of
        // this process reads or writes the environment meanwhile (as in `Communicator::connect`).
        unsafe { std::env::set_var(name, value) };
    }
    let (threads, sockets) = NETWORK_SOCKETS;
    Some(format!(
        "note: the ranks talk over NCCL's network: where it takes its socket transport, {threads} threads of {sockets} \
         sockets per connection ({}={threads} {}={sockets}; set either in the environment to choose)",
        SOCKET_VARS[0], SOCKET_VARS[1]
    ))
}

/// Refuses, with where to get it, when the NCCL library cannot be loaded.
pub fn check_library() -> Result<()> {
    // SAFETY: only tries to open the library by its candidate names.
    if unsafe { sys::is_culib_present() } {
        return Ok(());
    }
    Err(missing_library())
}

/// The refusal of a run that needs NCCL where the library cannot be loaded.
fn missing_library() -> Error {
    Error::InvalidInput(format!(
        "the NCCL transport needs the NCCL library ({LIBRARY}, NCCL 2.x), which this process cannot load: install \
         NVIDIA's libnccl2 and libnccl-dev packages (they come with the CUDA repositories), or the nvidia-nccl-cu12 \
         Python wheel (its lib/ holds libnccl.so.2: link {LIBRARY} to it), and put its directory on LD_LIBRARY_PATH"
    ))
}

/// One rank's NCCL communicator, on its GPU, with the watchdog of its waits.
pub struct Communicator {
    comm: sys::ncclComm_t,
    rank: usize,
    size: usize,
    gpu: Arc<Gpu>,
    watchdog: Watchdog,
    /// Whether an exchange was queued yet (the first is marked on the timeline).
    exchanged: std::sync::atomic::AtomicBool,
    /// The thread making the connections to this rank's neighbours, started by
    /// [`Communicator::connect`] and joined before any other use of `comm` ([`Communicator::ready`]).
    neighbours: Mutex<Option<std::thread::JoinHandle<Result<()>>>>,
}

/// The raw communicator, handed to the thread that connects the neighbours.
struct RawComm(sys::ncclComm_t);

// SAFETY: NCCL's rule is one thread at a time per communicator: the thread that gets it is
// joined ([`Communicator::ready`]) before any other call on it.
unsafe impl Send for RawComm {}

// SAFETY: a communicator may be used from any thread, one at a time (NCCL's rule); `&mut`
// access or a single owner guarantees that here.
unsafe impl Send for Communicator {}

impl std::fmt::Debug for Communicator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Communicator(rank {} of {} on GPU {})", self.rank, self.size, self.gpu.ordinal())
    }
}

impl Communicator {
    /// Joins the job as `rank` of `size` on `gpu`: shares NCCL's id as `bootstrap` says and
    /// connects (the watchdog bounds the wait for ranks that never come).
    pub fn connect(gpu: Arc<Gpu>, rank: usize, size: usize, bootstrap: &Bootstrap) -> Result<Self> {
        check_library()?;
        let watchdog = Watchdog::start(rank, size, bootstrap.timeout);
        let id = {
            let _watch = watchdog.watch("sharing NCCL's id");
            unique_id(rank, size, bootstrap)?
        };
        gpu.context().bind_to_thread().context(|| "binding the GPU for NCCL".into())?;
        if let Some(ctas) = bootstrap.max_ctas
            && std::env::var_os("NCCL_MAX_CTAS").is_none()
        {
            // SAFETY: set before NCCL starts, which reads it at initialisation; no other
            // thread of this process reads or writes the environment meanwhile (the
            // watchdog only waits, signal handling only reads its own flags).
            unsafe { std::env::set_var("NCCL_MAX_CTAS", ctas.to_string()) };
        }
        let mut comm: sys::ncclComm_t = std::ptr::null_mut();
        {
            let _watch = watchdog.watch("connecting to the other ranks (NCCL)");
            // SAFETY: `comm` is a valid out-pointer; the id is NCCL's own.
            unsafe { result::comm_init_rank(&mut comm, size as i32, id, rank as i32) }
                .map_err(|e| nccl_error("connecting the ranks", e, std::ptr::null_mut(), size))?;
        }
        crate::timeline::mark("NCCL: communicator initialised");
        // A rank's first send or receive to a peer also makes NCCL's connections to it, which
        // took 0.18 s on 2 H200s and about 0.8 s on 4 GPUs inside the first step: made here
        // instead, in a thread, while the caller builds its parts.
        let neighbours = (size > 1).then(|| {
            let (raw, gpu) = (RawComm(comm), gpu.clone());
            std::thread::Builder::new()
                .name("nccl-neighbours".into())
                .spawn(move || connect_neighbours(&raw, &gpu, rank, size))
        });
        let neighbours = match neighbours.transpose() {
            Ok(handle) => handle,
            Err(e) => {
                // SAFETY: the communicator is live and used by no other thread.
                let _ = unsafe { result::comm_abort(comm) };
                return Err(Error::InvalidInput(format!("cannot start a thread: {e}")));
            }
        };
        if rank == 0
            && size > 1
            && let Some(path) = &bootstrap.id_file
        {
            // Everyone is connected: the id served its purpose.
            let _ = std::fs::remove_file(path);
        }
        Ok(Self {
            comm,
            rank,
            size,
            gpu,
            watchdog,
            exchanged: Default::default(),
            neighbours: Mutex::new(neighbours),
        })
    }

    pub fn rank(&self) -> usize {
        self.rank
    }

    pub fn size(&self) -> usize {
        self.size
    }

    pub fn gpu(&self) -> &Arc<Gpu> {
        &self.gpu
    }

    /// Whether this rank writes the outputs (rank 0).
    pub fn is_root(&self) -> bool {
        self.rank == 0
    }

    /// Watches a wait on other ranks until the returned guard is dropped (one at a time):
    /// if it makes no progress for the peer timeout, the process ends with one line.
    pub fn watch(&self, what: &str) -> Watch {
        self.watchdog.watch(what)
    }

    /// Runs `transfers` as one NCCL group on `stream` (so sends and receives between two
    /// ranks cannot wait on each other). Between two ranks, the n-th send of one is received
    /// by the n-th receive of the other.
    pub fn exchange(&self, stream: &CudaStream, transfers: &[Transfer]) -> Result<()> {
        self.ready()?;
        queue_group(self.comm, self.size, stream, transfers)?;
        if !self.exchanged.swap(true, std::sync::atomic::Ordering::Relaxed) {
            crate::timeline::mark("NCCL: first exchange queued");
        }
        Ok(())
    }

    /// Waits for the thread that connects this rank's neighbours (started by
    /// [`Communicator::connect`]) and returns its outcome, once; later calls return at once.
    /// Every use of the communicator comes after it.
    fn ready(&self) -> Result<()> {
        let handle = self.neighbours.lock().unwrap_or_else(|p| p.into_inner()).take();
        match handle.map(std::thread::JoinHandle::join) {
            None => Ok(()),
            Some(Ok(outcome)) => outcome,
            Some(Err(_)) => {
                Err(Error::InvalidInput("the thread connecting NCCL's neighbours panicked".into()))
            }
        }
    }

    /// Gives every rank rank 0's `values` (launch settings that must agree).
    pub fn broadcast_u32s(&self, values: &mut [u32]) -> Result<()> {
        let stream = self.gpu.stream();
        let _watch = self.watch(if self.rank == 0 {
            "agreeing on launch settings with the other ranks"
        } else {
            "agreeing on launch settings with rank 0"
        });
        self.ready()?;
        let buffer = stream.clone_htod(values).context(|| "copying settings to the GPU".into())?;
        {
            let (ptr, _sync) = buffer.device_ptr(stream);
            // SAFETY: in-place broadcast over a live buffer of `values.len()` u32s.
            unsafe {
                result::broadcast(
                    ptr as *const _,
                    ptr as *mut _,
                    values.len(),
                    sys::ncclDataType_t::ncclUint32,
                    0,
                    self.comm,
                    stream.cu_stream() as sys::cudaStream_t,
                )
            }
            .map_err(|e| nccl_error("broadcasting launch settings", e, self.comm, self.size))?;
        }
        stream.memcpy_dtoh(&buffer, values).context(|| "copying settings back".into())?;
        stream.synchronize().context(|| "agreeing on launch settings".into())?;
        Ok(())
    }
}

impl Communicator {
    /// The largest of every rank's `value`, on every rank; a barrier too (each rank returns
    /// once all have called it). `what` names the wait for the watchdog.
    pub fn max_f64(&self, value: f64, what: &str) -> Result<f64> {
        let stream = self.gpu.stream();
        let _watch = self.watch(what);
        self.ready()?;
        let buffer = stream.clone_htod(&[value]).context(|| "copying a value to the GPU".into())?;
        {
            let (ptr, _sync) = buffer.device_ptr(stream);
            // SAFETY: an in-place all-reduce over a live buffer of one f64.
            unsafe {
                result::all_reduce(
                    ptr as *const _,
                    ptr as *mut _,
                    1,
                    sys::ncclDataType_t::ncclFloat64,
                    sys::ncclRedOp_t::ncclMax,
                    self.comm,
                    stream.cu_stream() as sys::cudaStream_t,
                )
            }
            .map_err(|e| nccl_error("an all-reduce", e, self.comm, self.size))?;
        }
        let mut out = [0.0];
        stream.memcpy_dtoh(&buffer, &mut out).context(|| "copying a value back".into())?;
        stream.synchronize().context(|| "an all-reduce".into())?;
        Ok(out[0])
    }
}

impl Drop for Communicator {
    fn drop(&mut self) {
        // The connecting thread uses the communicator until it ends (bounded: the watchdog
        // ends the process if a neighbour never answers).
        if self.neighbours.get_mut().unwrap_or_else(|p| p.into_inner()).is_some() {
            let _watch = self.watch("connecting to the neighbouring ranks (NCCL)");
            let _ = self.ready();
        }
        // Abort, not finalize: it never waits on other ranks (one may be gone).
        // SAFETY: the communicator is live and used by nobody else now.
        let _ = unsafe { result::comm_abort(self.comm) };
    }
}

/// Queues `transfers` as one NCCL group on `stream` of communicator `comm` of `size` ranks.
fn queue_group(
    comm: sys::ncclComm_t,
    size: usize,
    stream: &CudaStream,
    transfers: &[Transfer],
) -> Result<()> {
    result::group_start().map_err(|e| nccl_error("starting a group", e, comm, size))?;
    let mut failed = None;
    for t in transfers {
        let (ptr, count, peer) = (t.ptr as *mut std::ffi::c_void, t.count, t.peer as i32);
        let f32s = sys::ncclDataType_t::ncclFloat32;
        let cu_stream = stream.cu_stream() as sys::cudaStream_t;
        // SAFETY: `ptr` and `count` come from live device buffers of this rank's GPU
        // ([`Transfer::rows`]); the stream is that GPU's; the communicator is used by this
        // thread alone now.
        let outcome = unsafe {
            if t.send {
                result::send(ptr, count, f32s, peer, comm, cu_stream)
            } else {
                result::recv(ptr, count, f32s, peer, comm, cu_stream)
            }
        };
        if let Err(e) = outcome {
            failed = Some(e);
            break;
        }
    }
    let ended = result::group_end();
    if let Some(e) = failed {
        return Err(nccl_error("queuing a halo exchange", e, comm, size));
    }
    ended.map_err(|e| nccl_error("a halo exchange", e, comm, size))?;
    Ok(())
}

/// Makes NCCL's connections between this rank and its neighbours on the ring of ranks
/// (rank ± 1, every halo's peer), both ways, with one f32 each way, on a stream of its own.
fn connect_neighbours(comm: &RawComm, gpu: &Gpu, rank: usize, size: usize) -> Result<()> {
    gpu.context().bind_to_thread().context(|| "binding the GPU for NCCL".into())?;
    let stream = gpu.context().new_stream().context(|| "creating a stream".into())?;
    let buffer = stream.alloc_zeros::<f32>(4).context(|| "allocating 16 bytes".into())?;
    let (next, previous) = ((rank + 1) % size, (rank + size - 1) % size);
    let transfers: Vec<Transfer> = [(true, next), (false, previous), (true, previous), (false, next)]
        .into_iter()
        .enumerate()
        .map(|(i, (send, peer))| Transfer::rows(&buffer, &stream, i, 1, 1, peer, send))
        .collect();
    queue_group(comm.0, size, &stream, &transfers)?;
    stream.synchronize().context(|| "connecting to the neighbouring ranks".into())?;
    crate::timeline::mark("NCCL: neighbours connected");
    Ok(())
}

/// One send or receive of `count` f32s at device address `ptr`, to or from rank `peer`.
#[derive(Clone, Copy, Debug)]
pub struct Transfer {
    pub send: bool,
    pub ptr: u64,
    pub count: usize,
    pub peer: usize,
}

impl Transfer {
    /// Rows `row .. row + rows` of `width` f32s of `field`, sent to or received from `peer`.
    pub fn rows(
        field: &CudaSlice<f32>,
        stream: &CudaStream,
        row: usize,
        rows: usize,
        width: usize,
        peer: usize,
        send: bool,
    ) -> Self {
        assert!((row + rows) * width <= field.len(), "rows inside the field");
        let (base, _sync) = field.device_ptr(stream);
        Self { send, ptr: base + (row * width * 4) as u64, count: rows * width, peer }
    }
}

/// The NCCL id every rank must pass: made here alone (one rank), derived by NCCL from
/// `NCCL_COMM_ID` (where rank 0 listens), or handed out by rank 0 through the id file.
fn unique_id(rank: usize, size: usize, bootstrap: &Bootstrap) -> Result<sys::ncclUniqueId> {
    let make =
        || result::get_uniqueid().map_err(|e| nccl_error("making NCCL's id", e, std::ptr::null_mut(), size));
    if size == 1 || std::env::var_os("NCCL_COMM_ID").is_some() {
        return make();
    }
    let Some(path) = &bootstrap.id_file else {
        return Err(Error::InvalidInput(format!(
            "a job of {size} processes must share NCCL's id: set NCCL_COMM_ID=HOST:PORT (rank 0's host and a free \
             port) for every rank, or give --nccl-id-file PATH on a file system every rank sees"
        )));
    };
    let key = job_key();
    if rank == 0 {
        let id = make()?;
        let mut file = crate::outfile::AtomicFile::create(path)?;
        let fail = |e: std::io::Error| crate::outfile::output_error(path, crate::outfile::describe_io(&e));
        writeln!(file, "{}", id_text(&key, &id)).map_err(fail)?;
        file.commit()?;
        return Ok(id);
    }
    // Wait for rank 0's file of this job (an older job's file is not ours).
    loop {
        // Bounded: an id file is one line; anything far longer is not rank 0's.
        if let Ok(bytes) = crate::input::read_bounded(path, 64 << 10)
            && let Some(id) = parse_id(&key, &String::from_utf8_lossy(&bytes))
        {
            return Ok(id);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// What tells this job's id file from another's: the launcher's job (and step) id.
fn job_key() -> String {
    ["OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE", "SLURM_JOB_ID", "SLURM_STEP_ID", "PMI_KVSNAME"]
        .iter()
        .filter_map(|name| std::env::var(name).ok())
        .collect::<Vec<_>>()
        .join(".")
}

fn id_text(key: &str, id: &sys::ncclUniqueId) -> String {
    let hex: String = id.internal.iter().map(|b| format!("{:02x}", *b as u8)).collect();
    format!("rust-gpu-sim nccl-id 1 job={key} {hex}")
}

fn parse_id(key: &str, text: &str) -> Option<sys::ncclUniqueId> {
    let mut words = text.split_whitespace();
    let header = [words.next()?, words.next()?, words.next()?];
    if header != ["rust-gpu-sim", "nccl-id", "1"] || words.next()? != format!("job={key}") {
        return None;
    }
    let hex = words.next()?;
    let mut internal = [0 as std::ffi::c_char; 128];
    if hex.len() != 2 * internal.len() {
        return None;
    }
    for (i, byte) in internal.iter_mut().enumerate() {
        *byte = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()? as std::ffi::c_char;
    }
    Some(sys::ncclUniqueId { internal })
}

/// One line for an NCCL failure: what was being done, NCCL's own words, and what it means.
fn nccl_error(doing: &str, e: result::NcclError, comm: sys::ncclComm_t, size: usize) -> Error {
    // SAFETY: NCCL returns static or thread-local NUL-terminated strings (never null for a
    // valid result code; checked anyway).
    let text = |p: *const std::ffi::c_char| {
        (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().trim().to_string())
    };
    let name = text(unsafe { sys::ncclGetErrorString(e.0) }).unwrap_or_else(|| format!("{:?}", e.0));
    let detail = text(unsafe { sys::ncclGetLastError(comm) }).filter(|d| !d.is_empty());
    let mut line = format!("NCCL failed {doing}: {name}");
    if let Some(detail) = &detail {
        line.push_str(&format!(" ({detail})"));
    }
    if detail.as_deref().is_some_and(|d| d.contains("Duplicate GPU")) {
        line.push_str(&format!(
            "; NCCL takes one process per GPU, and ranks of these {size} share one: start one process per GPU \
             (--split runs several parts on one GPU in one process)"
        ));
        // Every rank sees the duplicate.
        return Error::SameOnEveryRank(line);
    }
    Error::InvalidInput(line)
}

/// Ends the process when a wait on other ranks makes no progress for the timeout: prints one
/// line, removes temporary outputs, exits 1. One thread per communicator.
struct Watchdog {
    shared: Arc<(Mutex<WatchState>, Condvar)>,
}

struct WatchState {
    /// When the wait being watched gives up, and what it is; `None` when nothing waits.
    armed: Option<(Instant, String)>,
    timeout: Duration,
    stop: bool,
}

impl Watchdog {
    fn start(rank: usize, size: usize, timeout: Duration) -> Self {
        let shared = Arc::new((Mutex::new(WatchState { armed: None, timeout, stop: false }), Condvar::new()));
        let watched = shared.clone();
        std::thread::Builder::new()
            .name("nccl-watchdog".into())
            .spawn(move || {
                let (lock, wake) = &*watched;
                let mut state = lock.lock().unwrap_or_else(|p| p.into_inner());
                loop {
                    if state.stop {
                        return;
                    }
                    let deadline = match &state.armed {
                        None => None,
                        Some((deadline, what)) => {
                            if Instant::now() >= *deadline {
                                give_up(rank, size, what, state.timeout);
                            }
                            Some(*deadline)
                        }
                    };
                    state = match deadline {
                        None => wake.wait(state).unwrap_or_else(|p| p.into_inner()),
                        Some(deadline) => {
                            let left = deadline.saturating_duration_since(Instant::now());
                            wake.wait_timeout(state, left).unwrap_or_else(|p| p.into_inner()).0
                        }
                    };
                }
            })
            .expect("spawning the NCCL watchdog thread");
        Self { shared }
    }

    /// Arms the watchdog for a wait on other ranks until the returned guard is dropped;
    /// [`Watch::progress`] restarts the clock.
    fn watch(&self, what: &str) -> Watch {
        let watch = Watch { shared: self.shared.clone() };
        watch.set(Some(what.to_string()));
        watch
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        let (lock, wake) = &*self.shared;
        lock.lock().unwrap_or_else(|p| p.into_inner()).stop = true;
        wake.notify_all();
    }
}

/// A wait being watched; see [`Communicator::watch`].
pub struct Watch {
    shared: Arc<(Mutex<WatchState>, Condvar)>,
}

impl Watch {
    /// The wait made progress: the timeout starts again.
    pub fn progress(&self) {
        let (lock, _) = &*self.shared;
        let mut state = lock.lock().unwrap_or_else(|p| p.into_inner());
        let timeout = state.timeout;
        if let Some((deadline, _)) = &mut state.armed {
            *deadline = Instant::now() + timeout;
        }
    }

    fn set(&self, what: Option<String>) {
        let (lock, wake) = &*self.shared;
        let mut state = lock.lock().unwrap_or_else(|p| p.into_inner());
        let deadline = Instant::now() + state.timeout;
        state.armed = what.map(|w| (deadline, w));
        wake.notify_all();
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.set(None);
    }
}

/// The watchdog's end: one line, the temporary outputs removed, exit 1 at once (the main
/// thread may be blocked inside NCCL or the driver, so no unwinding and no exit handlers).
fn give_up(rank: usize, size: usize, what: &str, timeout: Duration) -> ! {
    let line = format!(
        "error: rank {rank} of {size}: {what} made no progress for {} s: another rank stopped, hangs or never \
         started (see --peer-timeout)\n",
        timeout.as_secs_f64()
    );
    let _ = std::io::stderr().write_all(line.as_bytes());
    crate::outfile::remove_temporaries();
    // SAFETY: ends the process; nothing after it runs.
    unsafe { libc::_exit(1) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sockets_are_widened_over_the_network_unless_the_environment_chooses() {
        let unset = |_: &str| None;
        assert_eq!(
            sockets_to_widen(true, unset),
            Some([("NCCL_SOCKET_NTHREADS", "4".to_string()), ("NCCL_NSOCKS_PERTHREAD", "4".to_string())])
        );
        assert_eq!(sockets_to_widen(false, unset), None, "not over the network");
        for chosen in SOCKET_VARS {
            let set = |name: &str| (name == chosen).then(|| "2".to_string());
            assert_eq!(sockets_to_widen(true, set), None, "{chosen} set");
        }
    }

    #[test]
    fn a_missing_library_is_named_with_where_to_get_it() {
        let message = missing_library().to_string();
        for needle in ["libnccl.so", "libnccl2", "nvidia-nccl-cu12", "LD_LIBRARY_PATH"] {
            assert!(message.contains(needle), "{needle}: {message}");
        }
    }

    #[test]
    fn an_id_round_trips_only_for_its_own_job() {
        let mut internal = [0 as std::ffi::c_char; 128];
        for (i, b) in internal.iter_mut().enumerate() {
            *b = (i as u8).wrapping_mul(37) as std::ffi::c_char;
        }
        let id = sys::ncclUniqueId { internal };
        let text = id_text("17.3", &id);
        assert_eq!(parse_id("17.3", &text).map(|p| p.internal), Some(internal));
        assert!(parse_id("18.0", &text).is_none(), "another job's id is not ours");
        assert!(parse_id("17.3", &text[..text.len() - 2]).is_none(), "a truncated id is refused");
        assert!(parse_id("17.3", "").is_none());
    }
}
