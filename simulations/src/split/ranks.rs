//! The halos between the ranks of an NCCL job, one band per process ([`RankHalos`]): the one
//! exchange between processes of every split (NCCL's grouped send and receive, or the copy
//! engines through CUDA IPC, [`super::ipc`], which take the same transfers), and the one
//! gather of the whole fields to rank 0 for every output. A rank steps its band as one part,
//! or as several pieces (Gray-Scott's `--overlap`: its first and last rows apart from the
//! middle); its halos are its first piece's before and its last piece's after.
//!
//! **The order of an exchange**, the same on every rank (NCCL pairs the n-th send from one
//! rank to another with the n-th receive there, also where both neighbours are one rank, 2
//! ranks, or the rank itself, 1 rank): the halo before first ([`Side::Below`]: the band's last
//! rows to the next rank, the halo before from the previous one), then the halo after
//! ([`Side::Above`]: the band's first rows to the previous rank, the halo after from the next
//! one); within each side field by field, the send before the receive ([`side_transfers`]).

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream};

use super::{
    decomposition::{self, Side},
    ipc::IpcHalos,
    nccl::{Communicator, Transfer},
    part::{DeviceRows, Part, PartRows, device_stream},
};
use crate::error::{CudaContext as _, Error, Result};

/// One send or receive of one halo's rows at an exchange, for every field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RankTransfer {
    /// Whether this rank sends the rows (from its band) or receives them (into its halo).
    pub send: bool,
    /// The other rank.
    pub peer: usize,
    /// Whether the rows are the rank's last piece's (else its first's), the first of them (in
    /// that piece's rows) and how many.
    pub last: bool,
    pub row: u32,
    pub rows: u32,
}

/// What `rank` of ranks holding `rows` (in rank order) sends and receives for its halo on
/// `side`, in order: the send of its band's edge on the other side to the neighbour there,
/// then the receive of its halo from the neighbour on `side` (none beyond a bounded axis's
/// ends). `first` and `last`: the rows of the rank's first and last pieces (its own rows
/// where it steps its band whole).
pub fn side_transfers(
    rows: &[PartRows],
    rank: usize,
    periodic: bool,
    side: Side,
    first: PartRows,
    last: PartRows,
) -> Vec<RankTransfer> {
    let (before, after) = decomposition::neighbours(rank, rows.len(), periodic);
    let mine = rows[rank];
    let (send, receive) = match side {
        // The band's last rows to the next rank's halo before; this rank's halo before from
        // the previous rank.
        Side::Below => (
            after.filter(|&q| rows[q].halo_before > 0).map(|peer| {
                let count = rows[peer].halo_before;
                let row = last.halo_before + last.band.len - count;
                RankTransfer { send: true, peer, last: true, row, rows: count }
            }),
            before.filter(|_| mine.halo_before > 0).map(|peer| RankTransfer {
                send: false,
                peer,
                last: false,
                row: first.halo_before - mine.halo_before,
                rows: mine.halo_before,
            }),
        ),
        // The band's first rows to the previous rank's halo after; this rank's halo after from
        // the next rank.
        Side::Above => (
            before.filter(|&q| rows[q].halo_after > 0).map(|peer| RankTransfer {
                send: true,
                peer,
                last: false,
                row: first.halo_before,
                rows: rows[peer].halo_after,
            }),
            after.filter(|_| mine.halo_after > 0).map(|peer| RankTransfer {
                send: false,
                peer,
                last: true,
                row: last.halo_before + last.band.len,
                rows: mine.halo_after,
            }),
        ),
    };
    send.into_iter().chain(receive).collect()
}

