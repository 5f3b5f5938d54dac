//! Heat split into slabs along z (`--split P`, `--gpus N`): each part is a CUDA engine of its
//! own over its slab plus [`HALO`] planes from each neighbour (none beyond the domain's own
//! faces), stepped one RK4 step at a time with the halos refreshed in between. Results are
//! bit-identical to the run in one part.
//!
//! Why four planes: the kernels hold a slab's outer planes fixed, as faces, and give every
//! stage 0 there. The four stages of an RK4 step each apply the Laplacian once (k1..k4 for
//! `naive`/`reuse`, the powers Lu..L⁴u of the Laplacian L for `fused`/`tiled`/`single`), so a wrong value at
//! the slab's edge reaches one plane further per stage: after one step the first four planes
//! are wrong and the fifth is right. Every variant needs the same four planes per side.
//!
//! `single` writes a slab's own planes only (its halos come from the exchange). With `overlap`
//! in one process with a GPU per slab, it writes the slab in one launch while the copy engines
//! send its edge rows round by round of tile columns, each round waiting in the kernel for the
//! halo rows it reads (the split's [`Rounds`]). Elsewhere (CUDA IPC, slabs sharing a GPU)
//! it writes its slab in two halves, the lower and the upper, in turns: lower first on even
//! steps, upper first on odd ones. The edge planes of the half written first travel (on the
//! slab's exchange stream) while the second half is written, and the edge of the second half
//! travels while the next step writes its first half, which is on the other side and needs the
//! halo that arrived during the second half. So both exchanges of a step hide behind a half
//! each, and a step costs one split of the pipeline (see `Halves`). Between processes over
//! NCCL, where a link may be slower than a half of a step needs (a network between hosts),
//! the slab is written edges first instead (see `Edges`): the planes its neighbours need,
//! then its middle, while both edges travel, so the exchange hides behind nearly the whole
//! step for two more pipeline starts ([`OverlapScheme`]). The other variants step the whole
//! slab, halos included, and exchange after the step.
//!
//! A model adaptor on the one split engine ([`crate::split`]): a slab is a part of it
//! (`Slab`, on a bounded axis: no halo beyond the domain's faces), one exchange per RK4
//! step; the halves and edges first are this file's overlap hooks, the rounds the split's
//! ([`Rounds`], given each slab's rounds and its launch). The transport ([`Transport`]): in one
//! process the split's peer copies (copy engines with `overlap`) ordered by events between
//! neighbours ([`LocalHalos`]); between processes its NCCL exchange and gather
//! ([`RankHalos`]), or with `overlap`, where every rank's neighbours share its host, the copy
//! engines through CUDA IPC ([`crate::split::ipc`]): NCCL's kernel would need SMs that the
//! halves hold.

use std::sync::Arc;

use cudarc::driver::{CudaEvent, CudaStream};
use kernels::heat::{RoundSignals, SINGLE_OUT_W, rows_written_after_round};

use super::{
    HeatEngine, HeatSetup, HeatVariant,
    cuda::{CudaHeat, March},
};
use crate::{
    cuda::Gpu,
    error::{CudaContext as _, Error, Result, human_bytes},
    memory,
    split::{
        self, DeviceRows, Layout, LocalHalos, PartRows, PeerCopy, RankHalos,
        decomposition::{self, Band, Side},
        ipc::IpcHalos,
        nccl::{Communicator, Watch},
        peer,
        rounds::{RoundPart, RoundSchedule, Rounds},
        transport::Transport,
    },
};

/// Planes of halo per side per RK4 step: one per stage.
pub const HALO: u32 = 4;

/// Multiprocessors an NCCL rank's halves leave free with `--overlap`, for NCCL's
/// send/receive kernel to run beside them (the single pass takes a whole SM per block, in
/// one wave: a block waiting for NCCL's to end would hold up the whole half); NCCL's kernels
/// are held to as many blocks (`NCCL_MAX_CTAS`, [`crate::split::nccl::Bootstrap::max_ctas`]).
pub const NCCL_FREE_SMS: u32 = 2;

/// Whether a split run of `variant` over `gpus` GPUs overlaps its exchange with the slabs'
/// halves when not told (`--overlap`, `--no-overlap`): the single variant (the only one with
/// halves) on two GPUs or more, where it paid everywhere it was measured (docs/multi-gpu.md:
/// one process and processes, NVLink and NCCL over sockets). Parts sharing one GPU gain nothing
/// from it: their exchange is a copy on the same GPU.
pub fn overlap_by_default(variant: HeatVariant, gpus: usize) -> bool {
    variant == HeatVariant::Single && gpus >= 2
}

