//! Host memory checks, so that an oversized run is refused with the sizes instead of being
//! killed by the operating system.

use crate::error::{Error, Result};

/// Refuses a `width × height` run that needs `need` bytes of host memory when less is
/// available. Where the available memory cannot be read (not Linux), nothing is refused.
pub fn check_host(width: u32, height: u32, need: u64) -> Result<()> {
    match available_host_bytes() {
        Some(available) if need > available => {
            Err(Error::TooBig { width, height, need, available, device: "host" })
        }
        _ => Ok(()),
    }
}

/// `MemAvailable` from `/proc/meminfo`, in bytes.
pub fn available_host_bytes() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
