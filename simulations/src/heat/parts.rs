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
//! it writes its slab in two halves, the lower and the upper, in turns: lower first on even
//! steps, upper first on odd ones. The edge planes of the half written first travel (on the
//! slab's exchange stream) while the second half is written, and the edge of the second half
//! travels while the next step writes its first half, which is on the other side and needs the
//! halo that arrived during the second half. So both exchanges of a step hide behind a half
//! each, and a step costs one split of the pipeline (see `Overlap`). The other variants step
//! the whole slab, halos included, and exchange after the step. In one process the halos are
//! pulled by peer copies (copy engines with `overlap`) ordered by events between neighbours
//! ([`crate::split::peer`]); between processes through NCCL, or with `overlap`, where
//! every rank's neighbours share its host, by the copy engines through CUDA IPC
//! ([`crate::split::ipc`]): NCCL's kernel would need SMs that the halves hold.

use std::sync::Arc;

use cudarc::driver::{CudaEvent, CudaSlice, CudaStream};

use super::{HeatEngine, HeatSetup, HeatVariant, cuda::CudaHeat};
use crate::{
    cuda::Gpu,
    split::decomposition::{self, Band, Side},
    error::{CudaContext as _, Error, Result, human_bytes},
    split::ipc::IpcHalos,
    split::peer::{self, Neighbourhood, PeerCopy},
    memory,
    split::nccl::{Communicator, Transfer},
    split::Layout,
};

/// Planes of halo per side per RK4 step: one per stage.
pub const HALO: u32 = 4;

/// Multiprocessors an NCCL rank's halves leave free with `--overlap`, for NCCL's
/// send/receive kernel to run beside them (the single pass takes a whole SM per block, in
/// one wave: a block waiting for NCCL's to end would hold up the whole half); NCCL's kernels
/// are held to as many blocks (`NCCL_MAX_CTAS`, [`crate::split::nccl::Bootstrap::max_ctas`]).
pub const NCCL_FREE_SMS: u32 = 2;

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
            eprintln!("warning: {FREE_SMS_VAR}={text} is not 0 to 16 SMs: {NCCL_FREE_SMS} left free");
            NCCL_FREE_SMS
        }
    }
}

/// One slab, its halos and the engine that steps it.
struct Part {
    band: Band,
    below: u32,
    above: u32,
    engine: CudaHeat,
}