/// How `--overlap` hides a step's exchange.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OverlapScheme {
    /// The slab in two halves, in turns, each half's edge travelling while the other half is
    /// written: the exchange has half a step to arrive; one more pipeline start per step.
    Halves,
    /// The slab's edges first, then its middle while both edges travel: the exchange has the
    /// middle's time, nearly a step; two more pipeline starts per step.
    Edges,
    /// The whole slab in one launch; the copy engines send the edge rows of each round of
    /// tile columns as soon as every block has finished it, and each round of the next step
    /// waits (in the kernel) for the halo rows its tiles read: no pipeline start beyond one
    /// launch's. In one process only (see `Rounds`).
    Rounds,
}

/// Set to `halves`, `edges` or `rounds` to choose heat's overlap scheme (to measure one against
/// another; rounds in one process only); unset: [`OverlapScheme::for_transport`].
pub const OVERLAP_SCHEME_VAR: &str = "RUST_GPU_SIM_HEAT_OVERLAP";

/// Where a split run's halos travel, as far as the overlap scheme cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HaloPath {
    /// In one process, each slab on a GPU of its own (copy engines between GPUs).
    OwnGpus,
    /// In one process, some slabs sharing a GPU.
    SharedGpu,
    /// Between processes of one host by the copy engines (CUDA IPC).
    Ipc,
    /// Between processes by NCCL (which may be hosts apart, over a network).
    Nccl,
}

impl OverlapScheme {
    /// Rounds with a GPU for each slab in one process (measured on 4 H100s: 95.2-95.3%
    /// against the halves' 93.6-93.7% for heat 1200³; docs/multi-gpu.md); edges where the
    /// halos go by NCCL between processes, whose link may be slower than half a step needs;
    /// halves elsewhere: through CUDA IPC (the rounds are in one process only) and for slabs
    /// sharing a GPU (whose launches the rounds would serialise).
    pub fn for_transport(path: HaloPath) -> Self {
        match path {
            HaloPath::OwnGpus => OverlapScheme::Rounds,
            HaloPath::Nccl => OverlapScheme::Edges,
            HaloPath::SharedGpu | HaloPath::Ipc => OverlapScheme::Halves,
        }
    }

    /// [`OverlapScheme::for_transport`], or [`OVERLAP_SCHEME_VAR`] where set; refuses another
    /// value, and rounds between processes.
    fn chosen(path: HaloPath) -> Result<Self> {
        let scheme = match std::env::var(OVERLAP_SCHEME_VAR).as_deref() {
            Err(_) => Self::for_transport(path),
            Ok("halves") => OverlapScheme::Halves,
            Ok("edges") => OverlapScheme::Edges,
            Ok("rounds") => OverlapScheme::Rounds,
            Ok(other) => {
                return Err(Error::InvalidInput(format!(
                    "{OVERLAP_SCHEME_VAR}={other:?}: use halves, edges or rounds"
                )));
            }
        };
        if scheme == OverlapScheme::Rounds && matches!(path, HaloPath::Ipc | HaloPath::Nccl) {
            return Err(Error::SameOnEveryRank(format!(
                "{OVERLAP_SCHEME_VAR}=rounds exchanges halos in one process only (--gpus), not between processes"
            )));
        }
        Ok(scheme)
    }
}

/// Sets the SMs an NCCL rank's halves leave free instead of [`NCCL_FREE_SMS`] (0 to 16), to
/// measure others (set `NCCL_MAX_CTAS` to match).
pub const FREE_SMS_VAR: &str = "RUST_GPU_SIM_NCCL_FREE_SMS";

/// [`NCCL_FREE_SMS`], or [`FREE_SMS_VAR`] where it is set (a value outside 0 to 16 is refused
/// with a warning and the default kept).
fn nccl_free_sms() -> u32 {
    let Ok(text) = std::env::var(FREE_SMS_VAR) else { return NCCL_FREE_SMS };
    match text.parse::<u32>() {
        Ok(sms @ 0..=16) => sms,
        _ => {
            crate::stderr_line!(
                "warning: {FREE_SMS_VAR}={text} is not 0 to 16 SMs: {NCCL_FREE_SMS} left free"
            );
            NCCL_FREE_SMS
        }
    }
}

/// One slab, its halos (`below` and `above` planes, none at the domain's faces) and the engine
/// that steps it: a part of the split.
struct Slab {
    band: Band,
    below: u32,
    above: u32,
    /// The box's planes along z, and the cells of a plane.
    planes: u32,
    plane: usize,
    variant: HeatVariant,
    engine: CudaHeat,
}

impl Slab {
    /// The slab's planes of the whole box, as the split counts them.
    fn part_rows(&self) -> PartRows {
        PartRows { band: self.band, halo_before: self.below, halo_after: self.above, grid_rows: self.planes }
    }

    /// One RK4 step, no exchange: `single` writes the slab's own planes, the other variants
    /// the whole slab.
    fn step_once(&mut self) -> Result<()> {
        if self.variant == HeatVariant::Single {
            self.engine.step_planes(self.below..self.below + self.band.len)?;
            self.engine.finish_planes();
            Ok(())
        } else {
            self.engine.step(1)
        }
    }

