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
}
