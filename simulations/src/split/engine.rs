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
//! the part treats as the whole model does. Every part is stepped up to the model's steps per
//! exchange at a time ([`BandedModel::steps_per_exchange`], [`STEPS_PER_EXCHANGE`] by default),
//! the halo being that many steps' worth of rows, and then every halo is refreshed from the
//! neighbours' bands.
//!
//! **Why the result is bit-identical to one part.** A part computes each of its cells with
//! the model's own per-cell math, on the same inputs the whole grid's cell has, as long as
//! every cell it reads is right. The cells that are not right are those next to a cut edge (a
//! part's edge that is not the domain's boundary, where the part's stencil sees its own edge
//! treatment instead of the neighbour's rows): one step spoils `rows_per_step` rows inward, `k`
//! steps `k · rows_per_step`. The halo is the steps per exchange's worth of rows and the
//! halos are refreshed before more steps than that run, so the spoiled rows never reach the
//! band; after the refresh the halo rows equal the neighbours' (exact) band rows again. So
//! every band cell goes through the same operations on the same values, whatever the number of
//! parts, the bands' sizes (uneven where `P` does not divide the rows) or the steps asked for
//! at a time (every round of steps is followed by an exchange). A model whose per-cell
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

#[cfg(doc)]
use super::STEPS_PER_EXCHANGE;
use super::{
    Layout,
    decomposition::{self, Band},
    ipc::IpcHalos,
    model::{BandedModel, HaloPath, OverlapPlan, Plan, check_fields, plan},
    nccl::Communicator,
    overlap::Overlap,
    part::{Halo, Part, PartRows, cut, device_stream, halos},
    peer::{self, LocalHalos},
    pieces::{self, Pieces},
    ranks::{self, RankHalos},
    transport::Transport,
};
use crate::{
    cuda::Gpu,
    error::{CudaContext as _, Error, Result},
};

/// Each part's start: each field's values on the part's rows, row by row (a process builds
/// its own parts' alone).
pub type Start<'a> = &'a dyn Fn(&PartRows) -> Result<Vec<Vec<f32>>>;

/// Steps parts (each with the device it runs on, of `devices`) `steps` steps, the parts of
/// each device on a thread of their own.
type StepInThreads<P> = fn(&mut [P], &[usize], usize, u32) -> Result<()>;