    /// The planes written first, on `side`, and the rest: the slab's two halves, or all of it
    /// and nothing where a half would be thinner than the halo (its pipeline would then read
    /// the far halo too).
    fn halves(&self, side: Side) -> (std::ops::Range<u32>, std::ops::Range<u32>) {
        let (lo, hi) = (self.below, self.below + self.band.len);
        if self.band.len < 2 * HALO {
            return (lo..hi, hi..hi);
        }
        let mid = lo + self.band.len / 2;
        match side {
            Side::Below => (lo..mid, mid..hi),
            Side::Above => (mid..hi, lo..mid),
        }
    }
}

impl Slab {
    /// The planes written first (the `HALO` planes at each end that has a neighbour), and
    /// the middle written while they travel: `[below, middle, above]`. A slab too thin to
    /// have a middle apart from its edges is written at once (its middle's pipeline would
    /// read the halos).
    fn edges(&self) -> [std::ops::Range<u32>; 3] {
        edge_ranges(self.below, self.band.len, self.above)
    }
}

/// [`Slab::edges`] of a slab of `len` own planes after `below` halo planes, with `above` halo
/// planes after them (0 at the domain's faces).
fn edge_ranges(below: u32, len: u32, above: u32) -> [std::ops::Range<u32>; 3] {
    let (lo, hi) = (below, below + len);
    let lower = if below > 0 { HALO } else { 0 };
    let upper = if above > 0 { HALO } else { 0 };
    if len < lower + upper + 2 * HALO {
        return [lo..hi, hi..hi, hi..hi];
    }
    [lo..lo + lower, lo + lower..hi - upper, hi - upper..hi]
}

impl split::Part for Slab {
    fn step(&mut self, steps: u32) -> Result<()> {
        (0..steps).try_for_each(|_| self.step_once())
    }

    /// One plane comes down alone.
    fn rows(&mut self, _field: usize, first: u32, count: u32) -> Result<Vec<f32>> {
        if count == 1 {
            return self.engine.slice(first);
        }
        let u = self.engine.field()?;
        Ok(u[first as usize * self.plane..(first + count) as usize * self.plane].to_vec())
    }

    fn set_rows(&mut self, _field: usize, first: u32, values: &[f32]) -> Result<()> {
        let mut u = self.engine.field()?;
        let at = first as usize * self.plane;
        u[at..at + values.len()].copy_from_slice(values);
        self.engine.set_field(&u)
    }

    fn device_rows(&mut self, _field: usize) -> Option<DeviceRows<'_>> {
        Some(self.engine.device_rows())
    }

    fn gpu(&self) -> Option<&Arc<Gpu>> {
        Some(self.engine.gpu())
    }
}

/// The order of `--overlap`'s steps (single only), one event of each kind per slab. A step
/// writes every slab's half on the side `first` (after `first_halo`, the halo there), records
/// `first_done`, writes the other half (after `second_halo`) and records `second_done`. Then
/// on each slab's exchange stream: the halo on the other side, from the neighbour there once
/// its `first_done` (the edge facing this slab is in its first half), recorded as the next
/// step's `first_halo`; and the halo on the side `first`, from the neighbour once its
/// `second_done`, recorded as the next step's `second_halo`. The sides then swap. Each
/// exchange stream waits for its own slab's half too, which ends the reads of the halo it
/// overwrites; a slab's next writes of an edge come after its exchange stream has recorded
/// the halos that its neighbours' reads of that edge precede. Costs against one launch per
/// step: one more pipeline start per column of tiles (4 planes below and above; 8 of a
/// 300-plane slab's step, the three-range scheme this replaced cost 16).
struct Halves {
    first: Side,
    first_done: Vec<CudaEvent>,
    second_done: Vec<CudaEvent>,
    first_halo: Vec<CudaEvent>,
    second_halo: Vec<CudaEvent>,
}

/// One event per slab of each kind.
fn overlap_events(parts: &[Slab]) -> Result<Vec<CudaEvent>> {
    parts
        .iter()
        .map(|p| p.engine.stream().context().new_event(None).context(|| "creating an overlap event".into()))
        .collect()
}

impl Halves {
    fn new(parts: &[Slab]) -> Result<Self> {
        Ok(Self {
            first: Side::Below,
            first_done: overlap_events(parts)?,
            second_done: overlap_events(parts)?,
            first_halo: overlap_events(parts)?,
            second_halo: overlap_events(parts)?,
        })
    }
}

/// The order of edges-first steps, one event of each kind per slab. A step writes every
/// slab's edges (after `halos`, the last step's exchange), records `edges_done`, then its
/// middle. Each exchange stream waits for its slab's `edges_done` (the transport orders the
/// neighbours': their sends read their edges, the copies of one process wait for both
/// sides), exchanges both sides into the new field's halos and records the next step's
/// `halos`. The new field's halo planes were last read by the step before, whose edges came
/// before this step's on the slab's stream; the middle reads and writes no halo plane.
struct Edges {
    edges_done: Vec<CudaEvent>,
    halos: Vec<CudaEvent>,
}

