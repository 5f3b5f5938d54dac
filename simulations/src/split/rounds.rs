//! Halos sent in rounds while the launch that writes them runs: the overlap hook of a split
//! whose parts each write their rows in one launch on a GPU of their own in this process
//! (heat's `single` in slabs; [`Rounds`]).
//!
//! A part's launch is cut into rounds ([`RoundSchedule`]): after round `r` every row of the
//! part has its first `done[r]` units written (a unit: a run of `unit_len` values of a row;
//! `units` of them make a row). After each round, every block of the launch counts itself done
//! in a device counter of the part, and before a round a block waits until the neighbours'
//! rows it reads have arrived, which the part's arrival flags say ([`RoundLaunch`]: the
//! launch's side of this protocol is the kernel's). Here, on each part's exchange stream, per
//! round: a wait (a stream memory operation) until the round's count is reached, copies by the
//! copy engines of the units the round completed on the part's edge rows into its neighbours'
//! halos, and a write of the units now there into each neighbour's arrival flags. The values
//! carry the launch's number, `base(k) = k·(units + 1)` for launch `k` (wrapping; every part
//! makes the same launches), so nothing is reset between launches. A launch waits only for
//! rows of its neighbours' launch before, so no launch waits for one that waits for it.

use std::sync::Arc;

use cudarc::driver::{CudaEvent, CudaStream, sys};

use super::{
    part::{DeviceRows, Part, PartRows, PeerCopy},
    peer, stream_flags,
};
use crate::{
    cuda::Gpu,
    error::{CudaContext as _, Error, Result},
};

/// A part whose launch writes its rows in rounds.
pub trait RoundPart: Part {
    /// The field the part's coming launch writes (its neighbours' rows arrive in its halos,
    /// its edge rows leave from it), and the stream the part launches on.
    fn written_rows(&mut self) -> DeviceRows<'_>;
}

/// How one part's launch completes its rows: `blocks` blocks count themselves in each
/// round's counter; after round `r`, the first `done[r]` units of every row are written
/// (never fewer than after the round before; the last round's `done` is the whole row).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoundSchedule {
    pub blocks: u32,
    pub done: Vec<u32>,
}

/// What a part's launch is given: its flags (device memory of its GPU, `u32`s: `[0]` the units
/// arrived from the part before, `[1]` from the part after, `[2 + r]` round `r`'s blocks done,
/// cumulative), this launch's `base`, and which neighbours it has (bit 0: before, bit 1:
/// after). A round's rows from a neighbour are there once its flag is at least
/// `base + units` (wrapping) for the units the round reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoundLaunch {
    pub flags: u64,
    pub base: u32,
    pub sides: u32,
}

/// `base(k)` of launch `k`, for rows of `units` units.
pub fn round_base(launch: u32, units: u32) -> u32 {
    launch.wrapping_mul(units.wrapping_add(1))
}

/// One copy of a round: `count` values of every one of `rows` rows, from the sender's row
/// `from_row` on into the receiver's row `to_row` on, both from value `at` of their row; then
/// the receiver's arrival flag `flag` (0: from the part before, 1: from the part after).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoundCopy {
    pub to: usize,
    pub rows: u32,
    pub from_row: u32,
    pub to_row: u32,
    pub at: usize,
    pub count: usize,
    pub flag: u32,
}

/// The copies from part `p` (of parts holding `rows`, none periodic) once a round has
/// written units `before..done` of each of its rows: its first own rows into the top halo of
/// the part before, its last ones into the bottom halo of the part after, as many rows as
/// those halos hold.
pub fn round_copies(rows: &[PartRows], p: usize, before: u32, done: u32, unit_len: usize) -> Vec<RoundCopy> {
    let from = rows[p];
    let mut copies = Vec::with_capacity(2);
    let (at, count) = (before as usize * unit_len, (done - before) as usize * unit_len);
    if let Some(q) = p.checked_sub(1) {
        let to = rows[q];
        let from_row = from.halo_before;
        let to_row = to.halo_before + to.band.len;
        copies.push(RoundCopy { to: q, rows: to.halo_after, from_row, to_row, at, count, flag: 1 });
    }
    if p + 1 < rows.len() {
        let to = rows[p + 1];
        let from_row = from.halo_before + from.band.len - to.halo_before;
        copies.push(RoundCopy { to: p + 1, rows: to.halo_before, from_row, to_row: 0, at, count, flag: 0 });
    }
    copies
}