/// The stream of `part`'s fields in device memory, which NCCL sends and receives on; refuses
/// a part that offers none (NCCL moves GPU memory only) and one on another GPU than the rank's.
pub(super) fn nccl_stream<P: Part>(
    part: &mut P,
    rank: usize,
    fields: usize,
    gpu: usize,
) -> Result<Arc<CudaStream>> {
    let Some(stream) = device_stream(part, rank, fields)? else {
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

/// This process's side of a split over NCCL ranks: its communicator, every rank's rows and
/// pieces, and rank 0's gather buffer.
pub struct RankHalos {
    /// Where every rank's neighbours share its host and it was asked for
    /// ([`RankHalos::connect_ipc`]): the halos go by the copy engines instead of NCCL's
    /// kernel. First, so that it is dropped first: freeing it waits for the exchanges, which
    /// need the parts and the communicator.
    ipc: Option<IpcHalos>,
    comm: Communicator,
    /// Every rank's rows (its band and halos), in rank order.
    rows: Vec<PartRows>,
    /// Every rank's pieces (the rows of each part it steps its band in), in rank order.
    pieces: Vec<Vec<PartRows>>,
    periodic: bool,
    /// Rank 0's buffer for the bands it gathers (allocated at the first gather, grown where
    /// a later one needs more).
    gathered: Option<CudaSlice<f32>>,
}

impl RankHalos {
    /// `comm`'s side of ranks holding `rows` (in rank order), each rank stepping its band as
    /// `pieces` of it (every rank's, in rank order; `None`: each band whole), on a `periodic`
    /// axis or not.
    pub fn new(
        comm: Communicator,
        rows: Vec<PartRows>,
        pieces: Option<Vec<Vec<PartRows>>>,
        periodic: bool,
    ) -> Self {
        let pieces = pieces.unwrap_or_else(|| rows.iter().map(|r| vec![*r]).collect());
        Self { ipc: None, comm, rows, pieces, periodic, gathered: None }
    }

    /// Sets up the halos by the copy engines through CUDA IPC ([`IpcHalos::connect`], every
    /// rank must call it), slots of `slot_bytes` per side: `Ok(None)` where every rank can,
    /// `Ok(Some(why))` where not (NCCL carries the halos).
    pub fn connect_ipc(&mut self, slot_bytes: usize) -> Result<Option<String>> {
        let (before, after) = decomposition::neighbours(self.comm.rank(), self.rows.len(), self.periodic);
        Ok(match IpcHalos::connect(&self.comm, before, after, slot_bytes)? {
            Ok(halos) => {
                self.ipc = Some(halos);
                None
            }
            Err(why) => Some(why),
        })
    }

    /// Whether the halos go by the copy engines through CUDA IPC.
    pub fn by_ipc(&self) -> bool {
        self.ipc.is_some()
    }

    pub fn comm(&self) -> &Communicator {
        &self.comm
    }

    /// Gives up the halos, keeping the communicator (for another run on it).
    pub fn into_communicator(mut self) -> Communicator {
        // The copy engines' buffers go first: freeing them waits for the neighbours' last
        // flags, not for the communicator.
        self.ipc = None;
        self.comm
    }

    /// Every rank's rows, in rank order.
    pub fn rows(&self) -> &[PartRows] {
        &self.rows
    }

    /// This rank's pieces' rows.
    pub fn my_pieces(&self) -> &[PartRows] {
        &self.pieces[self.comm.rank()]
    }

    /// This rank's transfers for its halo on `side` ([`side_transfers`]).
    pub fn side(&self, side: Side) -> Vec<RankTransfer> {
        let mine = self.my_pieces();
        let (first, last) = (mine[0], mine[mine.len() - 1]);
        side_transfers(&self.rows, self.comm.rank(), self.periodic, side, first, last)
    }

    /// The NCCL transfers of this rank's halo on `side`, every field of `fields` (in order),
    /// from and into the device memory of `parts` (this rank's pieces, in order), on `stream`.
    pub fn transfers<P: Part>(
        &self,
        parts: &mut [P],
        side: Side,
        stream: &CudaStream,
        fields: usize,
        width: u32,
    ) -> Result<Vec<Transfer>> {
        let (w, last) = (width as usize, parts.len() - 1);
        let side = self.side(side);
        let mut group = Vec::with_capacity(side.len() * fields);
        for field in 0..fields {
            for t in &side {
                let part = &mut parts[if t.last { last } else { 0 }];
                let values = offered(part.device_rows(field), self.comm.rank(), field)?;
                group.push(Transfer::rows(
                    values.values,
                    stream,
                    t.row as usize,
                    t.rows as usize,
                    w,
                    t.peer,
                    t.send,
                ));
            }
        }
        Ok(group)
    }

    /// Refreshes this rank's halos from its neighbours' bands and sends them theirs from its
    /// band, every field, on `stream`: in one NCCL group, the halo before, then the halo
    /// after; or through CUDA IPC, side by side.
    pub fn exchange<P: Part>(
        &mut self,
        parts: &mut [P],
        stream: &Arc<CudaStream>,
        fields: usize,
        width: u32,
    ) -> Result<()> {
        if self.ipc.is_some() {
            for side in [Side::Below, Side::Above] {
                self.exchange_side(parts, side, stream, fields, width)?;
            }
            return Ok(());
        }
        let mut group = self.transfers(parts, Side::Below, stream, fields, width)?;
        group.extend(self.transfers(parts, Side::Above, stream, fields, width)?);
        self.comm.exchange(stream, &group)
    }

    /// This rank's halo on `side` alone (and its edge on the other side to the neighbour
    /// there), on `stream`: one NCCL group, or through CUDA IPC.
    pub fn exchange_side<P: Part>(
        &mut self,
        parts: &mut [P],
        side: Side,
        stream: &Arc<CudaStream>,
        fields: usize,
        width: u32,
    ) -> Result<()> {
        let transfers = self.transfers(parts, side, stream, fields, width)?;
        match self.ipc.as_mut() {
            Some(ipc) => ipc.exchange(stream, side, &transfers),
            None => self.comm.exchange(stream, &transfers),
        }
    }

    /// The fields `fields` of the whole grid on rank 0, every rank's band gathered there
    /// (rank by rank: one NCCL group of every field's pieces each, copied to the host in
    /// order); the other ranks send their band (one group) and get empty fields. `parts`:
    /// this rank's pieces, in order; `stream`: the one the gather runs on.
    pub fn gather<P: Part>(
        &mut self,
        parts: &mut [P],
        stream: &Arc<CudaStream>,
        fields: &[usize],
        width: u32,
    ) -> Result<Vec<Vec<f32>>> {
        let watch = self.comm.watch("gathering the fields on rank 0");
        let w = width as usize;
        let rank = self.comm.rank();
        if !self.comm.is_root() {
            let mut sends = Vec::new();
            for &field in fields {
                for (part, rows) in parts.iter_mut().zip(&self.pieces[rank]) {
                    let values = offered(part.device_rows(field), rank, field)?;
                    let (first, count) = (rows.halo_before as usize, rows.band.len as usize);
                    sends.push(Transfer::rows(values.values, stream, first, count, w, 0, true));
                }
            }
            self.comm.exchange(stream, &sends)?;
            stream.synchronize().context(|| "sending this rank's band to rank 0".into())?;
            return Ok(vec![Vec::new(); fields.len()]);
        }
        let mut whole = vec![vec![0.0; w * self.rows[0].grid_rows as usize]; fields.len()];
        for (part, rows) in parts.iter_mut().zip(&self.pieces[rank]) {
            let own = part.rows_of(fields, rows.halo_before, rows.band.len)?;
            let (at, len) = (rows.band.start as usize * w, rows.band.len as usize * w);
            for (whole, own) in whole.iter_mut().zip(own) {
                if own.len() != len {
                    return Err(Error::InvalidInput(format!(
                        "rank 0's part gave {} values where its band holds {len} (a model's Part::rows gives whole \
                         rows)",
                        own.len()
                    )));
                }
                whole[at..at + len].copy_from_slice(&own);
            }
        }
        if self.rows.len() == 1 {
            return Ok(whole);
        }
        let most = self.rows.iter().map(|r| r.band.len as usize).max().unwrap_or(0) * w;
        let need = most * fields.len();
        if self.gathered.as_ref().is_none_or(|b| b.len() < need) {
            // (A row gathered earlier may have left a buffer of one row.)
            self.gathered =
                Some(stream.alloc_zeros::<f32>(need).context(|| "allocating the gather buffer".into())?);
        }
        let buffer = self.gathered.as_mut().expect("allocated above");
        for (r, rows) in self.rows.iter().enumerate().skip(1) {
            // Rank r's pieces, as it sends them: field by field.
            let mut receives = Vec::new();
            for f in 0..fields.len() {
                for piece in &self.pieces[r] {
                    let row = f * most / w + (piece.band.start - rows.band.start) as usize;
                    receives.push(Transfer::rows(buffer, stream, row, piece.band.len as usize, w, r, false));
                }
            }
            self.comm.exchange(stream, &receives)?;
            let (at, len) = (rows.band.start as usize * w, rows.band.len as usize * w);
            for (f, whole) in whole.iter_mut().enumerate() {
                (stream.memcpy_dtoh(&buffer.slice(f * most..f * most + len), &mut whole[at..at + len]))
                    .context(|| format!("gathering field {}", fields[f]))?;
            }
            stream.synchronize().context(|| "gathering the fields".into())?;
            watch.progress();
        }
        Ok(whole)
    }

    /// Row `row` of the whole grid, field `field`, on rank 0, sent by the rank whose band holds
    /// it; the other ranks get an empty row.
    pub fn gather_row<P: Part>(
        &mut self,
        parts: &mut [P],
        stream: &Arc<CudaStream>,
        field: usize,
        row: u32,
        width: u32,
    ) -> Result<Vec<f32>> {
        let w = width as usize;
        let owner = (self.rows.iter().position(|r| (r.band.start..r.band.end()).contains(&row)))
            .ok_or_else(|| Error::InvalidInput(format!("row {row} is outside the grid")))?;
        let _watch = self.comm.watch("gathering a slice on rank 0");
        let (rank, root) = (self.comm.rank(), self.comm.is_root());
        if owner == rank {
            let (p, rows) = (self.pieces[rank].iter().enumerate())
                .find(|(_, r)| (r.band.start..r.band.end()).contains(&row))
                .expect("a rank's pieces hold its band");
            let local = row - rows.band.start + rows.halo_before;
            if root {
                return parts[p].rows(field, local, 1);
            }
            let values = offered(parts[p].device_rows(field), rank, field)?;
            let send = Transfer::rows(values.values, stream, local as usize, 1, w, 0, true);
            self.comm.exchange(stream, &[send])?;
            stream.synchronize().context(|| "sending a slice to rank 0".into())?;
            return Ok(Vec::new());
        }
        if !root {
            return Ok(Vec::new());
        }
        if self.gathered.as_ref().is_none_or(|b| b.len() < w) {
            self.gathered =
                Some(stream.alloc_zeros::<f32>(w).context(|| "allocating the gather buffer".into())?);
        }
        let buffer = self.gathered.as_mut().expect("allocated above");
        self.comm.exchange(stream, &[Transfer::rows(buffer, stream, 0, 1, w, owner, false)])?;
        let mut out = vec![0.0; w];
        stream.memcpy_dtoh(&buffer.slice(0..w), &mut out).context(|| "gathering a slice".into())?;
        stream.synchronize().context(|| "gathering a slice".into())?;
        Ok(out)
    }
}

/// Field `field` of `rank`'s part in device memory, or why not.
fn offered(rows: Option<DeviceRows<'_>>, rank: usize, field: usize) -> Result<DeviceRows<'_>> {
    rows.ok_or_else(|| {
        Error::InvalidInput(format!(
            "rank {rank}'s part no longer offers field {field} in device memory (Part::device_rows), which NCCL \
             sends and receives its halos from"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::split::decomposition::Band;

    fn rows(band: Band, before: u32, after: u32) -> PartRows {
        PartRows { band, halo_before: before, halo_after: after, grid_rows: 40 }
    }

    fn t(send: bool, peer: usize, last: bool, row: u32, rows: u32) -> RankTransfer {
        RankTransfer { send, peer, last, row, rows }
    }

    /// The order Gray-Scott's exchange had before the split engine (its `exchange_nccl`): the
    /// band's last rows down to the next rank, the top halo from the previous; then the first
    /// rows up to the previous rank, the bottom halo from the next (the fields inside each
    /// side, by [`RankHalos::transfers`]); with `--overlap`, from and into the first and last
    /// pieces.
    #[test]
    fn a_periodic_ranks_exchange_is_gray_scotts() {
        let h = 4;
        let all: Vec<PartRows> = (0..4).map(|r| rows(Band { start: 10 * r, len: 10 }, h, h)).collect();
        let whole = all[1];
        let below = side_transfers(&all, 1, true, Side::Below, whole, whole);
        let above = side_transfers(&all, 1, true, Side::Above, whole, whole);
        assert_eq!(below, [t(true, 2, true, 10, h), t(false, 0, false, 0, h)]);
        assert_eq!(above, [t(true, 0, false, h, h), t(false, 2, true, h + 10, h)]);
        // In pieces (4 + 2 + 4 rows): the last piece's rows go down, the first's up.
        let (first, last) = (rows(Band { start: 10, len: 4 }, h, h), rows(Band { start: 16, len: 4 }, h, h));
        assert_eq!(side_transfers(&all, 1, true, Side::Below, first, last)[0], t(true, 2, true, 4, h));
        assert_eq!(side_transfers(&all, 1, true, Side::Above, first, last)[1], t(false, 2, true, h + 4, h));
        // Rank 0 wraps around; one rank is its own neighbour.
        assert_eq!(side_transfers(&all, 0, true, Side::Below, all[0], all[0])[1], t(false, 3, false, 0, h));
        let one = [rows(Band { start: 0, len: 40 }, h, h)];
        assert_eq!(
            side_transfers(&one, 0, true, Side::Below, one[0], one[0]),
            [t(true, 0, true, 40, h), t(false, 0, false, 0, h)]
        );
    }

    /// The order heat's exchange had (its `halo_transfers`): per side, the send of the edge to
    /// the neighbour on the other side, then the receive of the halo; none beyond the faces.
    #[test]
    fn a_bounded_ranks_exchange_is_heats() {
        let h = 4;
        let all = [
            rows(Band { start: 0, len: 12 }, 0, h),
            rows(Band { start: 12, len: 14 }, h, h),
            rows(Band { start: 26, len: 14 }, h, 0),
        ];
        let sides = |r: usize| {
            [Side::Below, Side::Above].map(|side| side_transfers(&all, r, false, side, all[r], all[r]))
        };
        assert_eq!(sides(0), [vec![t(true, 1, true, 12 - h, h)], vec![t(false, 1, true, 12, h)]]);
        assert_eq!(
            sides(1),
            [
                vec![t(true, 2, true, h + 14 - h, h), t(false, 0, false, 0, h)],
                vec![t(true, 0, false, h, h), t(false, 2, true, h + 14, h)]
            ]
        );
        assert_eq!(sides(2), [vec![t(false, 1, false, 0, h)], vec![t(true, 1, false, h, h)]]);
    }
}
