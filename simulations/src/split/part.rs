//! What the split's pieces share: a part ([`Part`]) and the rows it holds ([`PartRows`]), its
//! halos ([`Halo`], [`halos`]), its fields in GPU memory ([`DeviceRows`]) and how they travel
//! between GPUs ([`PeerCopy`]), and the one gather of a process's parts ([`assemble`]). The
//! transports ([`super::peer`], [`super::ranks`], [`super::rounds`]) and the engine
//! ([`super::engine`]) build on this file; it builds on none of them.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream};

use super::decomposition::{self, Band};
use crate::{
    cuda::Gpu,
    error::{Error, Result},
};

/// One part of a [`super::Split`]: the model over [`PartRows`], its rows numbered from 0.
pub trait Part {
    /// Runs `steps` steps over all of the part's rows, halos included.
    fn step(&mut self, steps: u32) -> Result<()>;
    /// `count` rows of field `field`, from row `first` of the part, row by row.
    fn rows(&mut self, field: usize, first: u32, count: u32) -> Result<Vec<f32>>;
    /// Overwrites rows of field `field` from row `first` of the part with `values` (whole rows).
    fn set_rows(&mut self, field: usize, first: u32, values: &[f32]) -> Result<()>;
    /// Field `field` in GPU memory, for a part that keeps its fields there: the split then
    /// copies the halos between two such parts device to device instead of through
    /// [`Part::rows`] and [`Part::set_rows`]. A part offers every field or none, on one stream
    /// (asked once when the split is made, and again at every exchange); `None` (the default,
    /// a part on the CPU or a model that does not opt in): its halos go through the host.
    fn device_rows(&mut self, _field: usize) -> Option<DeviceRows<'_>> {
        None
    }
    /// The part's GPU, opened with this crate's kernels ([`crate::cuda`]), for a part that
    /// offers [`Part::device_rows`]: its halos from another GPU are then read by a kernel
    /// through peer access where the model prefers it ([`super::BandedModel::peer_copy`]); `None`
    /// (the default): by the copy engines.
    fn gpu(&self) -> Option<&Arc<Gpu>> {
        None
    }
    /// Rows `first .. first + count` of each field of `fields`, in that order (the gathers):
    /// [`Part::rows`] of each by default; a part that downloads every field at once says so
    /// here.
    fn rows_of(&mut self, fields: &[usize], first: u32, count: u32) -> Result<Vec<Vec<f32>>> {
        fields.iter().map(|&field| self.rows(field, first, count)).collect()
    }
    /// Overwrites all of the part's rows, every field (`values`: each field's, in order; a
    /// restore): [`Part::set_rows`] of each by default; a part that uploads every field at
    /// once says so here.
    fn set_all(&mut self, values: &[Vec<f32>]) -> Result<()> {
        values.iter().enumerate().try_for_each(|(field, values)| self.set_rows(field, 0, values))
    }
    /// Waits until the work the part has queued is done (a part on a GPU: its stream); a part
    /// whose steps are done when [`Part::step`] returns (the default) has nothing to wait for.
    fn synchronize(&mut self) -> Result<()> {
        Ok(())
    }
}

/// One halo at a cut edge: the rows a part takes, at every exchange and for every field, from
/// its neighbour's band.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Halo {
    /// The part that takes the rows, and the first of them (in its rows, from 0).
    pub to: usize,
    pub to_row: u32,
    /// The neighbour whose band rows they are, and the first (in its rows).
    pub from: usize,
    pub from_row: u32,
    /// How many rows.
    pub rows: u32,
}

/// Every halo of parts holding `parts` (in order), whose first and last parts neighbour each
/// other where `periodic`: each part's halo before its band from the end of its neighbour
/// before's band, and its halo after from the start of its neighbour after's.
pub fn halos(parts: &[PartRows], periodic: bool) -> Vec<Halo> {
    let mut halos = Vec::new();
    for (p, rows) in parts.iter().enumerate() {
        let (before, after) = decomposition::neighbours(p, parts.len(), periodic);
        if let Some(q) = before.filter(|_| rows.halo_before > 0) {
            let from = &parts[q];
            let from_row = from.halo_before + from.band.len - rows.halo_before;
            halos.push(Halo { to: p, to_row: 0, from: q, from_row, rows: rows.halo_before });
        }
        if let Some(q) = after.filter(|_| rows.halo_after > 0) {
            let to_row = rows.halo_before + rows.band.len;
            halos.push(Halo {
                to: p,
                to_row,
                from: q,
                from_row: parts[q].halo_before,
                rows: rows.halo_after,
            });
        }
    }
    halos
}

/// The rows of the whole grid that a part holds: its band, with `halo_before` rows of its
/// neighbour before it and `halo_after` of the one after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PartRows {
    /// The rows the part owns: exact after every step.
    pub band: Band,
    pub halo_before: u32,
    pub halo_after: u32,
    /// The whole grid's rows (a periodic grid's rows wrap around it).
    pub grid_rows: u32,
}

impl PartRows {
    /// The rows the part holds.
    pub fn len(&self) -> u32 {
        self.halo_before + self.band.len + self.halo_after
    }

    /// Always false: a part holds at least its band's rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The row of the whole grid that each of the part's rows is, in order.
    pub fn grid_rows(&self) -> impl Iterator<Item = u32> {
        let first = i64::from(self.band.start) - i64::from(self.halo_before);
        decomposition::wrapped_rows(first, self.len(), self.grid_rows)
    }
}

/// How halos travel between two GPUs of this process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeerCopy {
    /// A kernel on the receiving GPU reads the neighbour's memory (peer access).
    Read,
    /// The copy engines (`cuMemcpyPeerAsync`).
    Engine,
}

