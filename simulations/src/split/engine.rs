//! Any 2-D stencil model split into bands of rows (`--split P`, `--gpus N` of a model written
//! outside this crate; `examples/barkley` is the worked example, docs/models.md says how).
//!
//! A model declares what a split needs ([`BandedModel`]): its size, its fields, how many rows
//! next to a cut edge one step spoils (1 for a 5-point stencil), whether its rows are periodic,
//! and how to build one part of it ([`Part`]): the same model over some rows of the whole
//! grid, on a GPU or the CPU, which steps and gives and takes rows of each field. [`Split`]
//! runs `P` such parts in this process, spread over the devices it is given
//! ([`decomposition::placement`]), and assembles the whole fields for every output; or one
//! part per process, the ranks of an NCCL job ([`Split::new_ranked`]), rank 0 gathering the
//! whole fields for every output.
//!
//! Each part holds its band ([`decomposition::bands`]) plus `halo` rows of each neighbour on
//! each side that has one: on a periodic axis the first and last bands are neighbours; on a
//! bounded one the outer edge of the first and last band is the domain's own boundary, which
//! the part treats as the whole model does. Every part is stepped up to
//! [`STEPS_PER_EXCHANGE`] steps at a time, the halo being that many steps' worth of rows, and
//! then every halo is refreshed from the neighbours' bands.
//!
//! **Why the result is bit-identical to one part.** A part computes each of its cells with
//! the model's own per-cell math, on the same inputs the whole grid's cell has, as long as
//! every cell it reads is right. The cells that are not right are those next to a cut edge (a
//! part's edge that is not the domain's boundary, where the part's stencil sees its own edge
//! treatment instead of the neighbour's rows): one step spoils `rows_per_step` rows inward, `k`
//! steps `k · rows_per_step`. The halo is [`STEPS_PER_EXCHANGE`] steps' worth of rows and the
//! halos are refreshed before more steps than that run, so the spoiled rows never reach the
//! band; after the refresh the halo rows equal the neighbours' (exact) band rows again. So
//! every band cell goes through the same operations on the same values, whatever the number of
//! parts, the bands' sizes (uneven where `P` does not divide the rows) or the steps asked for
//! at a time (the split remembers how many steps its halos still cover). A model whose per-cell
//! math depends on the cell's position gets its rows' place in the whole grid ([`PartRows`]).
//!
//! **How the halos travel** ([`Split::halo_travel`] says which way a split's do, and Barkley's
//! run summary prints it): where both parts of a halo keep their fields in GPU memory and
//! offer them ([`Part::device_rows`]), the halo is copied device to device, never through host
//! memory: a copy on the GPU where both parts are on one, a peer copy between GPUs (the copy
//! engines; the split enables peer access between them, and where two GPUs cannot have it
//! the driver stages the copy through the host and [`HaloTravel::GpuToGpuStaged`] says so),
//! ordered with the parts' streams by events ([`super::peer`]), the host only queuing it.
//! Otherwise (a part on the CPU, or a model whose parts do not offer device memory) it goes
//! through the host: read back from the neighbour ([`Part::rows`]) and written into the part
//! ([`Part::set_rows`]), two transfers of `halo × width` cells per field on GPUs. Both ways
//! copy the same rows ([`Halo`], [`halos`]), and so does NCCL between ranks ([`super::ranks`]: grouped
//! send and receive from and into the device memory the parts offer; a model whose parts do
//! not offer it is refused there, NCCL moving device memory only). Parts on different
//! devices step at once (one thread per device); parts sharing a device step in turn.

use std::sync::Arc;

use cudarc::driver::CudaStream;

use super::{
    decomposition::{self, Band},
    nccl::Communicator,
    peer::{DeviceRows, LocalHalos, PeerCopy},
    ranks::{self, RankHalos},
    transport::Transport,
};
use crate::{
    cuda::Gpu,
    error::{Error, Result},
};

/// The steps every part takes between two exchanges of halos: a halo is this many steps'
/// worth of rows ([`BandedModel::rows_per_step`] each).
pub const STEPS_PER_EXCHANGE: u32 = 8;

/// A 2-D stencil model that can be split into bands of rows.
pub trait BandedModel {
    /// Where a part runs: a GPU, or the CPU.
    type Device;
    /// The model over some rows of the grid.
    type Part: Part + Send;
    /// The grid's width (cells in a row) and height (rows).
    fn size(&self) -> (u32, u32);
    /// The names of the fields, in the order [`Part::rows`] and [`Part::set_rows`] number them.
    fn fields(&self) -> &[&str];
    /// How many rows next to a cut edge one step spoils: its stencil's reach across rows (1 for
    /// a 5-point stencil).
    fn rows_per_step(&self) -> u32;
    /// Whether the last row neighbours the first; if not, a part's outer edge at the first or
    /// last row is the domain's boundary.
    fn periodic(&self) -> bool;
    /// One part: the model over `rows` on `device`, starting from `start` (each field's values
    /// on those rows, row by row, `rows.len × width` of them). The part treats its first and
    /// last rows as the whole model treats its edges; the split keeps the wrong values that
    /// makes at a cut edge inside the halo.
    fn part(&self, device: &Self::Device, rows: PartRows, start: Vec<Vec<f32>>) -> Result<Self::Part>;
    /// How halos between GPUs travel where every part names its GPU ([`Part::gpu`]): a kernel
    /// reading peer memory (the default) or the copy engines.
    fn peer_copy(&self) -> PeerCopy {
        PeerCopy::Read
    }
}

/// One part of a [`Split`]: the model over [`PartRows`], its rows numbered from 0.
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
    /// through peer access where the model prefers it ([`BandedModel::peer_copy`]); `None`
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