impl Part {
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
struct Overlap {
    first: Side,
    first_done: Vec<CudaEvent>,
    second_done: Vec<CudaEvent>,
    first_halo: Vec<CudaEvent>,
    second_halo: Vec<CudaEvent>,
}

impl Overlap {
    fn new(parts: &[Part]) -> Result<Self> {
        let events = || {
            parts
                .iter()
                .map(|p| {
                    p.engine.stream().context().new_event(None).context(|| "creating an overlap event".into())
                })
                .collect::<Result<Vec<_>>>()
        };
        Ok(Self {
            first: Side::Below,
            first_done: events()?,
            second_done: events()?,
            first_halo: events()?,
            second_halo: events()?,
        })
    }
}

/// How this process's slabs exchange halos.
enum Link {
    /// Every slab is here, with its neighbours (over the exchange streams with `overlap`);
    /// halos between GPUs travel as `PeerCopy` says.
    Local(Neighbourhood, PeerCopy),
    /// One slab here (`parts[0]`, slab number `rank`); NCCL to the neighbouring ranks.
    Nccl(Communicator),
}

/// Heat in slabs along z, on GPUs of this process or one slab per process.
pub struct PartedHeat {
    /// NCCL ranks with `overlap` whose neighbours share this host: the halos go by the copy
    /// engines instead of NCCL's kernel ([`IpcHalos`]). First, so that it is dropped first:
    /// freeing it waits for the exchanges, which need the parts and the communicator.
    ipc: Option<IpcHalos>,
    /// Why not, where they tried (for the description).
    ipc_refused: Option<String>,
    variant: HeatVariant,
    n: [u32; 3],
    /// Every slab of the run, in order (this process may hold only one).
    bands: Vec<Band>,
    parts: Vec<Part>,
    link: Link,
    /// With `overlap` (single only): each part's exchange stream, on which its halos travel
    /// while its other half is written.
    exchange_streams: Option<Vec<Arc<CudaStream>>>,
    /// With `overlap`: the events that order the halves and the exchanges, and the turn.
    overlap: Option<Overlap>,
    /// Rank 0's buffer for the slabs it gathers (allocated at the first gather).
    gathered: Option<CudaSlice<f32>>,
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
            memory::check_host(
                setup.n[0],
                setup.n[1] * local.n[2],
                4 * plane as u64 * u64::from(local.n[2]),
            )?;
            let start = super::initial_slab(setup, z0 as u32, z1 as u32);
            let engine = CudaHeat::new(gpus[g].clone(), variant, &local, &start)?;
            parts.push(Part { band: *band, below, above, engine });
        }
        let exchange_streams = if overlap {
            let fork = |p: &Part| p.engine.stream().fork().context(|| "creating an exchange stream".into());
            Some(parts.iter().map(fork).collect::<Result<Vec<_>>>()?)
        } else {
            None
        };
        let (mut ipc, mut ipc_refused) = (None, None);
        let link = match layout {
            Layout::Local { .. } => {
                let used = placement.last().map_or(1, |g| g + 1);
                // Beside a half that fills every SM, halos go by the copy engines, which
                // take none (a reading kernel would wait for the half to end).
                let preferred = if overlap { PeerCopy::Engine } else { PeerCopy::Read };
                let how = peer::enable_peer_access_all(&gpus[..used], preferred)?;
                let streams = match &exchange_streams {
                    Some(streams) => streams.clone(),
                    None => parts.iter().map(|p| p.engine.stream().clone()).collect(),
                };
                Link::Local(Neighbourhood::new(streams, false)?, how)
            }
            Layout::Ranks(comm) => {
                if overlap {
                    // Halos by the copy engines where every rank can (they take no SM);
                    // else NCCL's kernel, beside halves that leave it a few SMs.
                    let (below, above) = decomposition::neighbours(comm.rank(), bands.len(), false);
                    match IpcHalos::connect(&comm, below, above, HALO as usize * plane * 4)? {
                        Ok(halos) => ipc = Some(halos),
                        Err(why) => {
                            parts[0].engine.leave_sms_free(nccl_free_sms())?;
                            ipc_refused = Some(why);
                        }
                    }
                }
                Link::Nccl(comm)
            }
        };
        let overlap = match &exchange_streams {
            Some(_) => Some(Overlap::new(&parts)?),
            None => None,
        };
        Ok(Self {
            variant,
            n: setup.n,
            bands,
            parts,
            link,
            exchange_streams,
            overlap,
            gathered: None,
            ipc,
            ipc_refused,
        })
    }

    /// Whether this process writes the outputs (rank 0, or the only process).
    pub fn is_root(&self) -> bool {
        match &self.link {
            Link::Local(..) => true,
            Link::Nccl(comm) => comm.is_root(),
        }
    }

    /// The watch over a wait on other ranks, with NCCL.
    fn watch(&self, what: &str) -> Option<crate::split::nccl::Watch> {
        match &self.link {
            Link::Nccl(comm) => Some(comm.watch(what)),
            Link::Local(..) => None,
        }
    }

    /// One NCCL exchange of this rank's halos with the ranks below and above (none beyond
    /// the domain's faces), in one group, on `stream`.
    fn exchange_nccl(
        comm: &Communicator,
        part: &Part,
        slabs: usize,
        plane: usize,
        stream: &Arc<CudaStream>,
    ) -> Result<()> {
        let mut transfers = halo_transfers(comm, part, slabs, plane, stream, Side::Below);
        transfers.extend(halo_transfers(comm, part, slabs, plane, stream, Side::Above));
        comm.exchange(stream, &transfers)
    }

    /// Rank 0: the whole field, its slab and every other rank's gathered; other ranks send
    /// their slab (from plane `from` of the slab, `count` planes) and get an empty field.
    fn gather(&mut self) -> Result<Vec<f32>> {
        let plane = self.plane();
        let Link::Nccl(comm) = &self.link else { unreachable!("gathering is for NCCL ranks") };
        let _watch = comm.watch("gathering the field on rank 0");
        let part = &mut self.parts[0];
        let stream = part.engine.stream().clone();
        if !comm.is_root() {
            let send = Transfer::rows(
                part.engine.state(),
                &stream,
                part.below as usize,
                part.band.len as usize,
                plane,
                0,
                true,
            );
            comm.exchange(&stream, &[send])?;
            stream.synchronize().context(|| "sending this rank's slab to rank 0".into())?;
            return Ok(Vec::new());
        }
        let mut u = vec![0.0; plane * self.n[2] as usize];
        let local = part.engine.field()?;
        let (start, len) = (part.band.start as usize * plane, part.band.len as usize * plane);
        let skip = part.below as usize * plane;
        u[start..start + len].copy_from_slice(&local[skip..skip + len]);
        let most = self.bands.iter().map(|b| b.len as usize).max().unwrap_or(0) * plane;
        if self.gathered.as_ref().is_none_or(|b| b.len() < most) {
            // (A slice gathered earlier may have left a buffer of one plane.)
            self.gathered =
                Some(stream.alloc_zeros::<f32>(most).context(|| "allocating the gather buffer".into())?);
        }
        let buffer = self.gathered.as_mut().expect("allocated above");
        for (r, band) in self.bands.iter().enumerate().skip(1) {
            let len = band.len as usize * plane;
            comm.exchange(
                &stream,
                &[Transfer::rows(buffer, &stream, 0, band.len as usize, plane, r, false)],
            )?;
            let start = band.start as usize * plane;
            stream
                .memcpy_dtoh(&buffer.slice(0..len), &mut u[start..start + len])
                .context(|| "gathering u".into())?;
            stream.synchronize().context(|| "gathering the field".into())?;
        }
        Ok(u)
    }

    /// Plane `z` on rank 0, sent by the rank whose slab holds it; other ranks get an empty
    /// plane.
    fn gather_slice(&mut self, z: u32) -> Result<Vec<f32>> {
        let plane = self.plane();
        let owner =
            self.bands.iter().position(|b| (b.start..b.end()).contains(&z)).expect("z inside the grid");
        let Link::Nccl(comm) = &self.link else { unreachable!("gathering is for NCCL ranks") };
        let _watch = comm.watch("gathering a slice on rank 0");
        let part = &mut self.parts[0];
        let (rank, root) = (comm.rank(), comm.is_root());
        let local_z = |part: &Part| z - part.band.start + part.below;
        if owner == rank {
            if root {
                return part.engine.slice(local_z(part));
            }
            let stream = part.engine.stream().clone();
            let send =
                Transfer::rows(part.engine.state(), &stream, local_z(part) as usize, 1, plane, 0, true);
            comm.exchange(&stream, &[send])?;
            stream.synchronize().context(|| "sending a slice to rank 0".into())?;
            return Ok(Vec::new());
        }
        if !root {
            return Ok(Vec::new());
        }
        let stream = part.engine.stream().clone();
        if self.gathered.as_ref().is_none_or(|b| b.len() < plane) {
            self.gathered =
                Some(stream.alloc_zeros::<f32>(plane).context(|| "allocating the gather buffer".into())?);
        }
        let buffer = self.gathered.as_mut().expect("allocated above");
        comm.exchange(&stream, &[Transfer::rows(buffer, &stream, 0, 1, plane, owner, false)])?;
        let mut out = vec![0.0; plane];
        stream.memcpy_dtoh(&buffer.slice(0..plane), &mut out).context(|| "gathering a slice".into())?;
        stream.synchronize().context(|| "gathering a slice".into())?;
        Ok(out)
    }

    fn plane(&self) -> usize {
        self.n[0] as usize * self.n[1] as usize
    }

    /// Refreshes every slab's halos from its neighbours' slabs: 2 transfers of [`HALO`]
    /// planes per inner boundary, on the parts' streams (their exchange streams with
    /// `overlap`, which the caller orders).
    pub fn exchange(&mut self) -> Result<()> {
        let plane = self.plane();
        let stream_of = |p: usize, parts: &[Part]| match &self.exchange_streams {
            Some(streams) => streams[p].clone(),
            None => parts[p].engine.stream().clone(),
        };
        let (hood, how) = match &self.link {
            Link::Local(hood, how) => (hood, *how),
            Link::Nccl(comm) => {
                let stream = stream_of(0, &self.parts);
                let slabs = self.bands.len();
                let Some(ipc) = self.ipc.as_mut() else {
                    return Self::exchange_nccl(comm, &self.parts[0], slabs, plane, &stream);
                };
                for side in [Side::Below, Side::Above] {
                    ipc.exchange(
                        &stream,
                        side,
                        &halo_transfers(comm, &self.parts[0], slabs, plane, &stream, side),
                    )?;
                }
                return Ok(());
            }
        };
        hood.before_pulls()?;
        for p in 0..self.parts.len() {
            let stream = stream_of(p, &self.parts);
            for side in [Side::Below, Side::Above] {
                pull_halo(&mut self.parts, how, &stream, p, side, plane)?;
            }
        }
        hood.after_pulls()
    }

    /// `steps` RK4 steps of every slab with no exchange: the computation alone, for the bench
    /// (the halos go stale, so the field is no longer the simulation's).
    pub fn compute_only(&mut self, steps: u32) -> Result<()> {
        (0..steps).try_for_each(|_| self.step_slabs())
    }

    /// One RK4 step of every slab, no exchange: `single` writes each slab's own planes, the
    /// other variants the whole slab.
    fn step_slabs(&mut self) -> Result<()> {
        for part in &mut self.parts {
            if self.variant == HeatVariant::Single {
                part.engine.step_planes(part.below..part.below + part.band.len)?;
                part.engine.finish_planes();
            } else {
                part.engine.step(1)?;
            }
        }
        Ok(())
    }

    /// Gives up the parts, keeping this rank's communicator (for another run on it).
    pub fn into_communicator(mut self) -> Option<Communicator> {
        // The copy engines' buffers go first: freeing them waits for the neighbours' last
        // flags, not for the communicator.
        self.ipc = None;
        match self.link {
            Link::Nccl(comm) => Some(comm),
            Link::Local(..) => None,
        }
    }

    /// This rank's communicator, where the slabs are NCCL ranks.
    pub fn communicator(&self) -> Option<&Communicator> {
        match &self.link {
            Link::Nccl(comm) => Some(comm),
            Link::Local(..) => None,
        }
    }

    /// One RK4 step of every slab and the exchange after it (see the module documentation).
    fn step_once(&mut self) -> Result<()> {
        if self.overlap.is_some() {
            return self.step_overlapped();
        }
        self.step_slabs()?;
        self.exchange()
    }

    /// One RK4 step with the exchange hidden behind the halves (see [`Overlap`]).
    fn step_overlapped(&mut self) -> Result<()> {
        let mut turn = self.overlap.take().expect("called with overlap");
        let result = self.step_halves(&mut turn);
        self.overlap = Some(turn);
        result
    }

    fn step_halves(&mut self, turn: &mut Overlap) -> Result<()> {
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
        let plane = self.plane();
        let slabs = self.bands.len();
        match &self.link {
            Link::Nccl(comm) => {
                let stream = &streams[0];
                stream.wait(&written[0]).context(|| "ordering an exchange after a half".into())?;
                let transfers = halo_transfers(comm, &self.parts[0], slabs, plane, stream, side);
                match self.ipc.as_mut() {
                    Some(ipc) => ipc.exchange(stream, side, &transfers)?,
                    None => comm.exchange(stream, &transfers)?,
                }
                arrived[0].record(stream).context(|| "recording an exchange".into())?;
            }
            Link::Local(_, how) => {
                let how = *how;
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
                    pull_halo(&mut self.parts, how, stream, p, side, plane)?;
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

/// Part `p`'s halo on `side` ← its neighbour's own planes next to it (nothing at the
/// domain's faces), on `stream` (part `p`'s), `how` between GPUs.
fn pull_halo(
    parts: &mut [Part],
    how: PeerCopy,
    stream: &CudaStream,
    p: usize,
    side: Side,
    plane: usize,
) -> Result<()> {
    let h = HALO as usize;
    let q = match side {
        Side::Below if p > 0 => p - 1,
        Side::Above if p + 1 < parts.len() => p + 1,
        _ => return Ok(()),
    };
    let (src, dst) = if q < p {
        let (a, b) = parts.split_at_mut(p);
        (&a[q], &mut b[0])
    } else {
        let (a, b) = parts.split_at_mut(q);
        (&b[0], &mut a[p])
    };
    let (from, to) = match side {
        // The halo below ← the slab below's last own planes.
        Side::Below => ((src.below + src.band.len) as usize - h, 0),
        // The halo above ← the slab above's first own planes.
        Side::Above => (src.below as usize, (dst.below + dst.band.len) as usize),
    };
    copy_planes(how, stream, &src.engine, from, &mut dst.engine, to, h, plane)
}

/// An NCCL rank's transfers for its halo on `side` (from the neighbouring rank there) and its
/// own edge on the other side (to the neighbour there), on `stream`; none beyond the faces.
fn halo_transfers(
    comm: &Communicator,
    part: &Part,
    slabs: usize,
    plane: usize,
    stream: &Arc<CudaStream>,
    side: Side,
) -> Vec<Transfer> {
    let h = HALO as usize;
    let (below, above) = decomposition::neighbours(comm.rank(), slabs, false);
    let u = part.engine.state();
    let planes = |at, peer, send| Transfer::rows(u, stream, at, h, plane, peer, send);
    let top = (part.below + part.band.len) as usize;
    let (send, receive) = match side {
        Side::Below => {
            (above.map(|peer| planes(top - h, peer, true)), below.map(|peer| planes(0, peer, false)))
        }
        Side::Above => (
            below.map(|peer| planes(part.below as usize, peer, true)),
            above.map(|peer| planes(top, peer, false)),
        ),
    };
    send.into_iter().chain(receive).collect()
}

/// Copies `count` planes of `src` (from plane `from`) into `dst` (at plane `to`), on
/// `stream` (the receiving slab's), `how` between GPUs.
#[allow(clippy::too_many_arguments)]
fn copy_planes(
    how: PeerCopy,
    stream: &CudaStream,
    src: &CudaHeat,
    from: usize,
    dst: &mut CudaHeat,
    to: usize,
    count: usize,
    plane: usize,
) -> Result<()> {
    let gpu = dst.gpu().clone();
    peer::copy(
        how,
        Some(&gpu),
        stream,
        src.state(),
        from * plane,
        dst.state_mut(),
        to * plane,
        count * plane,
    )
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

    fn field(&mut self) -> Result<Vec<f32>> {
        if matches!(self.link, Link::Nccl(_)) {
            return self.gather();
        }
        let plane = self.plane();
        let mut u = vec![0.0; plane * self.n[2] as usize];
        for part in &mut self.parts {
            let local = part.engine.field()?;
            let (start, len) = (part.band.start as usize * plane, part.band.len as usize * plane);
            let skip = part.below as usize * plane;
            u[start..start + len].copy_from_slice(&local[skip..skip + len]);
        }
        Ok(u)
    }

    fn slice(&mut self, z: u32) -> Result<Vec<f32>> {
        if matches!(self.link, Link::Nccl(_)) {
            return self.gather_slice(z);
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
        let place = match &self.link {
            Link::Local(_, how) => {
                peer::describe(self.parts.iter().map(|p| p.engine.gpu_ordinal()), *how)
            }
            Link::Nccl(comm) => match &self.ipc {
                Some(_) => format!("one per process, {}, {} processes", IpcHalos::describe(), comm.size()),
                None => match &self.ipc_refused {
                    Some(why) => format!(
                        "one per process over NCCL (not by CUDA IPC: {why}), {} processes",
                        comm.size()
                    ),
                    None => format!("one per process over NCCL, {} processes", comm.size()),
                },
            },
        };
        let place = if self.exchange_streams.is_some() {
            format!("{place}, exchange overlapped with the other half of each slab")
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