/// Refuses what [`Rounds`] cannot send: a periodic split (a halo beyond the first or last
/// part), or a schedule per part that does not rise to the whole row.
fn check(rows: &[PartRows], schedules: &[RoundSchedule], units: u32) -> Result<()> {
    let refuse = |why: String| Err(Error::InvalidInput(format!("an exchange by rounds: {why}")));
    if rows.len() != schedules.len() {
        return refuse(format!("{} parts, {} schedules", rows.len(), schedules.len()));
    }
    if rows.first().is_some_and(|r| r.halo_before > 0) || rows.last().is_some_and(|r| r.halo_after > 0) {
        return refuse("the split is periodic (only a bounded axis is sent by rounds)".into());
    }
    if let Some(s) = schedules.iter().find(|s| s.done.windows(2).any(|w| w[1] < w[0])) {
        return refuse(format!("rounds done {:?}: falling", s.done));
    }
    if let Some(s) = schedules.iter().find(|s| s.done.last() != Some(&units)) {
        return refuse(format!("the last round writes {:?} of {units} units", s.done.last()));
    }
    Ok(())
}

/// The exchange by rounds of a split's parts in this process, one GPU each (parts that share a
/// GPU work too, one launch after another, but slowly: a launch that holds every SM leaves
/// none to a copy within one GPU that is a kernel).
pub struct Rounds {
    rows: Vec<PartRows>,
    schedules: Vec<RoundSchedule>,
    units: u32,
    unit_len: usize,
    row_len: usize,
    /// Per part, on its GPU.
    flags: Vec<Flags>,
    /// Per part, by the parity of the launch: its edges' copies done.
    copied: Vec<[CudaEvent; 2]>,
    /// Per part: its last launch queued. Parts that share a GPU launch one after another,
    /// each after the others' copies of the launch before (a copy within one GPU may be a
    /// kernel): a waiting launch could otherwise hold every SM while what it waits for has
    /// none.
    launched: Vec<CudaEvent>,
    sharing: Vec<Vec<usize>>,
    /// Launches made (every part the same).
    launches: u32,
    /// Whether every launch was queued whole with its copies (else a queued wait may never
    /// be met, and the flags are not freed).
    whole: bool,
}

/// `u32` flags in device memory for stream memory operations, which the driver takes on
/// memory from `cuMemAlloc` (not on memory from the stream-ordered pool cudarc allocates
/// from). Freed by [`Rounds`]' drop.
struct Flags {
    gpu: Arc<Gpu>,
    address: sys::CUdeviceptr,
}

impl Flags {
    /// `values`, on `gpu`.
    fn new(gpu: &Arc<Gpu>, values: &[u32]) -> Result<Self> {
        gpu.context().bind_to_thread().context(|| "binding the GPU".into())?;
        let mut address = 0;
        // SAFETY: an allocation of the values' bytes, then a synchronous copy into it.
        unsafe {
            sys::cuMemAlloc_v2(&mut address, 4 * values.len())
                .result()
                .context(|| "allocating round flags".into())?;
            let flags = Self { gpu: gpu.clone(), address };
            sys::cuMemcpyHtoD_v2(address, values.as_ptr().cast(), 4 * values.len())
                .result()
                .context(|| "setting round flags".into())?;
            Ok(flags)
        }
    }
}