/// How a split's halos travel between its parts ([`Split::halo_travel`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HaloTravel {
    /// One part: no halos.
    None,
    /// Every halo device to device (both parts of each offer [`Part::device_rows`]).
    GpuToGpu,
    /// Every halo device to device, but some between GPUs that cannot reach each other (no
    /// peer access): the driver stages those copies through host memory.
    GpuToGpuStaged,
    /// Every halo through the host ([`Part::rows`], [`Part::set_rows`]).
    ThroughHost,
    /// Device to device between parts that offer device memory, through the host to or from
    /// the others.
    Both,
    /// As [`HaloTravel::Both`], some of the device copies between GPUs without peer access
    /// (staged through host memory by the driver).
    BothStaged,
    /// Every halo between processes, one part each, through NCCL ([`Split::new_ranked`]).
    Nccl,
}

impl HaloTravel {
    /// For run summaries: `halos GPU to GPU`, `halos through the host`, ...
    pub fn describe(self) -> &'static str {
        match self {
            HaloTravel::None => "no halos",
            HaloTravel::GpuToGpu => "halos GPU to GPU",
            HaloTravel::GpuToGpuStaged => {
                "halos GPU to GPU, staged through the host by the driver between GPUs without peer access"
            }
            HaloTravel::ThroughHost => "halos through the host",
            HaloTravel::Both => "halos GPU to GPU between GPU parts, through the host to and from the others",
            HaloTravel::BothStaged => {
                "halos GPU to GPU between GPU parts (staged through the host by the driver between GPUs \
                 without peer access), through the host to and from the others"
            }
            HaloTravel::Nccl => "halos over NCCL",
        }
    }
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

/// A model split into bands of rows, run as parts in this process, or one part per process
/// over NCCL ([`Split::new_ranked`]) (see the module's doc).
pub struct Split<M: BandedModel> {
    model: M,
    /// This process's parts, in order, the rows each holds and the device each runs on (which
    /// of the split's devices).
    parts: Vec<M::Part>,
    rows: Vec<PartRows>,
    device_of: Vec<usize>,
    /// Rows of each halo at a cut edge.
    halo: u32,
    /// Steps the halos still cover before the next exchange.
    covered: u32,
    /// How many devices the parts run on (the first of those given).
    devices: usize,
    /// How the halos travel: device to device in this process (where both parts of a halo
    /// offer [`Part::device_rows`]), or this rank's side of NCCL ranks (`parts` holds its part
    /// alone); `stream`: the one a rank's halos travel on.
    transport: Box<Transport>,
    stream: Option<Arc<CudaStream>>,
    /// The halos that go through the host, in this process.
    host_halos: Vec<Halo>,
}

impl<M: BandedModel> Split<M> {
    /// `model` in `parts` bands of rows from `start` (each field's values on the whole grid),
    /// spread over `devices` in order (consecutive parts share a device where there are more
    /// parts than devices). Refuses zero parts, more parts than rows, a band thinner than its
    /// halo, no device, a start of the wrong number or size of fields, and a part that offers
    /// some of its fields in device memory but not all, or on several streams.
    pub fn new(model: M, parts: u32, devices: &[M::Device], start: Vec<Vec<f32>>) -> Result<Self> {
        let width = model.size().0;
        check_fields(&model, &start)?;
        if devices.is_empty() {
            return Err(Error::InvalidInput("a split needs at least one device to run its parts on".into()));
        }
        let (halo, all_rows) = plan(&model, parts)?;
        let placement = decomposition::placement(all_rows.len(), devices.len());
        let periodic = model.periodic();
        let mut parts = Vec::with_capacity(all_rows.len());
        for (rows, &device) in all_rows.iter().zip(&placement) {
            let values = start.iter().map(|field| cut(field, width, rows)).collect();
            parts.push(model.part(&devices[device], *rows, values)?);
        }
        let devices = placement.iter().max().map_or(1, |&d| d + 1);
        let fields = model.fields().len();
        let streams = parts
            .iter_mut()
            .enumerate()
            .map(|(p, part)| device_stream(part, p, fields))
            .collect::<Result<Vec<_>>>()?;
        let readers = parts.iter().zip(&streams).all(|(part, s)| s.is_none() || part.gpu().is_some());
        let (device_halos, host_halos): (Vec<Halo>, Vec<Halo>) = halos(&all_rows, periodic)
            .into_iter()
            .partition(|h| streams[h.to].is_some() && streams[h.from].is_some());
        let device = LocalHalos::new(streams, device_halos, model.peer_copy(), readers)?;
        Ok(Self {
            model,
            parts,
            rows: all_rows,
            device_of: placement,
            halo,
            covered: STEPS_PER_EXCHANGE,
            devices,
            transport: Box::new(Transport::Peer(device)),
            stream: None,
            host_halos,
        })
    }

    /// `model` in one band of rows per rank of `comm`'s job, this process holding its rank's
    /// alone, on `device` (the communicator's GPU), from `start` (each field's values on the
    /// whole grid, alike on every rank): the bands, halos and steps between exchanges of
    /// [`Split::new`] with as many parts, so the same bits. The halos travel through NCCL
    /// from and into the part's device memory; rank 0 gathers the whole fields
    /// ([`Split::field`]). One rank alone is one part: no halos. Refuses what [`Split::new`]
    /// does, and a part that does not offer its fields in device memory on the
    /// communicator's GPU ([`Part::device_rows`]).
    pub fn new_ranked(
        model: M,
        comm: Communicator,
        device: &M::Device,
        start: Vec<Vec<f32>>,
    ) -> Result<Self> {
        let width = model.size().0;
        check_fields(&model, &start)?;
        // Every rank finds the same grid too thin or too short: said once, by rank 0.
        let (halo, all_rows) = plan(&model, comm.size() as u32)
            .map_err(|e| Error::SameOnEveryRank(format!("{} processes, one part each: {e}", comm.size())))?;
        let rank = comm.rank();
        let rows = all_rows[rank];
        let values = start.iter().map(|field| cut(field, width, &rows)).collect();
        let mut part = model.part(device, rows, values)?;
        let stream = ranks::nccl_stream(&mut part, rank, model.fields().len(), comm.gpu().ordinal())?;
        let periodic = model.periodic();
        Ok(Self {
            model,
            parts: vec![part],
            rows: vec![rows],
            device_of: vec![0],
            halo,
            covered: STEPS_PER_EXCHANGE,
            devices: 1,
            transport: Box::new(Transport::Ranks {
                ranks: Box::new(RankHalos::new(comm, all_rows, None, periodic)),
                pieces: None,
            }),
            stream: Some(stream),
            host_halos: Vec::new(),
        })
    }