/// The exchange by rounds ([`OverlapScheme::Rounds`]) of `parts` (planes of `nx × ny`): the
/// split's [`Rounds`], with a round's units the rows of a plane (of `nx` values) and each
/// slab's rounds its single-pass launch's ([`March`]): one whole tile column per block, then
/// the runs over the columns left, which write the rest. The launch counts and waits with
/// [`RoundSignals`]; a slab launched `k` times writes the halo rows of launch `k`'s output
/// while its neighbours' launch `k` runs, which read that field's rows of launch `k − 1`
/// before they let their own rows of launch `k` go.
fn round_exchange(parts: &mut [Slab], nx: u32, ny: u32) -> Result<Rounds> {
    let tiles_x = nx.div_ceil(SINGLE_OUT_W);
    let schedules = parts
        .iter()
        .map(|part| {
            let march: March = part.engine.march(part.band.len);
            let mut done: Vec<u32> = (0..march.columns_per_block)
                .map(|round| rows_written_after_round(round, march.blocks, tiles_x, ny))
                .collect();
            done.push(ny);
            RoundSchedule { blocks: march.blocks, done }
        })
        .collect();
    let rows: Vec<PartRows> = parts.iter().map(Slab::part_rows).collect();
    Rounds::new(parts, &rows, schedules, ny, nx as usize)
}

impl RoundPart for Slab {
    fn written_rows(&mut self) -> DeviceRows<'_> {
        self.engine.written_rows()
    }
}

/// The events of `--overlap`'s scheme and its turn.
enum Overlap {
    Halves(Halves),
    Edges(Edges),
    Rounds(Rounds),
}

impl Overlap {
    fn new(scheme: OverlapScheme, parts: &mut [Slab], nx: u32, ny: u32) -> Result<Self> {
        Ok(match scheme {
            OverlapScheme::Halves => Overlap::Halves(Halves::new(parts)?),
            OverlapScheme::Edges => {
                Overlap::Edges(Edges { edges_done: overlap_events(parts)?, halos: overlap_events(parts)? })
            }
            OverlapScheme::Rounds => Overlap::Rounds(round_exchange(parts, nx, ny)?),
        })
    }

    fn scheme(&self) -> OverlapScheme {
        match self {
            Overlap::Halves(_) => OverlapScheme::Halves,
            Overlap::Edges(_) => OverlapScheme::Edges,
            Overlap::Rounds(_) => OverlapScheme::Rounds,
        }
    }
}

/// Heat in slabs along z, on GPUs of this process or one slab per process.
pub struct PartedHeat {
    /// How the halos travel: in this process, or NCCL ranks (with `overlap`, where every
    /// rank's neighbours share this host, the copy engines through CUDA IPC). First, so that
    /// it is dropped first: freeing IPC's buffers waits for the exchanges, which need the
    /// parts and the communicator.
    transport: Transport,
    /// Why not CUDA IPC, where NCCL ranks tried (for the description).
    ipc_refused: Option<String>,
    variant: HeatVariant,
    n: [u32; 3],
    /// Every slab of the run, in order (this process may hold only one).
    bands: Vec<Band>,
    parts: Vec<Slab>,
    /// With `overlap` (single only): each part's exchange stream, on which its halos travel
    /// while its other half is written.
    exchange_streams: Option<Vec<Arc<CudaStream>>>,
    /// With `overlap`: the events that order the halves (or the edges) and the exchanges,
    /// and the turn.
    overlap: Option<Overlap>,
}

