//! The transport choice of a split run's parts ([`Transport`]): peer copies between the parts
//! of this process, or NCCL (or CUDA IPC) between processes; with the one exchange and the
//! one gather of each.

use std::sync::Arc;

use cudarc::driver::{CudaEvent, CudaStream};

use super::{
    decomposition::Side,
    nccl::{Communicator, Watch},
    part::{Part, PartRows, assemble},
    peer::LocalHalos,
    ranks::RankHalos,
};
use crate::error::{CudaContext as _, Result};

/// How the halos of a split run's parts travel.
pub enum Transport {
    /// Every part is in this process: device copies, and peer copies between its GPUs
    /// ([`LocalHalos`]).
    Peer(LocalHalos),
    /// One band per process: NCCL's grouped send and receive, or the copy engines through
    /// CUDA IPC where set up ([`RankHalos`]); `pieces`: the halos between the parts this rank
    /// steps its band in, where it has several ([`LocalHalos::unordered`]).
    Ranks { ranks: Box<RankHalos>, pieces: Option<LocalHalos> },
}

impl Transport {
    /// This rank's communicator, where the parts are NCCL ranks.
    pub fn comm(&self) -> Option<&Communicator> {
        match self {
            Transport::Peer(_) => None,
            Transport::Ranks { ranks, .. } => Some(ranks.comm()),
        }
    }

    /// Whether this process writes the outputs (rank 0, or the only process).
    pub fn is_root(&self) -> bool {
        self.comm().is_none_or(Communicator::is_root)
    }

    /// The watch over a wait on other ranks, where the parts are NCCL ranks.
    pub fn watch(&self, what: &str) -> Option<Watch> {
        self.comm().map(|comm| comm.watch(what))
    }

    /// Refreshes every halo of `parts` (this process's, in order) from the neighbours' bands,
    /// `fields` fields of `width` values a row: device and peer copies in this process; or
    /// this rank's exchange on `stream` (which NCCL ranks must give), then the halos between
    /// its pieces.
    pub fn exchange<P: Part>(
        &mut self,
        parts: &mut [P],
        stream: Option<&Arc<CudaStream>>,
        fields: usize,
        width: u32,
    ) -> Result<()> {
        match self {
            Transport::Peer(halos) => halos.exchange(parts, width, fields),
            Transport::Ranks { ranks, pieces } => {
                ranks.exchange(parts, stream.expect("a rank's stream"), fields, width)?;
                match pieces {
                    Some(pieces) => pieces.exchange(parts, width, fields),
                    None => Ok(()),
                }
            }
        }
    }

    /// The fields `fields` of the whole grid from every band: `parts` (holding `rows`) in this
    /// process ([`assemble`]); or gathered to rank 0 on `stream` (which NCCL ranks must
    /// give, [`RankHalos::gather`]), the other ranks getting empty fields.
    pub fn gather<P: Part>(
        &mut self,
        parts: &mut [P],
        rows: &[PartRows],
        stream: Option<&Arc<CudaStream>>,
        fields: &[usize],
        width: u32,
    ) -> Result<Vec<Vec<f32>>> {
        match self {
            Transport::Peer(_) => assemble(parts, rows, fields, width),
            Transport::Ranks { ranks, .. } => {
                ranks.gather(parts, stream.expect("a rank's stream"), fields, width)
            }
        }
    }

    /// Every part's halo on `side` alone, each part's on its stream of `streams` (this
    /// process's parts', in order; a rank's first), after `written[p]` (the part's own step
    /// and, in this process, its neighbour's, which hold the rows), `arrived[p]` recorded
    /// after: a rank's side through NCCL or CUDA IPC ([`RankHalos::exchange_side`]), or the
    /// device copies of this process ([`LocalHalos::copy`]).
    #[allow(clippy::too_many_arguments)]
    pub fn exchange_side<P: Part>(
        &mut self,
        parts: &mut [P],
        side: Side,
        streams: &[Arc<CudaStream>],
        written: &[CudaEvent],
        arrived: &[CudaEvent],
        fields: usize,
        width: u32,
    ) -> Result<()> {
        match self {
            Transport::Ranks { ranks, .. } => {
                let stream = &streams[0];
                stream.wait(&written[0]).context(|| "ordering an exchange after a half".into())?;
                ranks.exchange_side(parts, side, stream, fields, width)?;
                arrived[0].record(stream).context(|| "recording an exchange".into())?;
            }
            Transport::Peer(halos) => {
                for p in 0..parts.len() {
                    let stream = &streams[p];
                    stream.wait(&written[p]).context(|| "ordering an exchange after a half".into())?;
                    let neighbour = match side {
                        Side::Below => p.checked_sub(1),
                        Side::Above => (p + 1 < parts.len()).then_some(p + 1),
                    };
                    if let Some(q) = neighbour
                        && !Arc::ptr_eq(stream, &streams[q])
                    {
                        stream.wait(&written[q]).context(|| "ordering an exchange after a half".into())?;
                    }
                    if let Some(halo) = halos.halo(p, side).copied() {
                        halos.copy(parts, &halo, stream, width, fields)?;
                    }
                    arrived[p].record(stream).context(|| "recording an exchange".into())?;
                }
            }
        }
        Ok(())
    }

    /// Gives up the halos, keeping this rank's communicator (for another run on it).
    pub fn into_communicator(self) -> Option<Communicator> {
        match self {
            Transport::Peer(_) => None,
            Transport::Ranks { ranks, .. } => Some((*ranks).into_communicator()),
        }
    }
}
