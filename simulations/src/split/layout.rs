//! Where the parts of a split run live and how their halos travel: all in this process
//! (device-to-device or peer copies between its GPUs, or through the host between parts on
//! the CPU), or one part per process, each a rank
//! of an NCCL job ([`super::nccl`]).

use std::sync::Arc;

use crate::{cuda::Gpu, split::nccl::Communicator};

/// The parts of a split run.
pub enum Layout {
    /// `split` parts spread over `gpus`, all in this process.
    Local { gpus: Vec<Arc<Gpu>>, split: u32 },
    /// `split` parts on the CPU, in this process (the CPU variant's reference of a split).
    Cpu { split: u32 },
    /// One part per process: this process holds part `rank` of `size` on the communicator's
    /// GPU; rank 0 gathers the fields and writes every output.
    Ranks(Communicator),
}

impl Layout {
    /// The number of parts in the whole run.
    pub fn parts(&self) -> u32 {
        match self {
            Layout::Local { split, .. } | Layout::Cpu { split } => *split,
            Layout::Ranks(comm) => comm.size() as u32,
        }
    }

    /// The GPU this process tunes launch settings on (its first); none on the CPU.
    pub fn first_gpu(&self) -> Option<&Arc<Gpu>> {
        match self {
            Layout::Local { gpus, .. } => gpus.first(),
            Layout::Cpu { .. } => None,
            Layout::Ranks(comm) => Some(comm.gpu()),
        }
    }

    /// The GPUs the whole run spans: this process's (its parts may share them), or one per
    /// rank; 0 on the CPU.
    pub fn gpus(&self) -> usize {
        match self {
            Layout::Local { gpus, .. } => gpus.len(),
            Layout::Cpu { .. } => 0,
            Layout::Ranks(comm) => comm.size(),
        }
    }

    /// Whether this process writes the outputs (every process but NCCL ranks other than 0).
    pub fn is_root(&self) -> bool {
        match self {
            Layout::Local { .. } | Layout::Cpu { .. } => true,
            Layout::Ranks(comm) => comm.is_root(),
        }
    }

    /// Gives every process rank 0's `values` (launch settings that every part must share);
    /// nothing to do in one process.
    pub fn agree(&self, values: &mut [u32]) -> crate::Result<()> {
        match self {
            Layout::Local { .. } | Layout::Cpu { .. } => Ok(()),
            Layout::Ranks(comm) => comm.broadcast_u32s(values),
        }
    }
}