impl PartedHeat {
    /// Splits the box of `setup` into slabs as `layout` says, each starting from its share of
    /// [`super::initial_field`] (built slab by slab: a process holds only its own). Refuses
    /// slabs thinner than the halo, slabs the kernels cannot index and GPUs without the
    /// memory for their slabs. `overlap`: see the module documentation (single only).
    pub fn new(layout: Layout, variant: HeatVariant, setup: &HeatSetup, overlap: bool) -> Result<Self> {
        if overlap && variant != HeatVariant::Single {
            return Err(Error::InvalidInput(format!(
                "--overlap writes a slab in halves, each half's edge exchanged while the other is written, which \
                 only the single variant does, not {}",
                variant.name()
            )));
        }
        let bands = decomposition::bands(setup.n[2], layout.parts())?;
        decomposition::check_halo(&bands, HALO, "z planes")?;
        let (gpus, mine): (Vec<Arc<Gpu>>, Vec<usize>) = match &layout {
            Layout::Local { gpus, .. } => (gpus.clone(), (0..bands.len()).collect()),
            Layout::Ranks(comm) => (vec![comm.gpu().clone()], vec![comm.rank()]),
        };
        let placement = decomposition::placement(mine.len(), gpus.len());
        let plane = setup.n[0] as usize * setup.n[1] as usize;
        let last = bands.len() - 1;
        // Each slab must fit the kernels, and the memory check is per GPU: the planes of
        // every slab it holds, halos included.
        let planes_of =
            |p: usize| bands[p].len + if p > 0 { HALO } else { 0 } + if p < last { HALO } else { 0 };
        for &p in &mine {
            let what = format!(
                "slab {} of {} (z {}..{}, halos included)",
                p + 1,
                bands.len(),
                bands[p].start,
                bands[p].end()
            );
            super::check_part(variant, [setup.n[0], setup.n[1], planes_of(p)], &what)?;
        }
        for (g, gpu) in gpus.iter().enumerate() {
            let held: Vec<usize> = (0..mine.len()).filter(|&i| placement[i] == g).map(|i| mine[i]).collect();
            let planes: u32 = held.iter().map(|&p| planes_of(p)).sum();
            let cells = plane as u64 * u64::from(planes);
            let need = variant.bytes_per_cell() * cells + (64 << 20);
            let (free, _) = gpu.memory()?;
            if let Err(Error::TooBig { need, available, .. }) =
                memory::require(setup.n[0], setup.n[1] * planes, need, free, "GPU")
            {
                return Err(Error::InvalidInput(format!(
                    "GPU {} would hold {} slab{} of this {}x{}x{} box, {planes} z planes with halos: {} needs {} of \
                     GPU memory there, but only {} is free; use more GPUs (--gpus, or processes under mpirun) or a \
                     smaller box",
                    gpu.ordinal(),
                    held.len(),
                    if held.len() == 1 { "" } else { "s" },
                    setup.n[0],
                    setup.n[1],
                    setup.n[2],
                    variant.name(),
                    human_bytes(need),
                    human_bytes(available),
                )));
            }
        }
        let mut parts = Vec::with_capacity(mine.len());
        for (&p, &g) in mine.iter().zip(&placement) {
            let band = &bands[p];
            let below = if p > 0 { HALO } else { 0 };
            let above = if p < last { HALO } else { 0 };
            let (z0, z1) = ((band.start - below) as usize, (band.end() + above) as usize);
            let local = HeatSetup { n: [setup.n[0], setup.n[1], (z1 - z0) as u32], ..setup.clone() };
            memory::check_host_box(local.n, 4 * plane as u64 * u64::from(local.n[2]))?;
            let start = super::initial_slab(setup, z0 as u32, z1 as u32);
            let engine = CudaHeat::new(gpus[g].clone(), variant, &local, &start)?;
            parts.push(Slab { band: *band, below, above, planes: setup.n[2], plane, variant, engine });
        }
        let exchange_streams = if overlap {
            let fork = |p: &Slab| p.engine.stream().fork().context(|| "creating an exchange stream".into());
            Some(parts.iter().map(fork).collect::<Result<Vec<_>>>()?)
        } else {
            None
        };
        let mut ipc_refused = None;
        let transport = match layout {
            Layout::Local { .. } => {
                // Beside a half that fills every SM, halos go by the copy engines, which
                // take none (a reading kernel would wait for the half to end).
                let preferred = if overlap { PeerCopy::Engine } else { PeerCopy::Read };
                let streams = match &exchange_streams {
                    Some(streams) => streams.iter().cloned().map(Some).collect(),
                    None => parts.iter().map(|p| Some(p.engine.stream().clone())).collect(),
                };
                let rows: Vec<PartRows> = parts.iter().map(Slab::part_rows).collect();
                Transport::Peer(LocalHalos::new(streams, split::halos(&rows, false), preferred, true)?)
            }
            Layout::Ranks(comm) => {
                let rows_of = |p: usize| PartRows {
                    band: bands[p],
                    halo_before: if p > 0 { HALO } else { 0 },
                    halo_after: if p < last { HALO } else { 0 },
                    grid_rows: setup.n[2],
                };
                let mut ranks = RankHalos::new(comm, (0..bands.len()).map(rows_of).collect(), None, false);
                if overlap {
                    // Halos by the copy engines where every rank can (they take no SM);
                    // else NCCL's kernel, beside halves that leave it a few SMs.
                    if let Some(why) = ranks.connect_ipc(HALO as usize * plane * 4)? {
                        parts[0].engine.leave_sms_free(nccl_free_sms())?;
                        ipc_refused = Some(why);
                    }
                }
                Transport::Ranks { ranks: Box::new(ranks), pieces: None }
            }
        };
        let overlap = match &exchange_streams {
            Some(_) => {
                let path = match &transport {
                    Transport::Ranks { ranks, .. } if ranks.by_ipc() => HaloPath::Ipc,
                    Transport::Ranks { .. } => HaloPath::Nccl,
                    Transport::Peer(_) => {
                        let mut ordinals: Vec<usize> = parts.iter().map(|p| p.engine.gpu_ordinal()).collect();
                        ordinals.sort_unstable();
                        ordinals.dedup();
                        if ordinals.len() == parts.len() { HaloPath::OwnGpus } else { HaloPath::SharedGpu }
                    }
                };
                Some(Overlap::new(OverlapScheme::chosen(path)?, &mut parts, setup.n[0], setup.n[1])?)
            }
            None => None,
        };
        Ok(Self { transport, ipc_refused, variant, n: setup.n, bands, parts, exchange_streams, overlap })
    }

