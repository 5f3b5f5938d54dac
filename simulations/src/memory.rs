//! Host memory checks, so that an oversized run is refused with the sizes instead of being
//! killed by the operating system.

use crate::{
    error::{Error, Result, human_bytes},
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

/// [`check_host`] for a run of `agents` agents on a `width × height` grid: `agent_bytes` for
/// the agents, `grid_bytes` for the grid (see [`require_agents`]).
pub fn check_host_agents(
    width: u32,
    height: u32,
    agents: u32,
    agent_bytes: u64,
    grid_bytes: u64,
) -> Result<()> {
    match available_host_bytes() {
        Some(available) => require_agents(width, height, agents, agent_bytes, grid_bytes, available, "host"),
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