impl Drop for Rounds {
    /// Frees the flags once every GPU is idle, if every launch was queued whole; after one
    /// that failed half-queued, a wait may never be met, so the flags are left to the
    /// process's end instead of waiting for it.
    fn drop(&mut self) {
        if !self.whole {
            return;
        }
        for flags in &self.flags {
            if flags.gpu.context().bind_to_thread().is_ok() {
                // SAFETY: the allocation is this struct's; every queued use of it is over once
                // the context has synchronised.
                unsafe {
                    let _ = sys::cuCtxSynchronize();
                    let _ = sys::cuMemFree_v2(flags.address);
                }
            }
        }
    }
}

impl Rounds {
    /// The rounds of `parts` (holding `rows`, rows of `units` units of `unit_len` values),
    /// each launch cut as `schedules` says. The halos are there at the start: the first launch
    /// finds every arrival flag full.
    pub fn new<P: RoundPart>(
        parts: &mut [P],
        rows: &[PartRows],
        schedules: Vec<RoundSchedule>,
        units: u32,
        unit_len: usize,
    ) -> Result<Self> {
        if parts.len() != rows.len() {
            return Err(Error::InvalidInput(format!("{} parts with {} rows", parts.len(), rows.len())));
        }
        check(rows, &schedules, units)?;
        let mut flags = Vec::with_capacity(parts.len());
        let mut copied = Vec::with_capacity(parts.len());
        let mut launched = Vec::with_capacity(parts.len());
        let mut ordinals = Vec::with_capacity(parts.len());
        let event =
            |stream: &CudaStream| stream.context().new_event(None).context(|| "creating an event".into());
        for (part, schedule) in parts.iter_mut().zip(&schedules) {
            let gpu = part
                .gpu()
                .cloned()
                .ok_or_else(|| Error::InvalidInput("an exchange by rounds: a part not on a GPU".into()))?;
            ordinals.push(gpu.ordinal());
            let stream = part.written_rows().stream.clone();
            let arrived = round_base(1, units).wrapping_add(units);
            let mut values = vec![0; 2 + schedule.done.len()];
            values[..2].copy_from_slice(&[arrived, arrived]);
            // After the start's uploads on the part's stream (the flags' copy is synchronous).
            stream.synchronize().context(|| "waiting for the part's start".into())?;
            flags.push(Flags::new(&gpu, &values)?);
            copied.push([event(&stream)?, event(&stream)?]);
            launched.push(event(&stream)?);
        }
        let sharing = (0..parts.len())
            .map(|p| (0..parts.len()).filter(|&q| q != p && ordinals[q] == ordinals[p]).collect())
            .collect();
        let row_len = units as usize * unit_len;
        Ok(Self {
            rows: rows.to_vec(),
            schedules,
            units,
            unit_len,
            row_len,
            flags,
            copied,
            launched,
            sharing,
            launches: 0,
            whole: true,
        })
    }