    /// Whether this process writes the outputs (rank 0, or the only process).
    pub fn is_root(&self) -> bool {
        self.transport.is_root()
    }

    /// The watch over a wait on other ranks, with NCCL.
    fn watch(&self, what: &str) -> Option<Watch> {
        self.transport.watch(what)
    }

    fn plane(&self) -> usize {
        self.n[0] as usize * self.n[1] as usize
    }

    /// Refreshes every slab's halos from its neighbours' slabs: 2 transfers of [`HALO`]
    /// planes per inner boundary, on the parts' streams (their exchange streams with
    /// `overlap`, which the caller orders): [`Transport::exchange`].
    pub fn exchange(&mut self) -> Result<()> {
        let stream = match &self.exchange_streams {
            Some(streams) => streams[0].clone(),
            None => self.parts[0].engine.stream().clone(),
        };
        let plane = self.plane() as u32;
        self.transport.exchange(&mut self.parts, Some(&stream), 1, plane)
    }

    /// `steps` RK4 steps of every slab with no exchange: the computation alone, for the bench
    /// (the halos go stale, so the field is no longer the simulation's).
    pub fn compute_only(&mut self, steps: u32) -> Result<()> {
        (0..steps).try_for_each(|_| self.step_slabs())
    }

    /// One RK4 step of every slab, no exchange: `single` writes each slab's own planes, the
    /// other variants the whole slab.
    fn step_slabs(&mut self) -> Result<()> {
        self.parts.iter_mut().try_for_each(Slab::step_once)
    }

    /// Gives up the parts, keeping this rank's communicator (for another run on it).
    pub fn into_communicator(self) -> Option<Communicator> {
        self.transport.into_communicator()
    }

    /// This rank's communicator, where the slabs are NCCL ranks.
    pub fn communicator(&self) -> Option<&Communicator> {
        self.transport.comm()
    }

    /// One RK4 step of every slab and the exchange after it (see the module documentation).
    fn step_once(&mut self) -> Result<()> {
        if self.overlap.is_some() {
            return self.step_overlapped();
        }
        self.step_slabs()?;
        self.exchange()
    }

    /// One RK4 step with the exchange hidden behind the halves or the middle (see [`Halves`],
    /// [`Edges`]).
    fn step_overlapped(&mut self) -> Result<()> {
        let mut turn = self.overlap.take().expect("called with overlap");
        let result = match &mut turn {
            Overlap::Halves(halves) => self.step_halves(halves),
            Overlap::Edges(edges) => self.step_edges(edges),
            Overlap::Rounds(rounds) => self.step_rounds(rounds),
        };
        self.overlap = Some(turn);
        result
    }

    fn step_edges(&mut self, turn: &Edges) -> Result<()> {
        let streams = self.exchange_streams.clone().expect("overlap has exchange streams");
        for (p, part) in self.parts.iter_mut().enumerate() {
            let stream = part.engine.stream().clone();
            stream.wait(&turn.halos[p]).context(|| "ordering the edges after their halos".into())?;
            let [below, middle, above] = part.edges();
            for edge in [below, above].into_iter().filter(|r| !r.is_empty()) {
                part.engine.step_planes(edge)?;
            }
            turn.edges_done[p].record(&stream).context(|| "recording the edges".into())?;
            if !middle.is_empty() {
                part.engine.step_planes(middle)?;
            }
            part.engine.finish_planes();
        }
        for (stream, done) in streams.iter().zip(&turn.edges_done) {
            stream.wait(done).context(|| "ordering an exchange after the edges".into())?;
        }
        self.exchange()?;
        for (stream, halos) in streams.iter().zip(&turn.halos) {
            halos.record(stream).context(|| "recording an exchange".into())?;
        }
        Ok(())
    }

    /// One launch of every slab, its halos sent round by round ([`Rounds`]).
    fn step_rounds(&mut self, rounds: &mut Rounds) -> Result<()> {
        let streams = self.exchange_streams.clone().expect("overlap has exchange streams");
        rounds.step(&mut self.parts, &streams, |_, slab, launch| {
            let signals = RoundSignals { flags: launch.flags, base: launch.base, sides: launch.sides };
            slab.engine.step_planes_signalled(slab.below..slab.below + slab.band.len, signals)
        })?;
        for part in &mut self.parts {
            part.engine.finish_planes();
        }
        Ok(())
    }

