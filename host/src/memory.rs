//! Host memory checks, so that an oversized run is refused with the sizes instead of being
//! killed by the operating system.

use crate::{
    error::{Error, Result},
    resources::GPU_NEED,
};

pub use crate::resources::{available_host_bytes, total_host_bytes};

/// Refuses a `width × height` run that needs `need` bytes of host memory when less is
/// available. Where the available memory cannot be read (not Linux), nothing is refused.
pub fn check_host(width: u32, height: u32, need: u64) -> Result<()> {
    match available_host_bytes() {
        Some(available) => require(width, height, need, available, "host"),
        None => Ok(()),
    }
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