    /// How the halos travel between the parts: device to device where both parts of a halo
    /// offer their fields in GPU memory ([`Part::device_rows`]), else through the host.
    pub fn halo_travel(&self) -> HaloTravel {
        let device = match &*self.transport {
            Transport::Ranks { .. } => {
                return if self.parts() > 1 { HaloTravel::Nccl } else { HaloTravel::None };
            }
            Transport::Peer(device) => device,
        };
        match (device.halos().is_empty(), self.host_halos.is_empty()) {
            (true, true) => HaloTravel::None,
            (false, host) => {
                let staged = !device.staged().is_empty();
                match (host, staged) {
                    (true, false) => HaloTravel::GpuToGpu,
                    (true, true) => HaloTravel::GpuToGpuStaged,
                    (false, false) => HaloTravel::Both,
                    (false, true) => HaloTravel::BothStaged,
                }
            }
            (true, false) => HaloTravel::ThroughHost,
        }
    }

    /// The model.
    pub fn model(&self) -> &M {
        &self.model
    }

    /// The number of parts (of the whole job, where the parts are NCCL ranks).
    pub fn parts(&self) -> usize {
        match &*self.transport {
            Transport::Ranks { ranks, .. } => ranks.rows().len(),
            Transport::Peer(_) => self.parts.len(),
        }
    }

    /// The number of devices this process's parts run on.
    pub fn devices(&self) -> usize {
        self.devices
    }

    /// The rows of each part's halo at a cut edge (0 with one part).
    pub fn halo(&self) -> u32 {
        if self.parts() > 1 { self.halo } else { 0 }
    }

    /// The rows each part holds, in order (every rank's, where the parts are NCCL ranks).
    pub fn part_rows(&self) -> Vec<PartRows> {
        match &*self.transport {
            Transport::Ranks { ranks, .. } => ranks.rows().to_vec(),
            Transport::Peer(_) => self.rows.clone(),
        }
    }

    /// This rank's communicator, where the parts are NCCL ranks.
    pub fn communicator(&self) -> Option<&Communicator> {
        self.transport.comm()
    }

    /// Whether this process writes the outputs: rank 0 where the parts are NCCL ranks (the
    /// others get no fields from [`Split::field`]), else always.
    pub fn is_root(&self) -> bool {
        self.transport.is_root()
    }

    /// Runs `steps` steps: every part as many at a time as its halos still cover, the halos
    /// refreshed in between.
    pub fn step(&mut self, steps: u32) -> Result<()> {
        if self.parts() == 1 {
            return self.parts[0].step(steps);
        }
        // A rank that stopped stalls the exchanges, and with them these steps once the launch
        // queue is full: watched, the clock restarted after each exchange queued.
        let watch = self.transport.watch("the halo exchange");
        let mut left = steps;
        while left > 0 {
            if self.covered == 0 {
                self.exchange()?;
                self.covered = STEPS_PER_EXCHANGE;
                if let Some(watch) = &watch {
                    watch.progress();
                }
            }
            let now = left.min(self.covered);
            self.step_parts(now)?;
            self.covered -= now;
            left -= now;
        }
        Ok(())
    }

    /// Steps every part `steps` steps: the parts of each device in turn, the devices at once.
    fn step_parts(&mut self, steps: u32) -> Result<()> {
        if self.devices == 1 {
            return self.parts.iter_mut().try_for_each(|part| part.step(steps));
        }
        let mut by_device: Vec<Vec<&mut M::Part>> = (0..self.devices).map(|_| Vec::new()).collect();
        for (part, &device) in self.parts.iter_mut().zip(&self.device_of) {
            by_device[device].push(part);
        }
        std::thread::scope(|scope| {
            let threads: Vec<_> = by_device
                .into_iter()
                .map(|parts| scope.spawn(move || parts.into_iter().try_for_each(|part| part.step(steps))))
                .collect();
            threads.into_iter().try_for_each(|t| t.join().expect("a part's steps panicked"))
        })
    }

    /// Refreshes every halo from the neighbours' bands: device to device, then through the
    /// host (the two write different halo rows and only read band rows).
    fn exchange(&mut self) -> Result<()> {
        let (width, fields) = (self.model.size().0, self.model.fields().len());
        self.transport.exchange(&mut self.parts, self.stream.as_ref(), fields, width)?;
        // Read every host halo first (band rows only), then write them (halo rows only).
        let mut writes = Vec::new();
        for halo in &self.host_halos {
            for field in 0..fields {
                let values = self.parts[halo.from].rows(field, halo.from_row, halo.rows)?;
                writes.push((halo.to, field, halo.to_row, values));
            }
        }
        for (p, field, first, values) in writes {
            self.parts[p].set_rows(field, first, &values)?;
        }
        Ok(())
    }

    /// Field `field` of the whole grid, row by row, from every part's band. Where the parts
    /// are NCCL ranks every rank must call it (the bands are gathered to rank 0): rank 0
    /// gets the whole field, the others nothing (an empty field).
    pub fn field(&mut self, field: usize) -> Result<Vec<f32>> {
        let width = self.model.size().0;
        let mut whole =
            self.transport.gather(&mut self.parts, &self.rows, self.stream.as_ref(), &[field], width)?;
        Ok(whole.pop().expect("one field"))
    }

    /// Every field of the whole grid, in the model's order (as [`Split::field`] gives them).
    pub fn fields(&mut self) -> Result<Vec<Vec<f32>>> {
        (0..self.model.fields().len()).map(|f| self.field(f)).collect()
    }