impl PeerCopy {
    pub fn name(self) -> &'static str {
        match self {
            PeerCopy::Read => "peer reads",
            PeerCopy::Engine => "copy engines",
        }
    }
}

/// A field of a part in GPU memory: what a part on a GPU offers so that its halos are copied
/// device to device ([`Part::device_rows`]) or sent by NCCL.
pub struct DeviceRows<'a> {
    /// The field's values on the part's rows, row by row from its row 0 (whole rows of the
    /// grid's width): the buffer its next step reads.
    pub values: &'a mut CudaSlice<f32>,
    /// The stream the part queues its steps on (and reads and writes rows on, for
    /// [`Part::rows`] and [`Part::set_rows`]): the same stream for every field, for the
    /// part's whole life.
    pub stream: &'a Arc<CudaStream>,
}

/// The stream of part `p`'s fields in device memory ([`Part::device_rows`]), or `None` where it
/// offers none; refuses a part that offers some fields but not all, or on several streams.
pub fn device_stream<P: Part>(part: &mut P, p: usize, fields: usize) -> Result<Option<Arc<CudaStream>>> {
    let streams: Vec<Option<Arc<CudaStream>>> =
        (0..fields).map(|f| part.device_rows(f).map(|rows| rows.stream.clone())).collect();
    let handles: Vec<Option<usize>> =
        streams.iter().map(|s| s.as_ref().map(|s| s.cu_stream() as usize)).collect();
    Ok(one_stream(&handles, p)?.map(|f| Arc::clone(streams[f].as_ref().expect("an offered field"))))
}

/// Which field's stream stands for all of them, given each field's stream (`None`: not
/// offered in device memory): none where no field is offered; refuses some fields offered but
/// not all, or fields on several streams.
fn one_stream(streams: &[Option<usize>], p: usize) -> Result<Option<usize>> {
    let offered = streams.iter().flatten().count();
    match streams.first() {
        _ if offered == 0 => Ok(None),
        _ if offered < streams.len() => Err(Error::InvalidInput(format!(
            "part {p} offers {offered} of its {} fields in device memory (Part::device_rows): a part offers every \
             field or none",
            streams.len()
        ))),
        Some(first) if streams.iter().any(|s| s != first) => Err(Error::InvalidInput(format!(
            "part {p} offers its fields in device memory on several streams (Part::device_rows): one stream"
        ))),
        _ => Ok(Some(0)),
    }
}

/// The fields `fields` of the whole grid from the bands of `parts` (holding `rows`, every
/// band of the grid, in order): the one gather of the parts of one process.
pub fn assemble<P: Part>(
    parts: &mut [P],
    rows: &[PartRows],
    fields: &[usize],
    width: u32,
) -> Result<Vec<Vec<f32>>> {
    let w = width as usize;
    let cells = w * rows.first().map_or(0, |r| r.grid_rows as usize);
    let mut whole = vec![Vec::with_capacity(cells); fields.len()];
    for (part, rows) in parts.iter_mut().zip(rows) {
        let values = part.rows_of(fields, rows.halo_before, rows.band.len)?;
        for (whole, values) in whole.iter_mut().zip(values) {
            whole.extend(values);
        }
    }
    for (whole, field) in whole.iter().zip(fields) {
        if whole.len() != cells {
            return Err(Error::InvalidInput(format!(
                "the parts gave {} values of field {field} where the grid holds {cells} (a model's Part::rows gives \
                 whole rows)",
                whole.len(),
            )));
        }
    }
    Ok(whole)
}

/// The values of `field` (a whole grid of rows of `width`) on the rows of a part.
pub fn cut(field: &[f32], width: u32, rows: &PartRows) -> Vec<f32> {
    let width = width as usize;
    rows.grid_rows().flat_map(|r| &field[r as usize * width..(r as usize + 1) * width]).copied().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A part offers every field in device memory on one stream, or none: field 0's stream
    /// then stands for all (stream handles as numbers here).
    #[test]
    fn a_part_offers_all_its_fields_on_one_stream_or_none() {
        assert_eq!(one_stream(&[None, None], 3).unwrap(), None);
        assert_eq!(one_stream(&[Some(7), Some(7)], 3).unwrap(), Some(0));
        assert_eq!(one_stream(&[Some(7)], 3).unwrap(), Some(0));
        let some = one_stream(&[Some(7), None], 3).unwrap_err().to_string();
        assert!(some.contains("part 3 offers 1 of its 2 fields"), "{some}");
        let first_missing = one_stream(&[None, Some(7)], 3).unwrap_err().to_string();
        assert!(first_missing.contains("offers 1 of its 2 fields"), "{first_missing}");
        let several = one_stream(&[Some(7), Some(8)], 3).unwrap_err().to_string();
        assert!(several.contains("several streams"), "{several}");
    }

    /// A part holds its halos and its band; only a part of no rows at all is empty.
    #[test]
    fn a_part_holds_its_band_and_halos() {
        let rows = |start, len, halo_before, halo_after| PartRows {
            band: Band { start, len },
            halo_before,
            halo_after,
            grid_rows: 100,
        };
        assert_eq!(rows(10, 20, 4, 3).len(), 27);
        assert!(!rows(10, 20, 4, 3).is_empty());
        assert!(!rows(0, 0, 1, 0).is_empty());
        assert!(rows(0, 0, 0, 0).is_empty());
        assert_eq!(rows(98, 4, 2, 1).grid_rows().collect::<Vec<_>>(), [96, 97, 98, 99, 0, 1, 2]);
    }
}
