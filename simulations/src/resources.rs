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

fn meminfo(field: &str) -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with(field))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
