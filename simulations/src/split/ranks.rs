//! A [`Split`](super::Split) whose parts are the ranks of an NCCL job, one part per process
//! ([`Split::new_ranked`](super::Split::new_ranked)): this process holds its own part only,
//! whose halos travel through NCCL's grouped send and receive ([`Communicator::exchange`]) on
//! the part's stream, from and into the device memory the part offers
//! ([`Part::device_rows`](super::Part::device_rows)); rank 0 gathers the whole fields for
//! every output. The halos are those of the split in one process ([`super::halos`]), so the
//! results are its bits.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream};

use super::{DeviceRows, Halo, Part, PartRows};
use crate::{
    error::{CudaContext as _, Error, Result},
    split::nccl::{Communicator, Transfer},
};

/// This process's side of a split over NCCL ranks.
pub(super) struct Ranks {
    comm: Communicator,
    /// Every part's rows, in rank order (this rank's is `rows[comm.rank()]`).
    rows: Vec<PartRows>,
    /// What this rank sends and receives at every exchange ([`rank_transfers`]).
    transfers: Vec<RankTransfer>,
    /// The stream the part offers its fields on, which its halos travel on.
    stream: Arc<CudaStream>,
    /// Rank 0's buffer for the bands it gathers (allocated at the first gather).
    gathered: Option<CudaSlice<f32>>,
}

/// One send or receive of one halo's rows at an exchange, for every field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct RankTransfer {
    /// Whether this rank sends the rows (from its band) or receives them (into its halo).
    pub send: bool,
    /// The other rank.
    pub peer: usize,
    /// The first of the rows, in this rank's part, and how many.
    pub row: u32,
    pub rows: u32,
}

/// What `rank` sends and receives of `halos` (every part's, [`super::halos`]), in their order:
/// every rank filters the same list, so the n-th send from one rank to another meets the
/// n-th receive there, as NCCL pairs them.
pub(super) fn rank_transfers(halos: &[Halo], rank: usize) -> Vec<RankTransfer> {
    let mut transfers = Vec::new();
    for halo in halos {
        if halo.from == rank {
            transfers.push(RankTransfer { send: true, peer: halo.to, row: halo.from_row, rows: halo.rows });
        }
        if halo.to == rank {
            transfers.push(RankTransfer { send: false, peer: halo.from, row: halo.to_row, rows: halo.rows });
        }
    }
    transfers
}

/// The stream of `part`'s fields in device memory, which NCCL sends and receives on; refuses
/// a part that offers none (NCCL moves GPU memory only) and one on another GPU than the rank's.
pub(super) fn nccl_stream<P: Part>(
    part: &mut P,
    rank: usize,
    fields: usize,
    gpu: usize,
) -> Result<Arc<CudaStream>> {
    let Some(stream) = super::engine::device_stream(part, rank, fields)? else {
        return Err(Error::InvalidInput(format!(
            "rank {rank}'s part keeps its fields in host memory (the model's Part::device_rows offers none), but a \
             split over NCCL ranks sends its halos from GPU memory: NCCL moves device memory only"
        )));
    };
    let on = stream.context().ordinal();
    if on != gpu {
        return Err(Error::InvalidInput(format!(
            "rank {rank}'s part keeps its fields on GPU {on}, but the rank's NCCL communicator is on GPU {gpu}: build \
             the part on the communicator's GPU"
        )));
    }
    Ok(stream)
}

impl Ranks {
    /// `comm`'s side of parts holding `rows` (in rank order) whose halos are `halos`, this
    /// rank's part offering its fields on `stream`.
    pub(super) fn new(
        comm: Communicator,
        rows: Vec<PartRows>,
        halos: &[Halo],
        stream: Arc<CudaStream>,
    ) -> Self {
        let transfers = rank_transfers(halos, comm.rank());
        Self { comm, rows, transfers, stream, gathered: None }
    }

    pub(super) fn comm(&self) -> &Communicator {
        &self.comm
    }

    /// Every part's rows, in rank order.
    pub(super) fn rows(&self) -> &[PartRows] {
        &self.rows
    }