    /// Continues from `fields` (each field's values on the whole grid, as a checkpoint of a
    /// run in any number of parts holds them): every part's rows, halos included. Where the
    /// parts are NCCL ranks every rank passes the whole fields and takes its part's rows.
    pub fn restore(&mut self, fields: &[Vec<f32>]) -> Result<()> {
        check_fields(&self.model, fields)?;
        let width = self.model.size().0;
        for (part, rows) in self.parts.iter_mut().zip(&self.rows) {
            for (f, values) in fields.iter().enumerate() {
                part.set_rows(f, 0, &cut(values, width, rows))?;
            }
        }
        self.covered = STEPS_PER_EXCHANGE;
        Ok(())
    }
}

/// The halo of a split of `model` into `parts` bands, and every part's rows, in order: each
/// part's band with a halo on each side that has a neighbour (none with one part). Refuses
/// zero parts, more parts than rows and a band thinner than its halo.
fn plan<M: BandedModel>(model: &M, parts: u32) -> Result<(u32, Vec<PartRows>)> {
    let height = model.size().1;
    let bands = decomposition::bands(height, parts)?;
    let halo = model.rows_per_step() * STEPS_PER_EXCHANGE;
    decomposition::check_halo(&bands, halo, "rows")?;
    let count = bands.len();
    let rows = (bands.into_iter().enumerate())
        .map(|(p, band)| {
            let (before, after) = decomposition::neighbours(p, count, model.periodic());
            let halo_on = |neighbour: Option<usize>| if count > 1 && neighbour.is_some() { halo } else { 0 };
            PartRows { band, halo_before: halo_on(before), halo_after: halo_on(after), grid_rows: height }
        })
        .collect();
    Ok((halo, rows))
}