    fn step_halves(&mut self, turn: &mut Halves) -> Result<()> {
        let streams = self.exchange_streams.clone().expect("overlap has exchange streams");
        let (first, second) = (turn.first, turn.first.other());
        let mut seconds = Vec::with_capacity(self.parts.len());
        for (p, part) in self.parts.iter_mut().enumerate() {
            let (half, rest) = part.halves(first);
            let stream = part.engine.stream().clone();
            // The halo on the first side came during the last step's second half; a slab
            // too thin to halve is written at once and needs both.
            stream.wait(&turn.first_halo[p]).context(|| "ordering a half after its halo".into())?;
            if rest.is_empty() {
                stream.wait(&turn.second_halo[p]).context(|| "ordering a half after its halo".into())?;
            }
            part.engine.step_planes(half)?;
            turn.first_done[p].record(&stream).context(|| "recording a half".into())?;
            seconds.push(rest);
        }
        for ((p, part), rest) in self.parts.iter_mut().enumerate().zip(seconds) {
            let stream = part.engine.stream().clone();
            stream.wait(&turn.second_halo[p]).context(|| "ordering a half after its halo".into())?;
            part.engine.step_planes(rest)?;
            turn.second_done[p].record(&stream).context(|| "recording a half".into())?;
            part.engine.finish_planes();
        }
        // The next step writes its first half on this step's second side: that halo comes
        // from the neighbour there, whose facing edge was in its first half; then the halo
        // on this step's first side, from its neighbour's second half. Each exchange stream
        // also waits for its own slab's half, whose reads of the old halo must be done.
        self.pull_halos(&streams, second, &turn.first_done, &turn.first_halo)?;
        self.pull_halos(&streams, first, &turn.second_done, &turn.second_halo)?;
        turn.first = second;
        Ok(())
    }

    /// Every slab's halo on `side`, on its exchange stream in `streams`, after `written` (its
    /// own and the neighbours' halves that hold the planes); `arrived` is recorded after.
    fn pull_halos(
        &mut self,
        streams: &[Arc<CudaStream>],
        side: Side,
        written: &[CudaEvent],
        arrived: &[CudaEvent],
    ) -> Result<()> {
        let plane = self.plane() as u32;
        match &mut self.transport {
            Transport::Ranks { ranks, .. } => {
                let stream = &streams[0];
                stream.wait(&written[0]).context(|| "ordering an exchange after a half".into())?;
                ranks.exchange_side(&mut self.parts, side, stream, 1, plane)?;
                arrived[0].record(stream).context(|| "recording an exchange".into())?;
            }
            Transport::Peer(halos) => {
                for p in 0..self.parts.len() {
                    let stream = &streams[p];
                    stream.wait(&written[p]).context(|| "ordering an exchange after a half".into())?;
                    let neighbour = match side {
                        Side::Below => p.checked_sub(1),
                        Side::Above => (p + 1 < self.parts.len()).then_some(p + 1),
                    };
                    if let Some(q) = neighbour
                        && !Arc::ptr_eq(stream, &streams[q])
                    {
                        stream.wait(&written[q]).context(|| "ordering an exchange after a half".into())?;
                    }
                    if let Some(halo) = halos.halo(p, side).copied() {
                        halos.copy(&mut self.parts, &halo, stream, plane, 1)?;
                    }
                    arrived[p].record(stream).context(|| "recording an exchange".into())?;
                }
            }
        }
        Ok(())
    }

    /// Bytes one exchange copies (each inner boundary: both directions).
    pub fn exchange_bytes(&self) -> u64 {
        (self.bands.len() as u64).saturating_sub(1) * 2 * u64::from(HALO) * self.plane() as u64 * 4
    }
}

impl HeatEngine for PartedHeat {
    fn step(&mut self, steps: u32) -> Result<()> {
        // Watched like Gray-Scott's: a rank that stopped stalls this loop.
        let watch = self.watch("the halo exchange");
        for _ in 0..steps {
            self.step_once()?;
            if let Some(watch) = &watch {
                watch.progress();
            }
        }
        // With overlap the last halos are still travelling: whatever comes next (a frame, a
        // save, new values) sees the whole field.
        for (part, exchange) in self.parts.iter().zip(self.exchange_streams.iter().flatten()) {
            part.engine.stream().join(exchange).context(|| "joining the exchange".into())?;
        }
        Ok(())
    }

    /// Every slab's, assembled in this process or gathered to rank 0 ([`Transport::gather`]).
    fn field(&mut self) -> Result<Vec<f32>> {
        let stream = self.parts[0].engine.stream().clone();
        let rows: Vec<PartRows> = self.parts.iter().map(Slab::part_rows).collect();
        let plane = self.plane() as u32;
        Ok(self
            .transport
            .gather(&mut self.parts, &rows, Some(&stream), &[0], plane)?
            .pop()
            .expect("one field"))
    }

