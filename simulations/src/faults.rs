//! Test-only hooks for the GPU fault tests (issue 27), read from environment variables in
//! every build, because the GPU tests run the release binary. Neither changes a run that
//! does not set them; both are documented in `docs/reliability.md` as test-only.
//!
//! - [`INJECT_FAULT_VAR`]`=N`: after the step count reaches `N`, a GPU Gray-Scott run launches
//!   [`kernels::diagnostics::fault_illegal_address`], a kernel that writes through an illegal
//!   address: a real kernel fault in a real CLI run.
//! - [`PAUSE_AFTER_GPU_CHECK_VAR`]`=PATH`: once the GPU memory check before a run passed,
//!   the run creates `PATH` and waits (up to a minute) until it is removed, so a test can take
//!   the GPU's memory exactly between the check and the allocations.

use std::{path::Path, sync::atomic::AtomicBool, time::Duration};

use crate::{Device, cuda::grid_1d, error::Result};

/// Set to a step count to make a GPU Gray-Scott run fault there (test only).
pub const INJECT_FAULT_VAR: &str = "RUST_GPU_SIM_INJECT_FAULT";

/// Set to a path to make a run pause after its GPU memory check (test only).
pub const PAUSE_AFTER_GPU_CHECK_VAR: &str = "RUST_GPU_SIM_PAUSE_AFTER_GPU_CHECK";

/// If [`INJECT_FAULT_VAR`] asks for it and `steps_done` has reached it, queues the faulting
/// kernel on the GPU's stream (once per process). The fault surfaces at the next
/// synchronisation, as a real one would.
pub fn inject_if_asked(device: &Device, steps_done: u64) -> Result<()> {
    static INJECTED: AtomicBool = AtomicBool::new(false);
    let Device::Cuda(gpu) = device else { return Ok(()) };
    let Some(at) = std::env::var(INJECT_FAULT_VAR).ok().and_then(|v| v.parse::<u64>().ok()) else {
        return Ok(());
    };
    if steps_done < at || INJECTED.swap(true, std::sync::atomic::Ordering::Relaxed) {
        return Ok(());
    }
    let mut out = gpu.stream().alloc_zeros::<u32>(1).map_err(|source| crate::Error::Cuda {
        context: "allocating the fault test's buffer".into(),
        source,
    })?;
    Ok(gpu.launch(kernels::diagnostics::fault_illegal_address, grid_1d(1, 1), (&mut out, u32::MAX, 1u32))?)
}

/// If [`PAUSE_AFTER_GPU_CHECK_VAR`] names a path: creates it, and waits until it is removed
/// (at most a minute).
pub(crate) fn pause_after_gpu_check() {
    let Some(path) = std::env::var_os(PAUSE_AFTER_GPU_CHECK_VAR) else { return };
    let path = Path::new(&path);
    if std::fs::write(path, b"").is_err() {
        return;
    }
    for _ in 0..6000 {
        if !path.exists() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}