    /// Refreshes this rank's halos from its neighbours' bands and sends them theirs from its
    /// band, every field, in one NCCL group on the part's stream.
    pub(super) fn exchange<P: Part>(&self, part: &mut P, names: &[&str], width: u32) -> Result<()> {
        let w = width as usize;
        let mut group = Vec::with_capacity(self.transfers.len() * names.len());
        for t in &self.transfers {
            for (field, name) in names.iter().enumerate() {
                let values = self.offered(part.device_rows(field), name, w)?;
                let (row, count) = (t.row as usize, t.rows as usize);
                group.push(Transfer::rows(values, &self.stream, row, count, w, t.peer, t.send));
            }
        }
        self.comm.exchange(&self.stream, &group)
    }

    /// Field `field` (named `name`) of the whole grid on rank 0, every rank's band gathered
    /// there; the other ranks send their band and get nothing.
    pub(super) fn gather<P: Part>(
        &mut self,
        part: &mut P,
        field: usize,
        name: &str,
        width: u32,
    ) -> Result<Vec<f32>> {
        let watch = self.comm.watch("gathering the fields on rank 0");
        let w = width as usize;
        let mine = self.rows[self.comm.rank()];
        if !self.comm.is_root() {
            let values = self.offered(part.device_rows(field), name, w)?;
            let (first, count) = (mine.halo_before as usize, mine.band.len as usize);
            let send = Transfer::rows(values, &self.stream, first, count, w, 0, true);
            self.comm.exchange(&self.stream, &[send])?;
            self.stream.synchronize().context(|| "sending this rank's band to rank 0".into())?;
            return Ok(Vec::new());
        }
        let mut whole = vec![0.0; w * mine.grid_rows as usize];
        let own = part.rows(field, mine.halo_before, mine.band.len)?;
        let at = mine.band.start as usize * w;
        if own.len() != mine.band.len as usize * w {
            return Err(Error::InvalidInput(format!(
                "rank 0's part gave {} values of field {name:?} where its band holds {} (a model's Part::rows gives \
                 whole rows)",
                own.len(),
                mine.band.len as usize * w
            )));
        }
        whole[at..at + own.len()].copy_from_slice(&own);
        if self.rows.len() == 1 {
            return Ok(whole);
        }
        let most = self.rows.iter().map(|r| r.band.len as usize).max().unwrap_or(0) * w;
        if self.gathered.is_none() {
            let buffer =
                self.stream.alloc_zeros::<f32>(most).context(|| "allocating the gather buffer".into())?;
            self.gathered = Some(buffer);
        }
        let buffer = self.gathered.as_mut().expect("allocated above");
        for (r, rows) in self.rows.iter().enumerate().skip(1) {
            let (at, len) = (rows.band.start as usize * w, rows.band.len as usize * w);
            let receive = Transfer::rows(buffer, &self.stream, 0, rows.band.len as usize, w, r, false);
            self.comm.exchange(&self.stream, &[receive])?;
            (self.stream.memcpy_dtoh(&buffer.slice(0..len), &mut whole[at..at + len]))
                .context(|| format!("gathering field {name:?}"))?;
            self.stream.synchronize().context(|| format!("gathering field {name:?}"))?;
            watch.progress();
        }
        Ok(whole)
    }

    /// `rows`, field `name` of this rank's part, if offered on the stream its halos travel on
    /// and holding every row of the part (`width` values each).
    fn offered<'a>(
        &self,
        rows: Option<DeviceRows<'a>>,
        name: &str,
        width: usize,
    ) -> Result<&'a CudaSlice<f32>> {
        let need = self.rows[self.comm.rank()].len() as usize * width;
        match rows {
            Some(rows) if rows.stream.cu_stream() == self.stream.cu_stream() && rows.values.len() < need => {
                Err(Error::InvalidInput(format!(
                    "rank {}'s part offers {} values of field {name:?} in device memory where its rows hold {need}                      (Part::device_rows gives every row of the part, halos included)",
                    self.comm.rank(),
                    rows.values.len()
                )))
            }
            Some(rows) if rows.stream.cu_stream() == self.stream.cu_stream() => Ok(rows.values),
            _ => Err(Error::InvalidInput(format!(
                "rank {}'s part no longer offers field {name:?} in device memory on the stream it had when the split \
                 was made (Part::device_rows), which NCCL sends and receives its halos on",
                self.comm.rank()
            ))),
        }
    }
}
