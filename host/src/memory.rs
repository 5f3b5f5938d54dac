//! Host memory checks, so that an oversized run is refused with the sizes instead of being
//! killed by the operating system.

use crate::error::{Error, Result};

/// Refuses a `width × height` run that needs `need` bytes of host memory when less is
/// available. Where the available memory cannot be read (not Linux), nothing is refused.
pub fn check_host(width: u32, height: u32, need: u64) -> Result<()> {
    match available_host_bytes() {
        Some(available) => require(width, height, need, available, "host"),
        None => Ok(()),
    }
}

/// The last GPU check passed by [`require`]: (width, height, need, free then), for the
/// message of an allocation that fails later all the same.
static GPU_NEED: std::sync::Mutex<Option<(u32, u32, u64, u64)>> = std::sync::Mutex::new(None);

/// What the last passed GPU check of this process asked for and found free.
pub(crate) fn checked_gpu_need() -> Option<(u32, u32, u64, u64)> {
    *GPU_NEED.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Refuses a `width × height` run that needs more than `available` bytes of `device` memory.
pub fn require(width: u32, height: u32, need: u64, available: u64, device: &'static str) -> Result<()> {
    if device == "GPU" && need <= available {
        *GPU_NEED.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) =
            Some((width, height, need, available));
        crate::faults::pause_after_gpu_check();
    }
    if need > available {
        return Err(Error::TooBig { width, height, need, available, device });
    }
    Ok(())
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
    }
}