    /// Plane `z`: on rank 0 from the rank whose slab holds it ([`RankHalos::gather_row`]).
    fn slice(&mut self, z: u32) -> Result<Vec<f32>> {
        if let Transport::Ranks { ranks, .. } = &mut self.transport {
            let stream = self.parts[0].engine.stream().clone();
            let plane = self.n[0] * self.n[1];
            return ranks.gather_row(&mut self.parts, &stream, 0, z, plane);
        }
        let part = self
            .parts
            .iter_mut()
            .find(|p| (p.band.start..p.band.end()).contains(&z))
            .expect("z inside the grid");
        part.engine.slice(z - part.band.start + part.below)
    }

    fn set_field(&mut self, u: &[f32]) -> Result<()> {
        let plane = self.plane();
        for part in &mut self.parts {
            let (z0, z1) = ((part.band.start - part.below) as usize, (part.band.end() + part.above) as usize);
            part.engine.set_field(&u[z0 * plane..z1 * plane])?;
        }
        Ok(())
    }

    /// Waits for every stream of every slab: its steps, and exchanges queued on their own
    /// streams (a step joins them, an exchange alone does not).
    fn synchronize(&mut self) -> Result<()> {
        let _watch = self.watch("the halo exchange");
        for part in &mut self.parts {
            part.engine.synchronize()?;
        }
        for stream in self.exchange_streams.iter().flatten() {
            stream.synchronize().context(|| "waiting for a halo exchange".into())?;
        }
        Ok(())
    }

    fn is_root(&self) -> bool {
        PartedHeat::is_root(self)
    }

    fn describe(&self) -> String {
        let place = match &self.transport {
            Transport::Peer(halos) => {
                peer::describe(self.parts.iter().map(|p| p.engine.gpu_ordinal()), halos.how())
            }
            Transport::Ranks { ranks, .. } => match ranks.by_ipc() {
                true => {
                    format!("one per process, {}, {} processes", IpcHalos::describe(), ranks.comm().size())
                }
                false => match &self.ipc_refused {
                    Some(why) => format!(
                        "one per process over NCCL (not by CUDA IPC: {why}), {} processes",
                        ranks.comm().size()
                    ),
                    None => format!("one per process over NCCL, {} processes", ranks.comm().size()),
                },
            },
        };
        let place = if let Some(overlap) = &self.overlap {
            match overlap.scheme() {
                OverlapScheme::Halves => {
                    format!("{place}, exchange overlapped with the other half of each slab")
                }
                OverlapScheme::Edges => {
                    format!("{place}, edges first, exchange overlapped with each slab's middle")
                }
                OverlapScheme::Rounds => {
                    format!("{place}, exchange by rounds of tile columns during each slab's step")
                }
            }
        } else {
            place
        };
        format!(
            "cuda {} in {} z slabs of {}-{} planes (halo {HALO}) {place}",
            self.variant.name(),
            self.bands.len(),
            self.bands.iter().map(|b| b.len).min().unwrap_or(0),
            self.bands.iter().map(|b| b.len).max().unwrap_or(0),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edges_are_the_planes_a_neighbour_needs_and_the_middle_reads_no_halo() {
        // A middle slab of 100 planes: 4 + 92 + 4, the middle at least HALO planes from the
        // slab's ends, so its pipeline reads its own planes only.
        assert_eq!(edge_ranges(4, 100, 4), [4..8, 8..100, 100..104]);
        // The first and last slabs: no edge on the domain's face.
        assert_eq!(edge_ranges(0, 100, 4), [0..0, 0..96, 96..100]);
        assert_eq!(edge_ranges(4, 100, 0), [4..8, 8..104, 104..104]);
        // Too thin for a middle apart from its edges: written at once.
        assert_eq!(edge_ranges(4, 15, 4), [4..19, 19..19, 19..19]);
        assert_eq!(edge_ranges(4, 16, 4), [4..8, 8..16, 16..20]);
    }

    #[test]
    fn one_process_overlaps_by_rounds_ipc_by_halves_nccl_edges_first() {
        assert_eq!(OverlapScheme::for_transport(HaloPath::Nccl), OverlapScheme::Edges);
        assert_eq!(OverlapScheme::for_transport(HaloPath::Ipc), OverlapScheme::Halves);
        assert_eq!(OverlapScheme::for_transport(HaloPath::SharedGpu), OverlapScheme::Halves);
        assert_eq!(OverlapScheme::for_transport(HaloPath::OwnGpus), OverlapScheme::Rounds);
    }

    #[test]
    fn only_the_single_variant_over_several_gpus_overlaps_by_default() {
        assert!(overlap_by_default(HeatVariant::Single, 2));
        assert!(overlap_by_default(HeatVariant::Single, 4));
        // One GPU (one rank, or parts sharing it): nothing to hide.
        assert!(!overlap_by_default(HeatVariant::Single, 1));
        for variant in [HeatVariant::Naive, HeatVariant::Reuse, HeatVariant::Fused, HeatVariant::Tiled] {
            assert!(!overlap_by_default(variant, 4), "{}", variant.name());
        }
    }
}