    /// One launch of every part, `launch(p, part, signals)` queueing part `p`'s on its stream,
    /// and its halos sent round by round on `exchange[p]` (a stream of part `p`'s GPU; the
    /// caller joins it before reading the parts' fields).
    pub fn step<P: RoundPart>(
        &mut self,
        parts: &mut [P],
        exchange: &[Arc<CudaStream>],
        mut launch: impl FnMut(usize, &mut P, RoundLaunch) -> Result<()>,
    ) -> Result<()> {
        if parts.len() != self.schedules.len() || exchange.len() != parts.len() {
            return Err(Error::InvalidInput(format!(
                "an exchange by rounds of {} parts given {} parts and {} exchange streams",
                self.schedules.len(),
                parts.len(),
                exchange.len()
            )));
        }
        let k = self.launches.wrapping_add(1);
        let last = parts.len() - 1;
        self.whole = false;
        for (p, part) in parts.iter_mut().enumerate() {
            let stream = part.written_rows().stream.clone();
            // Launch k + 2 writes the field whose edges launch k's copies read.
            if self.launches >= 2 {
                stream
                    .wait(&self.copied[p][(k % 2) as usize])
                    .context(|| "ordering a launch after its copies".into())?;
            }
            for &q in &self.sharing[p] {
                stream.wait(&self.launched[q]).context(|| "ordering parts that share a GPU".into())?;
                // A copy within one GPU may be a kernel: the rows this launch waits for must
                // be there before it holds every SM.
                if self.launches >= 1 {
                    let previous = &self.copied[q][(k.wrapping_sub(1) % 2) as usize];
                    stream.wait(previous).context(|| "ordering parts that share a GPU".into())?;
                }
            }
            let sides = u32::from(p > 0) | u32::from(p < last) << 1;
            launch(
                p,
                part,
                RoundLaunch { flags: self.flags[p].address, base: round_base(k, self.units), sides },
            )?;
            self.launched[p].record(&stream).context(|| "recording a launch".into())?;
        }
        for p in 0..parts.len() {
            let stream = &exchange[p];
            stream.context().bind_to_thread().context(|| "binding the GPU".into())?;
            let schedule = &self.schedules[p];
            let mut before = 0;
            for (round, &done) in schedule.done.iter().enumerate() {
                if done == before {
                    continue;
                }
                let counter = self.flags[p].address + 4 * (2 + round as u64);
                wait_value(stream, counter, schedule.blocks.wrapping_mul(k))?;
                for copy in round_copies(&self.rows, p, before, done, self.unit_len) {
                    let (sender, receiver) = peer::two_parts(parts, p, copy.to)?;
                    let gpu = receiver.gpu().cloned();
                    let src = sender.written_rows().values;
                    let dst = receiver.written_rows().values;
                    // One copy a row: a 2-D copy may be a kernel, which could not start beside a
                    // launch that holds every SM.
                    for r in 0..copy.rows as usize {
                        let at = |row: u32| (row as usize + r) * self.row_len + copy.at;
                        let (from, to) = (at(copy.from_row), at(copy.to_row));
                        peer::copy(PeerCopy::Engine, gpu.as_deref(), stream, src, from, dst, to, copy.count)?;
                    }
                    let flag = self.flags[copy.to].address + 4 * u64::from(copy.flag);
                    write_value(stream, flag, round_base(k.wrapping_add(1), self.units).wrapping_add(done))?;
                }
                before = done;
            }
            self.copied[p][(k % 2) as usize]
                .record(stream)
                .context(|| "recording a launch's copies".into())?;
        }
        self.launches = k;
        self.whole = true;
        Ok(())
    }
}

/// [`stream_flags::wait_at_least`] on one of the flags (this struct's, live until its drop).
fn wait_value(stream: &CudaStream, address: u64, value: u32) -> Result<()> {
    // SAFETY: `address` is one of the flags, which outlive every queued use (`Rounds`' drop).
    unsafe { stream_flags::wait_at_least(stream, address, value) }
        .context(|| "waiting for a round of a launch".into())
}