/// Where a split's parts are: spread over devices of this process, or this rank's alone.
enum Place<'a, D> {
    Local(&'a [D]),
    Ranked(Communicator, &'a D),
}

/// A model split into bands of rows, run as parts in this process, or one part per process
/// over NCCL ([`Split::new_ranked`]) (see the module's doc).
pub struct Split<M: BandedModel> {
    /// How the halos travel: device to device in this process (where both parts of a halo
    /// offer [`Part::device_rows`]), or this rank's side of NCCL ranks (`parts` holds its part
    /// or its pieces alone). First, so that it is dropped first: freeing CUDA IPC's buffers
    /// waits for the exchanges, which need the parts and the communicator.
    transport: Box<Transport>,
    /// Why the halos between ranks go by NCCL where the model's overlap asked for CUDA IPC.
    ipc_refused: Option<String>,
    model: M,
    /// This process's parts, in order, the rows each holds and the device each runs on (which
    /// of the split's devices).
    parts: Vec<M::Part>,
    rows: Vec<PartRows>,
    device_of: Vec<usize>,
    /// Rows of each halo at a cut edge (0: no part has a halo), and the steps they cover.
    halo: u32,
    steps_per_exchange: u32,
    /// How many devices the parts run on (the first of those given).
    devices: usize,
    /// Steps the parts of each device on a thread of their own ([`Split::new`], whose parts
    /// may step on the host); `None`: every part from this thread.
    threads: Option<StepInThreads<M::Part>>,
    /// Between ranks: the stream of the rank's part (its gathers), and the one its exchanges
    /// outside an overlap hook run on.
    stream: Option<Arc<CudaStream>>,
    exchange_stream: Option<Arc<CudaStream>>,
    /// The halos that go through the host, in this process.
    host_halos: Vec<Halo>,
    /// The model's overlap hook, where it has one (last: its events and flags outlive the
    /// parts' work).
    overlap: Option<Box<dyn Overlap<M::Part>>>,
}

impl<M: BandedModel> Split<M>
where
    M::Part: Send,
{
    /// `model` in `parts` bands of rows from `start` (each field's values on the whole grid),
    /// spread over `devices` in order (consecutive parts share a device where there are more
    /// parts than devices). Refuses zero parts, more parts than rows, a band thinner than its
    /// halo, no device, a start of the wrong number or size of fields, and a part that offers
    /// some of its fields in device memory but not all, or on several streams.
    pub fn new(model: M, parts: u32, devices: &[M::Device], start: Vec<Vec<f32>>) -> Result<Self> {
        check_fields(&model, &start)?;
        if devices.is_empty() {
            return Err(Error::InvalidInput("a split needs at least one device to run its parts on".into()));
        }
        let plan = plan(&model, parts, false)?;
        let width = model.size().0;
        let start = |rows: &PartRows| Ok(start.iter().map(|field| cut(field, width, rows)).collect());
        let mut split = Self::build(model, plan, Place::Local(devices), &start)?;
        split.threads = Some(step_in_threads::<M::Part>);
        Ok(split)
    }
}

impl<M: BandedModel> Split<M> {
    /// `model` in one band of rows per rank of `comm`'s job, this process holding its rank's
    /// alone, on `device` (the communicator's GPU), from `start` (each field's values on the
    /// whole grid, alike on every rank): the bands, halos and steps between exchanges of
    /// [`Split::new`] with as many parts, so the same bits. The halos travel through NCCL
    /// from and into the part's device memory; rank 0 gathers the whole fields
    /// ([`Split::field`]). One rank alone is one part, except on a periodic grid, where it is
    /// its own neighbour (its halos travel to itself through NCCL). Refuses what
    /// [`Split::new`] does, and a part that does not offer its fields in device memory on the
    /// communicator's GPU ([`Part::device_rows`]).
    pub fn new_ranked(
        model: M,
        comm: Communicator,
        device: &M::Device,
        start: Vec<Vec<f32>>,
    ) -> Result<Self> {
        check_fields(&model, &start)?;
        // Every rank finds the same grid too thin or too short: said once, by rank 0.
        let plan = plan(&model, comm.size() as u32, true)
            .map_err(|e| Error::SameOnEveryRank(format!("{} processes, one part each: {e}", comm.size())))?;
        let width = model.size().0;
        let start = |rows: &PartRows| Ok(start.iter().map(|field| cut(field, width, rows)).collect());
        Self::build(model, plan, Place::Ranked(comm, device), &start)
    }

    /// `model` in the parts of `layout` (this process's GPUs or the CPU, or this rank's part
    /// of an NCCL job), each part built from `start` (a process builds only its own parts'
    /// values): otherwise as [`Split::new`] and [`Split::new_ranked`], whose refusals it
    /// keeps. Every part steps from this thread: a model on this crate's GPUs queues its
    /// steps on its streams, and its CPU parts use every core by themselves.
    pub fn in_layout(model: M, layout: Layout, start: Start<'_>) -> Result<Self>
    where
        M: BandedModel<Device = Option<Arc<Gpu>>>,
    {
        let plan = plan(&model, layout.parts(), matches!(layout, Layout::Ranks(_)))?;
        match layout {
            Layout::Local { gpus, .. } => {
                let devices: Vec<Option<Arc<Gpu>>> = gpus.into_iter().map(Some).collect();
                Self::build(model, plan, Place::Local(&devices), start)
            }
            Layout::Cpu { .. } => Self::build(model, plan, Place::Local(&[None]), start),
            Layout::Ranks(comm) => {
                let gpu = Some(comm.gpu().clone());
                Self::build(model, plan, Place::Ranked(comm, &gpu), start)
            }
        }
    }

    fn build(model: M, plan: Plan, place: Place<'_, M::Device>, start: Start<'_>) -> Result<Self> {
        let Plan { halo, steps_per_exchange, rows: all_rows } = plan;
        let (width, fields, periodic) = (model.size().0, model.fields().len(), model.periodic());
        let overlap_plan = if halo > 0 { model.overlap() } else { OverlapPlan::None };
        let split = match place {
            Place::Local(devices) => {
                let placement = decomposition::placement(all_rows.len(), devices.len());
                let used = placement.iter().max().map_or(1, |&d| d + 1);
                for (d, device) in devices.iter().enumerate().take(used) {
                    let held: Vec<(usize, PartRows)> = (0..all_rows.len())
                        .filter(|&p| placement[p] == d)
                        .map(|p| (p, all_rows[p]))
                        .collect();
                    model.check_device(device, &held, all_rows.len())?;
                }
                let mut parts = Vec::with_capacity(all_rows.len());
                for (rows, &device) in all_rows.iter().zip(&placement) {
                    parts.push(model.part(&devices[device], *rows, start(rows)?)?);
                }
                let streams = (parts.iter_mut().enumerate())
                    .map(|(p, part)| device_stream(part, p, fields))
                    .collect::<Result<Vec<_>>>()?;
                let readers = parts.iter().zip(&streams).all(|(part, s)| s.is_none() || part.gpu().is_some());
                let (device_halos, host_halos): (Vec<Halo>, Vec<Halo>) = halos(&all_rows, periodic)
                    .into_iter()
                    .partition(|h| streams[h.to].is_some() && streams[h.from].is_some());
                let (streams, preferred, exchange_streams) = match overlap_plan {
                    OverlapPlan::Streams { peer_copy } => {
                        let forks = (streams.iter().enumerate())
                            .map(|(p, stream)| fork(stream.as_ref(), p))
                            .collect::<Result<Vec<_>>>()?;
                        (forks.iter().cloned().map(Some).collect(), peer_copy, Some(forks))
                    }
                    OverlapPlan::None | OverlapPlan::Pieces => (streams, model.peer_copy(), None),
                };
                let device = LocalHalos::new(streams, device_halos, preferred, readers)?;
                let mut split = Self::assembled(
                    model,
                    parts,
                    all_rows,
                    Transport::Peer(device),
                    halo,
                    steps_per_exchange,
                );
                split.device_of = placement;
                split.devices = used;
                split.host_halos = host_halos;
                if let Some(streams) = exchange_streams {
                    let mut ordinals: Vec<usize> = streams.iter().map(|s| s.context().ordinal()).collect();
                    ordinals.sort_unstable();
                    ordinals.dedup();
                    let path =
                        if ordinals.len() == streams.len() { HaloPath::OwnGpus } else { HaloPath::SharedGpu };
                    split.overlap = Some(split.model.overlap_hook(&mut split.parts, &streams, path)?);
                }
                split
            }
            Place::Ranked(comm, device) => {
                let rank = comm.rank();
                let mine = all_rows[rank];
                model.check_device(device, &[(rank, mine)], all_rows.len())?;
                let every: Option<Vec<Vec<PartRows>>> = (overlap_plan == OverlapPlan::Pieces)
                    .then(|| all_rows.iter().map(|rows| pieces::pieces(rows, halo)).collect());
                let my_rows = every.as_ref().map_or_else(|| vec![mine], |every| every[rank].clone());
                let mut parts = Vec::with_capacity(my_rows.len());
                for rows in &my_rows {
                    parts.push(model.part(device, *rows, start(rows)?)?);
                }
                let gpu = comm.gpu().ordinal();
                let streams = (parts.iter_mut())
                    .map(|part| ranks::nccl_stream(part, rank, fields, gpu))
                    .collect::<Result<Vec<_>>>()?;
                let stream = streams[0].clone();
                if streams.iter().any(|s| s.cu_stream() != stream.cu_stream()) {
                    return Err(Error::InvalidInput(format!(
                        "rank {rank}'s pieces keep their fields on several streams (Part::device_rows): one stream"
                    )));
                }
                // The pieces' halos among themselves, on the rank's stream (not periodic: the
                // band's own edges are NCCL's).
                let between = (parts.len() > 1)
                    .then(|| LocalHalos::unordered(&stream, parts.len(), halos(&my_rows, false)));
                let mut ranks = RankHalos::new(comm, all_rows, every, periodic);
                let mut ipc_refused = None;
                let (exchange, path) = match overlap_plan {
                    OverlapPlan::Streams { .. } => {
                        // Halos by the copy engines where every rank can (they take no SM); else
                        // NCCL's kernel.
                        ipc_refused = ranks.connect_ipc(halo as usize * width as usize * 4 * fields)?;
                        let path = if ranks.by_ipc() { HaloPath::Ipc } else { HaloPath::Nccl };
                        (Some(fork(Some(&stream), rank)?), Some(path))
                    }
                    OverlapPlan::Pieces if parts.len() > 1 => (Some(fork(Some(&stream), rank)?), None),
                    _ => (None, None),
                };
                let transport = Transport::Ranks { ranks: Box::new(ranks), pieces: between };
                let mut split = Self::assembled(model, parts, my_rows, transport, halo, steps_per_exchange);
                split.ipc_refused = ipc_refused;
                split.stream = Some(stream.clone());
                split.exchange_stream = Some(exchange.clone().unwrap_or_else(|| stream.clone()));
                split.overlap = match (exchange, path) {
                    (Some(exchange), Some(path)) => Some(split.model.overlap_hook(
                        &mut split.parts,
                        std::slice::from_ref(&exchange),
                        path,
                    )?),
                    (Some(exchange), None) => Some(Box::new(Pieces::new(stream, exchange, fields, width))),
                    _ => None,
                };
                split
            }
        };
        Ok(split)
    }

    /// The split of `model` into `parts` holding `rows` over `transport`, with nothing else
    /// set up yet (one device, no stream, host halo or overlap).
    fn assembled(
        model: M,
        parts: Vec<M::Part>,
        rows: Vec<PartRows>,
        transport: Transport,
        halo: u32,
        steps_per_exchange: u32,
    ) -> Self {
        let device_of = vec![0; parts.len()];
        Self {
            transport: Box::new(transport),
            ipc_refused: None,
            model,
            parts,
            rows,
            device_of,
            halo,
            steps_per_exchange,
            devices: 1,
            threads: None,
            stream: None,
            exchange_stream: None,
            host_halos: Vec::new(),
            overlap: None,
        }
    }

    /// How the halos travel between the parts: device to device where both parts of a halo
    /// offer their fields in GPU memory ([`Part::device_rows`]), else through the host.
    pub fn halo_travel(&self) -> HaloTravel {
        let device = match &*self.transport {
            Transport::Ranks { .. } => {
                return if self.halo > 0 { HaloTravel::Nccl } else { HaloTravel::None };
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

    /// Where the parts are and how their halos travel, for run summaries: `on 1 GPU`, `on 4
    /// GPUs, halos by peer reads`, `on the CPU, halos through the host`, `one per process over NCCL, 2 processes`, ..., and the
    /// overlap hook's words where there is one.
    pub fn describe_place(&self) -> String {
        let place = match &*self.transport {
            Transport::Peer(halos) => {
                let ordinals: Vec<usize> =
                    self.parts.iter().filter_map(|p| p.gpu().map(|gpu| gpu.ordinal())).collect();
                if ordinals.is_empty() {
                    format!("on the CPU, {}", self.halo_travel().describe())
                } else {
                    peer::describe(ordinals, halos.how())
                }
            }
            Transport::Ranks { ranks, .. } => {
                let n = ranks.comm().size();
                match (ranks.by_ipc(), &self.ipc_refused) {
                    (true, _) => format!("one per process, {}, {n} processes", IpcHalos::describe()),
                    (false, Some(why)) => {
                        format!("one per process over NCCL (not by CUDA IPC: {why}), {n} processes")
                    }
                    (false, None) => format!("one per process over NCCL, {n} processes"),
                }
            }
        };
        match &self.overlap {
            Some(hook) => format!("{place}, {}", hook.describe()),
            None => place,
        }
    }

    /// The model.
    pub fn model(&self) -> &M {
        &self.model
    }

    /// This process's parts, in order (to change what every part runs with, such as a
    /// model's rates).
    pub fn parts_mut(&mut self) -> &mut [M::Part] {
        &mut self.parts
    }

    /// The number of parts (of the whole job, where the parts are NCCL ranks).
    pub fn parts(&self) -> usize {
        match &*self.transport {
            Transport::Ranks { ranks, .. } => ranks.rows().len(),
            Transport::Peer(_) => self.parts.len(),
        }
    }

    /// Every band of the run, in order (every rank's, where the parts are NCCL ranks).
    pub fn bands(&self) -> Vec<Band> {
        self.part_rows().iter().map(|rows| rows.band).collect()
    }

    /// The number of devices this process's parts run on.
    pub fn devices(&self) -> usize {
        self.devices
    }

    /// The rows of each part's halo at a cut edge (0 where no part has one).
    pub fn halo(&self) -> u32 {
        self.halo
    }

    /// The steps the parts take between two exchanges.
    pub fn steps_per_exchange(&self) -> u32 {
        self.steps_per_exchange
    }

    /// The rows each part holds, in order (every rank's, where the parts are NCCL ranks).
    pub fn part_rows(&self) -> Vec<PartRows> {
        match &*self.transport {
            Transport::Ranks { ranks, .. } => ranks.rows().to_vec(),
            Transport::Peer(_) => self.rows.clone(),
        }
    }

    /// Bytes one exchange writes into this process's parts' halos (every field; a rank's
    /// pieces' halos among themselves included).
    pub fn exchange_bytes(&self) -> u64 {
        let halo_rows: u64 = self.rows.iter().map(|r| u64::from(r.halo_before + r.halo_after)).sum();
        halo_rows * u64::from(self.model.size().0) * self.model.fields().len() as u64 * 4
    }

    /// This rank's communicator, where the parts are NCCL ranks.
    pub fn communicator(&self) -> Option<&Communicator> {
        self.transport.comm()
    }

    /// Gives up the parts, keeping this rank's communicator (for another run on it).
    pub fn into_communicator(self) -> Option<Communicator> {
        let Self { transport, .. } = self;
        transport.into_communicator()
    }

    /// Whether this process writes the outputs: rank 0 where the parts are NCCL ranks (the
    /// others get no fields from [`Split::field`]), else always.
    pub fn is_root(&self) -> bool {
        self.transport.is_root()
    }

    /// Runs `steps` steps in rounds of at most the steps per exchange, each round followed by
    /// the exchange that refreshes every halo (so the host queues it while the parts' steps
    /// run, and the halos are whole again for the next call); with an overlap hook, each
    /// round with its exchange hidden behind the steps as the hook does it.
    pub fn step(&mut self, steps: u32) -> Result<()> {
        if self.halo == 0 {
            return self.step_parts(steps);
        }
        // A rank that stopped stalls the exchanges, and with them these steps once the launch
        // queue is full: watched, the clock restarted after each exchange queued.
        let watch = self.transport.watch("the halo exchange");
        let mut left = steps;
        while left > 0 {
            let now = left.min(self.steps_per_exchange);
            match &mut self.overlap {
                Some(hook) => hook.round(&mut self.parts, &mut self.transport, now)?,
                None => {
                    self.step_parts(now)?;
                    self.exchange()?;
                }
            }
            left -= now;
            if let Some(watch) = &watch {
                watch.progress();
            }
        }
        match &mut self.overlap {
            Some(hook) => hook.settle(&mut self.parts),
            None => Ok(()),
        }
    }

    /// Steps every part `steps` times with no exchange in between (at most the steps per
    /// exchange at a time): the computation alone, for the bench. The halos go stale, so the
    /// fields are no longer the simulation's.
    pub fn compute_only(&mut self, steps: u32) -> Result<()> {
        let mut left = steps;
        while left > 0 {
            let now = left.min(self.steps_per_exchange.max(1));
            self.step_parts(now)?;
            left -= now;
        }
        Ok(())
    }

    /// Steps every part `steps` steps: the parts of each device in turn, the devices at once
    /// where the parts may step on the host ([`Split::new`]).
    fn step_parts(&mut self, steps: u32) -> Result<()> {
        match self.threads {
            Some(threads) if self.devices > 1 => {
                threads(&mut self.parts, &self.device_of, self.devices, steps)
            }
            _ => self.parts.iter_mut().try_for_each(|part| part.step(steps)),
        }
    }

    /// Refreshes every halo from the neighbours' bands: device to device, then through the
    /// host (the two write different halo rows and only read band rows). Public for the
    /// bench, which times the exchange alone.
    pub fn exchange(&mut self) -> Result<()> {
        let (width, fields) = (self.model.size().0, self.model.fields().len());
        self.transport.exchange(&mut self.parts, self.exchange_stream.as_ref(), fields, width)?;
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

    /// Waits for every part's queued work and the overlap hook's exchanges.
    pub fn synchronize(&mut self) -> Result<()> {
        let _watch = self.transport.watch("the halo exchange");
        self.parts.iter_mut().try_for_each(Part::synchronize)?;
        match &mut self.overlap {
            Some(hook) => hook.synchronize(),
            None => Ok(()),
        }
    }

    /// Field `field` of the whole grid, row by row, from every part's band. Where the parts
    /// are NCCL ranks every rank must call it (the bands are gathered to rank 0): rank 0
    /// gets the whole field, the others nothing (an empty field).
    pub fn field(&mut self, field: usize) -> Result<Vec<f32>> {
        Ok(self.gather(&[field])?.pop().expect("one field"))
    }

    /// Every field of the whole grid, in the model's order (as [`Split::field`] gives them),
    /// in one gather.
    pub fn fields(&mut self) -> Result<Vec<Vec<f32>>> {
        let all: Vec<usize> = (0..self.model.fields().len()).collect();
        self.gather(&all)
    }

    fn gather(&mut self, fields: &[usize]) -> Result<Vec<Vec<f32>>> {
        let width = self.model.size().0;
        self.transport.gather(&mut self.parts, &self.rows, self.stream.as_ref(), fields, width)
    }

    /// Row `row` of field `field` of the whole grid, from the part whose band holds it; where
    /// the parts are NCCL ranks every rank must call it (rank 0 gets the row, the others
    /// nothing).
    pub fn row(&mut self, field: usize, row: u32) -> Result<Vec<f32>> {
        let width = self.model.size().0;
        if let Transport::Ranks { ranks, .. } = &mut *self.transport {
            let stream = self.stream.clone().expect("a rank's stream");
            return ranks.gather_row(&mut self.parts, &stream, field, row, width);
        }
        let (part, rows) = (self.parts.iter_mut().zip(&self.rows))
            .find(|(_, rows)| (rows.band.start..rows.band.end()).contains(&row))
            .ok_or_else(|| Error::InvalidInput(format!("row {row} is outside the grid's bands")))?;
        part.rows(field, row - rows.band.start + rows.halo_before, 1)
    }

    /// Continues from `fields` (each field's values on the whole grid, as a checkpoint of a
    /// run in any number of parts holds them): every part's rows, halos included. Where the
    /// parts are NCCL ranks every rank passes the whole fields and takes its part's rows.
    pub fn restore(&mut self, fields: &[Vec<f32>]) -> Result<()> {
        check_fields(&self.model, fields)?;
        let width = self.model.size().0;
        for (part, rows) in self.parts.iter_mut().zip(&self.rows) {
            let values: Vec<Vec<f32>> = fields.iter().map(|values| cut(values, width, rows)).collect();
            part.set_all(&values)?;
        }
        Ok(())
    }
}

/// [`StepInThreads`]: the parts of each device in turn, on a thread of the device's.
fn step_in_threads<P: Part + Send>(
    parts: &mut [P],
    device_of: &[usize],
    devices: usize,
    steps: u32,
) -> Result<()> {
    let mut by_device: Vec<Vec<&mut P>> = (0..devices).map(|_| Vec::new()).collect();
    for (part, &device) in parts.iter_mut().zip(device_of) {
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

/// A stream of its own for part `p`'s exchanges, forked from its stream (which must exist: an
/// overlap needs the fields in device memory).
fn fork(stream: Option<&Arc<CudaStream>>, p: usize) -> Result<Arc<CudaStream>> {
    let stream = stream.ok_or_else(|| {
        Error::InvalidInput(format!(
            "part {p} keeps its fields in host memory (Part::device_rows), but the model overlaps its exchange on \
             streams of the parts' GPUs"
        ))
    })?;
    stream.fork().context(|| "creating an exchange stream".into())
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

#[cfg(test)]
mod tests {
    use cudarc::driver::CudaSlice;

    use super::*;
    use crate::split::{DeviceRows, STEPS_PER_EXCHANGE, decomposition::Side};

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
        /// The steps of each call of `step`, in order.
        rounds: Vec<u32>,
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
                rounds: Vec::new(),
            })
        }
    }

    impl Part for DiffusionPart {
        fn step(&mut self, steps: u32) -> Result<()> {
            self.rounds.push(steps);
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

    /// An overlap hook that steps the parts and refreshes the halos through the host, as the
    /// split would, and records what the step loop hands it.
    struct Recording {
        rows: Vec<PartRows>,
        periodic: bool,
        rounds: std::sync::Arc<std::sync::Mutex<Vec<u32>>>,
        settled: std::sync::Arc<std::sync::atomic::AtomicU32>,
    }

    impl Overlap<DiffusionPart> for Recording {
        fn round(&mut self, parts: &mut [DiffusionPart], _: &mut Transport, steps: u32) -> Result<()> {
            self.rounds.lock().unwrap().push(steps);
            parts.iter_mut().try_for_each(|part| part.step(steps))?;
            let mut writes = Vec::new();
            for halo in halos(&self.rows, self.periodic) {
                for field in 0..2 {
                    writes.push((halo, field, parts[halo.from].rows(field, halo.from_row, halo.rows)?));
                }
            }
            for (halo, field, values) in writes {
                parts[halo.to].set_rows(field, halo.to_row, &values)?;
            }
            Ok(())
        }

        fn settle(&mut self, _: &mut [DiffusionPart]) -> Result<()> {
            self.settled.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Ok(())
        }

        fn describe(&self) -> String {
            "recorded".into()
        }
    }

    #[test]
    fn an_overlap_hook_gets_rounds_of_at_most_the_steps_per_exchange_and_settles_once_a_call() {
        let model = Diffusion { width: 13, height: 43, periodic: true };
        let schedule = [3, 7, 1, 12, 5, 16];
        let whole = run(&model, 1, 1, &schedule);
        let mut split = Split::new(model.clone(), 3, &[0], start(13, 43)).unwrap();
        let (rounds, settled) = (Default::default(), std::sync::Arc::new(Default::default()));
        let hook = Recording {
            rows: split.part_rows(),
            periodic: true,
            rounds: std::sync::Arc::clone(&rounds),
            settled: std::sync::Arc::clone(&settled),
        };
        split.overlap = Some(Box::new(hook));
        for steps in schedule {
            split.step(steps).unwrap();
        }
        // Each call in rounds of 8 steps and what is left; the hook's exchange after every
        // round keeps the bits of one part.
        assert_eq!(*rounds.lock().unwrap(), [3, 7, 1, 8, 4, 5, 8, 8]);
        assert_eq!(settled.load(std::sync::atomic::Ordering::SeqCst), schedule.len() as u32);
        assert!(bits(&split.fields().unwrap()) == whole);
        assert!(split.describe_place().ends_with(", recorded"), "{}", split.describe_place());
    }

    #[test]
    fn a_calls_steps_are_rounds_of_at_most_the_steps_per_exchange() {
        let model = Diffusion { width: 13, height: 43, periodic: false };
        let mut split = Split::new(model, 3, &[0], start(13, 43)).unwrap();
        for steps in [3, 7, 1, 12, 5, 16] {
            split.step(steps).unwrap();
        }
        // 8 steps a halo: every call in rounds of 8 and what is left, each round followed by
        // an exchange.
        for part in &split.parts {
            assert_eq!(part.rounds, [3, 7, 1, 8, 4, 5, 8, 8]);
        }
    }

    #[test]
    fn one_rank_of_a_periodic_grid_is_its_own_neighbour_and_a_bounded_one_has_no_halo() {
        let periodic = Diffusion { width: 4, height: 30, periodic: true };
        let ranked = plan(&periodic, 1, true).unwrap();
        assert_eq!((ranked.halo, ranked.steps_per_exchange), (STEPS_PER_EXCHANGE, STEPS_PER_EXCHANGE));
        assert_eq!((ranked.rows[0].halo_before, ranked.rows[0].halo_after), (8, 8));
        assert_eq!(
            ranked.rows[0].grid_rows().take(9).collect::<Vec<_>>(),
            [22, 23, 24, 25, 26, 27, 28, 29, 0]
        );
        // In one process one part has no halo, and neither has one bounded rank.
        assert_eq!(plan(&periodic, 1, false).unwrap().halo, 0);
        let bounded = Diffusion { width: 4, height: 30, periodic: false };
        assert_eq!(plan(&bounded, 1, true).unwrap().halo, 0);
        // A rank its own neighbour needs the rows its halo takes.
        let short = Diffusion { width: 4, height: 7, periodic: true };
        let e = plan(&short, 1, true).unwrap_err().to_string();
        assert!(e.contains("7 rows") && e.contains("halo of 8 rows"), "{e}");
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

    /// One NCCL rank alone is one part; on a bounded grid with no halos, on a periodic one its
    /// own neighbour, its halos sent to itself through NCCL. This process writes the outputs
    /// and keeps its communicator, and the field steps as one part's.
    #[test]
    #[ignore = "needs a CUDA GPU"]
    fn one_nccl_rank_is_one_part_with_its_communicator() {
        let gpu = crate::cuda::open_device(0).unwrap();
        let bootstrap = crate::split::nccl::Bootstrap {
            id_file: None,
            timeout: std::time::Duration::from_secs(60),
            max_ctas: None,
        };
        let mut comm = Some(Communicator::connect(gpu.clone(), 0, 1, &bootstrap).unwrap());
        for periodic in [false, true] {
            let model = Diffusion { width: 13, height: 43, periodic };
            let stream = gpu.stream().clone();
            let mut split =
                Split::new_ranked(OnGpu(model.clone()), comm.take().unwrap(), &stream, start(13, 43))
                    .unwrap();
            let (travel, halo) =
                if periodic { (HaloTravel::Nccl, STEPS_PER_EXCHANGE) } else { (HaloTravel::None, 0) };
            assert_eq!(
                (split.halo_travel(), split.parts(), split.halo()),
                (travel, 1, halo),
                "periodic {periodic}"
            );
            assert!(split.is_root() && split.communicator().is_some());
            for steps in [7, 13] {
                split.step(steps).unwrap();
            }
            assert!(bits(&split.fields().unwrap()) == run(&model, 1, 1, &[7, 13]), "periodic {periodic}");
            comm = split.into_communicator();
        }
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
        let halo = plan(&model, 2, false).unwrap().halo;
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
                let Plan { halo, rows, .. } = plan(&model, parts, false).unwrap();
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
        let rows = plan(model, parts, false).unwrap().rows;
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
        let rows = plan(&model, 2, false).unwrap().rows;
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