/// The stream of part `p`'s fields in device memory ([`Part::device_rows`]), or `None` where it
/// offers none; refuses a part that offers some fields but not all, or on several streams.
pub(super) fn device_stream<P: Part>(
    part: &mut P,
    p: usize,
    fields: usize,
) -> Result<Option<Arc<CudaStream>>> {
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

/// Refuses fields of another number or size than the model's.
fn check_fields<M: BandedModel>(model: &M, fields: &[Vec<f32>]) -> Result<()> {
    let (width, height) = model.size();
    let names = model.fields();
    let cells = width as usize * height as usize;
    if fields.len() != names.len() {
        return Err(Error::InvalidInput(format!(
            "the model has {} fields ({}), but {} were given",
            names.len(),
            names.join(", "),
            fields.len()
        )));
    }
    match names.iter().zip(fields).find(|(_, f)| f.len() != cells) {
        Some((name, f)) => Err(Error::InvalidInput(format!(
            "field {name:?} has {} values; a {width}x{height} grid has {cells}",
            f.len()
        ))),
        None => Ok(()),
    }
}

/// The values of `field` (a whole grid of rows of `width`) on the rows of a part.
fn cut(field: &[f32], width: u32, rows: &PartRows) -> Vec<f32> {
    let width = width as usize;
    rows.grid_rows().flat_map(|r| &field[r as usize * width..(r as usize + 1) * width]).copied().collect()
}

#[cfg(test)]
mod tests {
    use cudarc::driver::CudaSlice;

    use super::*;
    use crate::split::decomposition::Side;

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

    /// A 5-point diffusion of one field, with a second field that follows the first (so a
    /// split must carry every field): no-flux edges (a neighbour beyond an edge reads as the
    /// cell itself) or periodic rows. Each part is this same model over its rows.
    #[derive(Clone)]
    struct Diffusion {
        width: u32,
        height: u32,
        periodic: bool,
    }

    struct DiffusionPart {
        width: u32,
        height: u32,
        periodic: bool,
        fields: [Vec<f32>; 2],
    }

    /// Which device a part was built for, to check the placement.
    type DeviceId = usize;

    impl BandedModel for Diffusion {
        type Device = DeviceId;
        type Part = DiffusionPart;

        fn size(&self) -> (u32, u32) {
            (self.width, self.height)
        }

        fn fields(&self) -> &[&str] {
            &["u", "v"]
        }

        fn rows_per_step(&self) -> u32 {
            1
        }

        fn periodic(&self) -> bool {
            self.periodic
        }

        fn part(&self, _device: &DeviceId, rows: PartRows, start: Vec<Vec<f32>>) -> Result<DiffusionPart> {
            let [u, v]: [Vec<f32>; 2] = start.try_into().expect("two fields");
            Ok(DiffusionPart {
                width: self.width,
                height: rows.len(),
                periodic: self.periodic,
                fields: [u, v],
            })
        }
    }

    impl Part for DiffusionPart {
        fn step(&mut self, steps: u32) -> Result<()> {
            let (w, h) = (self.width as usize, self.height as usize);
            for _ in 0..steps {
                let [u, v] = &self.fields;
                let (mut u_next, mut v_next) = (u.clone(), v.clone());
                for y in 0..h {
                    let (up, down) = match self.periodic {
                        true => ((y + h - 1) % h, (y + 1) % h),
                        false => (y.saturating_sub(1), (y + 1).min(h - 1)),
                    };
                    for x in 0..w {
                        let (left, right) = (x.saturating_sub(1), (x + 1).min(w - 1));
                        let at = |x: usize, y: usize| u[y * w + x];
                        let laplacian =
                            (at(left, y) + at(right, y)) + (at(x, up) + at(x, down)) - 4.0 * at(x, y);
                        u_next[y * w + x] = at(x, y) + 0.2 * laplacian;
                        v_next[y * w + x] = 0.9 * v[y * w + x] + 0.1 * at(x, y) * at(x, y);
                    }
                }
                self.fields = [u_next, v_next];
            }
            Ok(())
        }

        fn rows(&mut self, field: usize, first: u32, count: u32) -> Result<Vec<f32>> {
            let w = self.width as usize;
            Ok(self.fields[field][first as usize * w..(first + count) as usize * w].to_vec())
        }

        fn set_rows(&mut self, field: usize, first: u32, values: &[f32]) -> Result<()> {
            let at = first as usize * self.width as usize;
            self.fields[field][at..at + values.len()].copy_from_slice(values);
            Ok(())
        }
    }

    /// A start with detail at every scale, and a spike at each edge row (so wrong halos show).
    fn start(width: u32, height: u32) -> Vec<Vec<f32>> {
        let mut state = 0x2545_f491_u32;
        let mut noise = move || {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            (state >> 8) as f32 / (1 << 24) as f32
        };
        let mut u: Vec<f32> = (0..width * height).map(|_| noise()).collect();
        for x in 0..width as usize {
            u[x] += 5.0;
            u[(height as usize - 1) * width as usize + x] -= 3.0;
        }
        let v = (0..width * height).map(|_| noise()).collect();
        vec![u, v]
    }

    fn bits(fields: &[Vec<f32>]) -> Vec<Vec<u32>> {
        fields.iter().map(|f| f.iter().map(|x| x.to_bits()).collect()).collect()
    }

    /// Runs the steps of `schedule` (calls of `step`) in `parts` parts over `devices` devices.
    fn run(model: &Diffusion, parts: u32, devices: usize, schedule: &[u32]) -> Vec<Vec<u32>> {
        let devices: Vec<DeviceId> = (0..devices).collect();
        let mut split = Split::new(model.clone(), parts, &devices, start(model.width, model.height)).unwrap();
        for &steps in schedule {
            split.step(steps).unwrap();
        }
        bits(&split.fields().unwrap())
    }

    #[test]
    fn any_number_of_parts_gives_the_bits_of_one() {
        // 43 rows: uneven bands for 2, 3 and 5 parts (22+21, 15+14+14, 9+9+9+8+8).
        for periodic in [false, true] {
            let model = Diffusion { width: 13, height: 43, periodic };
            // Step counts that are and are not multiples of the halo's 8 steps, in one call
            // and in calls that end between exchanges.
            let schedules: [&[u32]; 5] = [&[1], &[8], &[13], &[16, 8], &[3, 7, 1, 12, 5]];
            for schedule in schedules {
                let whole = run(&model, 1, 1, schedule);
                for parts in [2, 3, 5] {
                    for devices in [1, 2] {
                        assert!(
                            run(&model, parts, devices, schedule) == whole,
                            "periodic {periodic}, {parts} parts on {devices} devices, steps {schedule:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn the_steps_change_the_field_and_a_wrong_halo_would_show() {
        // The check above would pass for a split that never exchanged if nothing crossed a
        // cut: here a part without its halos refreshed differs from the whole.
        let model = Diffusion { width: 7, height: 32, periodic: false };
        let whole = run(&model, 1, 1, &[24]);
        assert_ne!(whole, bits(&start(7, 32)));
        let mut split = Split::new(model.clone(), 2, &[0], start(7, 32)).unwrap();
        split.step_parts(24).unwrap(); // no exchange between
        assert_ne!(bits(&split.fields().unwrap()), whole);
    }

    #[test]
    fn parts_hold_their_band_and_the_halos_of_their_neighbours() {
        let model = Diffusion { width: 4, height: 30, periodic: false };
        let split = Split::new(model, 3, &[0, 1], start(4, 30)).unwrap();
        assert_eq!(split.halo(), 8);
        assert_eq!(split.devices(), 2);
        let rows = split.part_rows();
        assert_eq!(
            (rows[0].halo_before, rows[0].band, rows[0].halo_after),
            (0, Band { start: 0, len: 10 }, 8)
        );
        assert_eq!((rows[1].halo_before, rows[1].halo_after), (8, 8));
        assert_eq!((rows[2].halo_before, rows[2].halo_after), (8, 0));
        assert_eq!(rows[1].grid_rows().collect::<Vec<_>>(), (2..28).collect::<Vec<_>>());
        let periodic = Diffusion { width: 4, height: 30, periodic: true };
        let rows = Split::new(periodic, 3, &[0], start(4, 30)).unwrap().part_rows();
        assert_eq!(rows[0].grid_rows().take(9).collect::<Vec<_>>(), [22, 23, 24, 25, 26, 27, 28, 29, 0]);
        assert_eq!(rows[2].grid_rows().last(), Some(7));
    }

    #[test]
    fn each_halo_takes_the_rows_next_to_the_cut_from_the_neighbours_band() {
        // 30 rows in 3 bands of 10 (halos of 8): part 0 holds rows 0..18, part 1 rows 2..28,
        // part 2 rows 12..30.
        let model = Diffusion { width: 4, height: 30, periodic: false };
        let split = Split::new(model, 3, &[0], start(4, 30)).unwrap();
        let halo = |to, to_row, from, from_row| Halo { to, to_row, from, from_row, rows: 8 };
        let expected = [
            halo(0, 10, 1, 8), // grid rows 10..18: the start of part 1's band
            halo(1, 0, 0, 2),  // grid rows 2..10: the end of part 0's band
            halo(1, 18, 2, 8), // grid rows 20..28
            halo(2, 0, 1, 10), // grid rows 12..20
        ];
        assert_eq!(halos(&split.part_rows(), false), expected);
        // Every halo row is the same grid row in both parts, and a band row of the sender.
        for periodic in [false, true] {
            for parts in [2, 3, 5] {
                let model = Diffusion { width: 4, height: 43, periodic };
                let rows = Split::new(model, parts, &[0], start(4, 43)).unwrap().part_rows();
                let found = halos(&rows, periodic);
                let cuts = if periodic { parts } else { parts - 1 };
                assert_eq!(found.len(), 2 * cuts as usize, "{parts} parts, periodic {periodic}");
                for h in found {
                    let grid =
                        |p: usize, first: u32| rows[p].grid_rows().skip(first as usize).take(h.rows as usize);
                    assert!(grid(h.to, h.to_row).eq(grid(h.from, h.from_row)), "{h:?}");
                    let band = rows[h.from].halo_before..rows[h.from].halo_before + rows[h.from].band.len;
                    assert!(band.contains(&h.from_row) && band.contains(&(h.from_row + h.rows - 1)), "{h:?}");
                    let to = rows[h.to];
                    assert!(h.to_row + h.rows <= to.halo_before || h.to_row >= to.halo_before + to.band.len);
                }
            }
        }
    }

    #[test]
    fn parts_without_device_memory_exchange_through_the_host_and_say_so() {
        let model = Diffusion { width: 4, height: 30, periodic: true };
        let split = Split::new(model.clone(), 3, &[0, 1], start(4, 30)).unwrap();
        assert_eq!(split.halo_travel(), HaloTravel::ThroughHost);
        assert_eq!(split.halo_travel().describe(), "halos through the host");
        assert_eq!(Split::new(model.clone(), 1, &[0], start(4, 30)).unwrap().halo_travel(), HaloTravel::None);
        // In one process every split writes its outputs and has no communicator; one part has
        // no halo to speak of.
        assert!(split.is_root() && split.communicator().is_none());
        assert_eq!(split.halo(), 8);
        assert_eq!(Split::new(model, 1, &[0], start(4, 30)).unwrap().halo(), 0);
    }

    #[test]
    fn a_checkpoint_of_any_split_resumes_in_any_other() {
        let model = Diffusion { width: 9, height: 40, periodic: true };
        let whole = run(&model, 1, 1, &[21]);
        // 11 steps in 3 parts (mid-exchange), restored into 2 parts and 1 for the other 10.
        let mut three = Split::new(model.clone(), 3, &[0], start(9, 40)).unwrap();
        three.step(11).unwrap();
        let saved = three.fields().unwrap();
        for parts in [1, 2, 5] {
            let mut other = Split::new(model.clone(), parts, &[0], start(9, 40)).unwrap();
            other.step(3).unwrap(); // state to be replaced, halos half used
            other.restore(&saved).unwrap();
            other.step(10).unwrap();
            assert!(bits(&other.fields().unwrap()) == whole, "resumed in {parts} parts");
        }
    }

    /// [`Diffusion`] with its parts' fields in GPU memory, offered for device-to-device halos:
    /// a part steps on the CPU (downloading and uploading its fields), so the results are the
    /// CPU's bits and only the halos' way differs.
    struct OnGpu(Diffusion);

    struct OnGpuPart {
        cpu: DiffusionPart,
        fields: [CudaSlice<f32>; 2],
        stream: Arc<CudaStream>,
    }

    impl BandedModel for OnGpu {
        type Device = Arc<CudaStream>;
        type Part = OnGpuPart;

        fn size(&self) -> (u32, u32) {
            self.0.size()
        }

        fn fields(&self) -> &[&str] {
            self.0.fields()
        }

        fn rows_per_step(&self) -> u32 {
            1
        }

        fn periodic(&self) -> bool {
            self.0.periodic
        }

        fn part(&self, stream: &Arc<CudaStream>, rows: PartRows, start: Vec<Vec<f32>>) -> Result<OnGpuPart> {
            let upload = |values: &Vec<f32>| stream.clone_htod(values).map_err(ptxkit_host::Error::from);
            let fields = [upload(&start[0])?, upload(&start[1])?];
            Ok(OnGpuPart { cpu: self.0.part(&0, rows, start)?, fields, stream: stream.clone() })
        }
    }

    impl OnGpuPart {
        fn download(&mut self) -> Result<()> {
            for (cpu, gpu) in self.cpu.fields.iter_mut().zip(&self.fields) {
                *cpu = self.stream.clone_dtoh(gpu).map_err(ptxkit_host::Error::from)?;
            }
            Ok(())
        }

        fn upload(&mut self) -> Result<()> {
            for (cpu, gpu) in self.cpu.fields.iter().zip(&mut self.fields) {
                self.stream.memcpy_htod(cpu, gpu).map_err(ptxkit_host::Error::from)?;
            }
            Ok(())
        }
    }

    impl Part for OnGpuPart {
        fn step(&mut self, steps: u32) -> Result<()> {
            self.download()?;
            self.cpu.step(steps)?;
            self.upload()
        }

        fn rows(&mut self, field: usize, first: u32, count: u32) -> Result<Vec<f32>> {
            self.download()?;
            self.cpu.rows(field, first, count)
        }

        fn set_rows(&mut self, field: usize, first: u32, values: &[f32]) -> Result<()> {
            self.download()?;
            self.cpu.set_rows(field, first, values)?;
            self.upload()
        }

        fn device_rows(&mut self, field: usize) -> Option<DeviceRows<'_>> {
            Some(DeviceRows { values: &mut self.fields[field], stream: &self.stream })
        }
    }

    /// Two streams of GPU 0 (halos copied on one GPU, between streams ordered by events), then
    /// the stream of each GPU where there are several (peer copies, peer access enabled by the
    /// split).
    #[test]
    #[ignore = "needs a CUDA GPU"]
    fn halos_copied_between_gpu_parts_give_the_bits_of_one_part() {
        let count = crate::cuda::device_count().unwrap();
        // No peer access enabled here: the split enables it between the GPUs it copies between.
        let gpus: Vec<_> = (0..count).map(|g| crate::cuda::open_device(g).unwrap()).collect();
        let stream_of_gpu_0 = || gpus[0].context().new_stream().unwrap();
        let mut placements = vec![vec![stream_of_gpu_0(), stream_of_gpu_0()]];
        if count > 1 {
            placements.push(gpus.iter().map(|gpu| gpu.stream().clone()).collect());
        }
        for streams in &placements {
            for periodic in [false, true] {
                let model = Diffusion { width: 13, height: 43, periodic };
                for schedule in [&[13][..], &[3, 7, 1, 12, 5]] {
                    let whole = run(&model, 1, 1, schedule);
                    for parts in [2, 3, 5] {
                        let mut split =
                            Split::new(OnGpu(model.clone()), parts, streams, start(13, 43)).unwrap();
                        assert_eq!(split.halo_travel(), HaloTravel::GpuToGpu);
                        for &steps in schedule {
                            split.step(steps).unwrap();
                        }
                        let what = format!(
                            "{} streams, periodic {periodic}, {parts} parts, {schedule:?}",
                            streams.len()
                        );
                        assert!(bits(&split.fields().unwrap()) == whole, "{what}");
                    }
                }
            }
        }
    }

    /// One NCCL rank alone is one part: no halos, this process writes the outputs and keeps
    /// its communicator, and the field steps as one part's.
    #[test]
    #[ignore = "needs a CUDA GPU"]
    fn one_nccl_rank_is_one_part_with_its_communicator() {
        let gpu = crate::cuda::open_device(0).unwrap();
        let bootstrap = crate::split::nccl::Bootstrap {
            id_file: None,
            timeout: std::time::Duration::from_secs(60),
            max_ctas: None,
        };
        let comm = Communicator::connect(gpu.clone(), 0, 1, &bootstrap).unwrap();
        let model = Diffusion { width: 13, height: 43, periodic: true };
        let stream = gpu.stream().clone();
        let mut split = Split::new_ranked(OnGpu(model.clone()), comm, &stream, start(13, 43)).unwrap();
        assert_eq!(split.halo_travel(), HaloTravel::None);
        assert!(split.is_root() && split.communicator().is_some());
        assert_eq!((split.parts(), split.halo()), (1, 0));
        split.step(7).unwrap();
        assert!(bits(&split.fields().unwrap()) == run(&model, 1, 1, &[7]));
    }

    /// Two NCCL ranks, threads of this process with a GPU each: the rows split in two with
    /// halos over NCCL, rank 0 alone writes the outputs and gets the whole field, which has
    /// one part's bits; rank 1 gets no field.
    #[test]
    #[ignore = "needs two CUDA GPUs"]
    fn two_nccl_ranks_halve_the_rows_and_rank_0_alone_gets_the_field() {
        let count = crate::cuda::device_count().unwrap();
        assert!(count >= 2, "two GPUs needed, {count} found");
        // A name of this run alone: a file left by another (no launcher, so no job key in it)
        // would be taken for rank 0's.
        let nonce = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
        let id_file = std::env::temp_dir().join(format!("split-two-ranks-{}-{nonce}.id", std::process::id()));
        let _ = std::fs::remove_file(&id_file);
        let model = Diffusion { width: 13, height: 43, periodic: true };
        let schedule = [3, 7, 1, 12];
        // Neither rank gives up its communicator while the other may still be in a transfer.
        let done = Arc::new(std::sync::Barrier::new(2));
        let ranks: Vec<_> = (0..2)
            .map(|rank| {
                let (model, id_file, done) = (model.clone(), id_file.clone(), done.clone());
                std::thread::spawn(move || {
                    let gpu = crate::cuda::open_device(rank).unwrap();
                    let bootstrap = crate::split::nccl::Bootstrap {
                        id_file: Some(id_file),
                        timeout: std::time::Duration::from_secs(60),
                        max_ctas: None,
                    };
                    let comm = Communicator::connect(gpu.clone(), rank, 2, &bootstrap).unwrap();
                    let stream = gpu.stream().clone();
                    let mut split = Split::new_ranked(OnGpu(model), comm, &stream, start(13, 43)).unwrap();
                    let seen = (
                        split.halo_travel(),
                        split.is_root(),
                        split.communicator().map(Communicator::rank),
                        split.parts(),
                        split.halo(),
                    );
                    for steps in schedule {
                        split.step(steps).unwrap();
                    }
                    let fields = bits(&split.fields().unwrap());
                    done.wait();
                    (seen, fields)
                })
            })
            .collect();
        let results: Vec<_> = ranks.into_iter().map(|rank| rank.join().unwrap()).collect();
        let _ = std::fs::remove_file(&id_file);
        let halo = plan(&model, 2).unwrap().0;
        assert!(halo > 0);
        assert_eq!(results[0].0, (HaloTravel::Nccl, true, Some(0), 2, halo));
        assert_eq!(results[1].0, (HaloTravel::Nccl, false, Some(1), 2, halo));
        assert!(results[0].1 == run(&model, 1, 1, &schedule), "rank 0's field");
        assert!(results[1].1.iter().all(Vec::is_empty), "rank 1 gets no field");
    }

    #[test]
    fn every_send_between_two_ranks_meets_its_receive_on_the_same_grid_rows() {
        // NCCL pairs the n-th send from one rank to another with the n-th receive there.
        for periodic in [false, true] {
            for parts in [2, 3, 5] {
                let model = Diffusion { width: 4, height: 43, periodic };
                let (halo, rows) = plan(&model, parts).unwrap();
                assert_eq!(rows, Split::new(model.clone(), parts, &[0], start(4, 43)).unwrap().part_rows());
                let all = halos(&rows, periodic);
                let of_rank: Vec<_> =
                    (0..parts as usize).map(|r| rank_transfers(&rows, r, periodic)).collect();
                let count: usize = of_rank.iter().map(Vec::len).sum();
                assert_eq!(count, 2 * all.len(), "each halo is one send and one receive");
                let grid = |rank: usize, row: u32, n: u32| -> Vec<u32> {
                    rows[rank].grid_rows().skip(row as usize).take(n as usize).collect()
                };
                for a in 0..parts as usize {
                    for b in (0..parts as usize).filter(|&b| b != a) {
                        let sends: Vec<_> = of_rank[a].iter().filter(|t| t.send && t.peer == b).collect();
                        let receives: Vec<_> = of_rank[b].iter().filter(|t| !t.send && t.peer == a).collect();
                        assert_eq!(
                            sends.len(),
                            receives.len(),
                            "{a} to {b}, {parts} parts, periodic {periodic}"
                        );
                        for (send, receive) in sends.iter().zip(&receives) {
                            assert_eq!((send.rows, receive.rows), (halo, halo));
                            assert_eq!(grid(a, send.row, send.rows), grid(b, receive.row, receive.rows));
                        }
                    }
                }
            }
        }
        assert_eq!(HaloTravel::Nccl.describe(), "halos over NCCL");
    }

    /// What `rank` sends and receives at an exchange, both sides in order (one field's).
    fn rank_transfers(rows: &[PartRows], rank: usize, periodic: bool) -> Vec<ranks::RankTransfer> {
        let mine = rows[rank];
        [Side::Below, Side::Above]
            .into_iter()
            .flat_map(|side| ranks::side_transfers(rows, rank, periodic, side, mine, mine))
            .collect()
    }

    /// `model` stepped `steps` times as `parts` NCCL ranks would step it, each rank's part
    /// alone with what it sends and receives at an exchange ([`ranks::rank_transfers`]), the
    /// n-th send from one rank to another delivered to the n-th receive there (NCCL's pairing);
    /// the whole fields from every rank's band.
    fn run_as_ranks(model: &Diffusion, parts: u32, steps: u32) -> Vec<Vec<u32>> {
        use std::collections::{HashMap, VecDeque};
        let (width, w) = (model.width, model.width as usize);
        let (_, rows) = plan(model, parts).unwrap();
        let all = halos(&rows, model.periodic);
        let whole = start(model.width, model.height);
        let mut ranks: Vec<DiffusionPart> = (rows.iter())
            .map(|r| model.part(&0, *r, whole.iter().map(|f| cut(f, width, r)).collect()).unwrap())
            .collect();
        let sides = |r: usize| {
            let mine = rows[r];
            [Side::Below, Side::Above]
                .map(|side| ranks::side_transfers(&rows, r, model.periodic, side, mine, mine))
        };
        let transfers: Vec<_> = (0..ranks.len()).map(sides).collect();
        assert_eq!(transfers.iter().flatten().map(Vec::len).sum::<usize>(), 2 * all.len());
        let mut left = steps;
        loop {
            let now = left.min(STEPS_PER_EXCHANGE);
            ranks.iter_mut().for_each(|part| part.step(now).unwrap());
            left -= now;
            if left == 0 {
                break;
            }
            let mut in_flight: HashMap<(usize, usize), VecDeque<Vec<f32>>> = HashMap::new();
            // As RankHalos::exchange orders them: side by side, field by field.
            for (from, part) in ranks.iter_mut().enumerate() {
                for side in &transfers[from] {
                    for field in 0..2 {
                        for t in side.iter().filter(|t| t.send) {
                            let values = part.rows(field, t.row, t.rows).unwrap();
                            in_flight.entry((from, t.peer)).or_default().push_back(values);
                        }
                    }
                }
            }
            for (to, part) in ranks.iter_mut().enumerate() {
                for side in &transfers[to] {
                    for field in 0..2 {
                        for t in side.iter().filter(|t| !t.send) {
                            let values =
                                in_flight.get_mut(&(t.peer, to)).and_then(VecDeque::pop_front).unwrap();
                            assert_eq!(values.len(), t.rows as usize * w);
                            part.set_rows(field, t.row, &values).unwrap();
                        }
                    }
                }
            }
            assert!(in_flight.values().all(VecDeque::is_empty), "every send received");
        }
        let fields = (0..2)
            .map(|field| {
                (ranks.iter_mut().zip(&rows))
                    .flat_map(|(part, r)| part.rows(field, r.halo_before, r.band.len).unwrap())
                    .collect()
            })
            .collect::<Vec<Vec<f32>>>();
        bits(&fields)
    }

    #[test]
    fn ranks_exchanging_as_nccl_pairs_their_transfers_give_the_bits_of_one_part() {
        for periodic in [false, true] {
            let model = Diffusion { width: 13, height: 43, periodic };
            for steps in [8, 13, 29] {
                let whole = run(&model, 1, 1, &[steps]);
                for parts in [1, 2, 3, 5] {
                    assert!(
                        run_as_ranks(&model, parts, steps) == whole,
                        "{parts} ranks, periodic {periodic}, {steps} steps"
                    );
                }
            }
        }
    }

    #[test]
    fn a_part_without_device_memory_is_refused_for_nccl_ranks() {
        let model = Diffusion { width: 4, height: 30, periodic: false };
        let (_, rows) = plan(&model, 2).unwrap();
        let mut part = model.part(&0, rows[1], vec![vec![0.0; 4 * rows[1].len() as usize]; 2]).unwrap();
        let e = ranks::nccl_stream(&mut part, 1, 2, 0).unwrap_err().to_string();
        assert!(e.contains("rank 1") && e.contains("Part::device_rows") && e.contains("NCCL"), "{e}");
        assert!(!e.contains('\n'), "one line: {e}");
    }

    #[test]
    fn mistakes_are_refused_with_one_line() {
        let model = Diffusion { width: 4, height: 30, periodic: false };
        let refused = |parts: u32, devices: &[DeviceId], start: Vec<Vec<f32>>| match Split::new(
            model.clone(),
            parts,
            devices,
            start,
        ) {
            Ok(_) => panic!("accepted"),
            Err(e) => e.to_string(),
        };
        let e = refused(4, &[0], start(4, 30)); // 8, 8, 7, 7 rows
        assert!(e.contains("--split 4") && e.contains("7 rows") && e.contains("halo of 8 rows"), "{e}");
        assert!(refused(0, &[0], start(4, 30)).contains("at least 1"));
        assert!(refused(31, &[0], start(4, 30)).contains("more parts than"));
        assert!(refused(2, &[], start(4, 30)).contains("device"));
        let e = refused(2, &[0], vec![vec![0.0; 120]]);
        assert!(e.contains("2 fields (u, v)") && e.contains("1 were given"), "{e}");
        let e = refused(2, &[0], vec![vec![0.0; 120], vec![0.0; 119]]);
        assert!(e.contains("\"v\" has 119 values") && e.contains("4x30 grid has 120"), "{e}");
        // One part is never too thin.
        let small = Diffusion { width: 4, height: 3, periodic: false };
        assert!(Split::new(small, 1, &[0], vec![vec![0.0; 12]; 2]).is_ok());
    }
}