/// [`stream_flags::write`] to one of the flags (this slab's or a neighbour's).
fn write_value(stream: &CudaStream, address: u64, value: u32) -> Result<()> {
    // SAFETY: as in `wait_value`.
    unsafe { stream_flags::write(stream, address, value) }.context(|| "announcing a round's halo rows".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::split::decomposition::Band;

    /// Three parts of 10, 12 and 9 own rows, halos of 4 at the cuts only.
    fn three() -> Vec<PartRows> {
        let part = |start, len, halo_before, halo_after| PartRows {
            band: Band { start, len },
            halo_before,
            halo_after,
            grid_rows: 31,
        };
        vec![part(0, 10, 0, 4), part(10, 12, 4, 4), part(22, 9, 4, 0)]
    }

    #[test]
    fn a_round_sends_its_units_of_the_edge_rows_into_the_neighbours_halos() {
        let rows = three();
        // Units 2..5 of 7-value units: values 14..35 of each row.
        let middle = round_copies(&rows, 1, 2, 5, 7);
        assert_eq!(
            middle,
            vec![
                // Its first own rows (after its 4 halo rows) into the top halo of part 0,
                // after part 0's 10 own rows; arriving from above.
                RoundCopy { to: 0, rows: 4, from_row: 4, to_row: 10, at: 14, count: 21, flag: 1 },
                // Its last 4 own rows (rows 12..16 of 4 + 12) into the bottom halo of part 2;
                // arriving from below.
                RoundCopy { to: 2, rows: 4, from_row: 12, to_row: 0, at: 14, count: 21, flag: 0 },
            ]
        );
        assert_eq!(
            round_copies(&rows, 0, 0, 3, 5),
            vec![RoundCopy { to: 1, rows: 4, from_row: 6, to_row: 0, at: 0, count: 15, flag: 0 }]
        );
        assert_eq!(
            round_copies(&rows, 2, 1, 2, 5),
            vec![RoundCopy { to: 1, rows: 4, from_row: 4, to_row: 16, at: 5, count: 5, flag: 1 }]
        );
        // Each copy's rows are the sender's own and land in the receiver's halo.
        for p in 0..3 {
            for copy in round_copies(&rows, p, 0, 1, 1) {
                let (from, to) = (rows[p], rows[copy.to]);
                assert!(copy.from_row >= from.halo_before);
                assert!(copy.from_row + copy.rows <= from.halo_before + from.band.len);
                let halo =
                    if copy.to < p { to.halo_before + to.band.len..to.len() } else { 0..to.halo_before };
                assert_eq!(copy.to_row..copy.to_row + copy.rows, halo);
                // The same rows of the grid on both sides.
                let grid = |r: &PartRows, row: u32| r.grid_rows().nth(row as usize).unwrap();
                assert_eq!(grid(&from, copy.from_row), grid(&to, copy.to_row));
            }
        }
        assert!(round_copies(&rows[..1], 0, 0, 1, 1).is_empty(), "one part sends nothing");
    }

    #[test]
    fn rounds_refuse_a_periodic_split_and_schedules_that_do_not_rise_to_the_row() {
        let rows = three();
        let rising = |done: &[u32]| RoundSchedule { blocks: 3, done: done.to_vec() };
        let good = vec![rising(&[2, 2, 5, 9]), rising(&[9]), rising(&[0, 9])];
        assert!(check(&rows, &good, 9).is_ok());
        let refused = |rows: &[PartRows], schedules: &[RoundSchedule]| {
            check(rows, schedules, 9).unwrap_err().to_string()
        };
        assert!(refused(&rows, &good[..2]).contains("3 parts, 2 schedules"));
        let mut periodic = rows.clone();
        periodic[0].halo_before = 4;
        assert!(refused(&periodic, &good).contains("periodic"));
        let mut periodic = rows.clone();
        periodic[2].halo_after = 4;
        assert!(refused(&periodic, &good).contains("periodic"));
        let falling = vec![rising(&[2, 1, 9]), rising(&[9]), rising(&[9])];
        assert!(refused(&rows, &falling).contains("falling"));
        for short in [&[][..], &[2, 8], &[10]] {
            let schedules = vec![rising(&[9]), rising(short), rising(&[9])];
            assert!(refused(&rows, &schedules).contains("of 9 units"), "{short:?}");
        }
    }

    #[test]
    fn each_launch_counts_on_from_where_the_last_one_ended() {
        // Units 0..=ny of launch k sit below those of launch k + 1, wrapping included.
        let ny = 1000;
        for k in [1, 2, 77, u32::MAX / (ny + 1) - 1] {
            assert_eq!(round_base(k, ny).wrapping_add(ny + 1), round_base(k + 1, ny));
            assert!(round_base(k, ny) + ny < round_base(k + 1, ny));
        }
        assert_eq!(round_base(0, ny), 0);
        assert_eq!(round_base(3, 4), 15);
        // A wrapped base still follows from the one before.
        let k = u32::MAX / (ny + 1) + 5;
        assert_eq!(round_base(k + 1, ny), round_base(k, ny).wrapping_add(ny + 1));
    }
}
