//! What the machine has and what this run was checked for: host memory from `/proc/meminfo`
//! and the last GPU memory check passed. A leaf module (it uses no other of this crate), so
//! both the error type and the memory checks can read it.

/// The last GPU check passed by `memory::require`: (width, height, need, free then), for the
/// message of an allocation that fails later all the same.
pub(crate) static GPU_NEED: std::sync::Mutex<Option<(u32, u32, u64, u64)>> = std::sync::Mutex::new(None);

/// What the last passed GPU check of this process asked for and found free.
pub(crate) fn checked_gpu_need() -> Option<(u32, u32, u64, u64)> {
    *GPU_NEED.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// `MemAvailable` from `/proc/meminfo`, in bytes.
pub fn available_host_bytes() -> Option<u64> {
    meminfo("MemAvailable:")
}

/// `MemTotal` from `/proc/meminfo`, in bytes.
pub fn total_host_bytes() -> Option<u64> {
    meminfo("MemTotal:")
}

/// How many CPUs this process may run on (its affinity, as a launcher's binding sets it).
pub fn allowed_cpus() -> Option<usize> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; the size passed is its own.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return None;
        }
        Some(libc::CPU_COUNT(&set) as usize)
    }
}

/// What to tell a user whose launcher bound each process to one CPU.
pub const ONE_CPU_ADVICE: &str = "note: this process is bound to one CPU, which it shares with NCCL's proxy thread: \
     exchanges between processes slow down (Open MPI binds each of 2 processes to one core by default); start with \
     `mpirun --bind-to none` (or --map-by slot:PE=N, srun --cpus-per-task=N)";

fn meminfo(field: &str) -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with(field))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
