//! Heat's overlap hook ([`HeatOverlap`], `--overlap`, single only): the exchange of a step
//! hidden behind the slabs' own writes, one of three ways ([`OverlapScheme`]).
//!
//! `single` writes a slab's own planes only (its halos come from the exchange). With a GPU per
//! slab in one process it writes the slab in one launch while the copy engines send its edge
//! rows round by round of tile columns, each round waiting in the kernel for the halo rows it
//! reads (the split's [`Rounds`]). Elsewhere (CUDA IPC, slabs sharing a GPU) it writes its
//! slab in two halves, the lower and the upper, in turns: lower first on even steps, upper
//! first on odd ones. The edge planes of the half written first travel (on the slab's
//! exchange stream) while the second half is written, and the edge of the second half travels
//! while the next step writes its first half, which is on the other side and needs the halo
//! that arrived during the second half. So both exchanges of a step hide behind a half each,
//! and a step costs one split of the pipeline (see `Halves`). Between processes over NCCL,
//! where a link may be slower than a half of a step needs (a network between hosts), the slab
//! is written edges first instead (see `Edges`): the planes its neighbours need, then its
//! middle, while both edges travel, so the exchange hides behind nearly the whole step for two
//! more pipeline starts. The split gives each slab its exchange stream and builds its
//! transport on them (the copy engines between GPUs; between processes CUDA IPC where every
//! rank's neighbours share its host, else NCCL, beside halves that leave NCCL's kernel a few
//! SMs).

use std::sync::Arc;

use cudarc::driver::{CudaEvent, CudaStream};
use kernels::heat::{RoundSignals, SINGLE_OUT_W, rows_written_after_round};

use super::{
    HeatVariant,
    cuda::March,
    slab::{HALO, Slab},
};
use crate::{
    error::{CudaContext as _, Error, Result},
    split::{
        DeviceRows, HaloPath, Overlap, PartRows,
        decomposition::Side,
        rounds::{RoundPart, RoundSchedule, Rounds},
        transport::Transport,
    },
};

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
        .map(|p| {
            p.cuda_ref().stream().context().new_event(None).context(|| "creating an overlap event".into())
        })
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
            let march: March = part.cuda_ref().march(part.rows.band.len);
            let mut done: Vec<u32> = (0..march.columns_per_block)
                .map(|round| rows_written_after_round(round, march.blocks, tiles_x, ny))
                .collect();
            done.push(ny);
            RoundSchedule { blocks: march.blocks, done }
        })
        .collect();
    let rows: Vec<PartRows> = parts.iter().map(|part| part.rows).collect();
    Rounds::new(parts, &rows, schedules, ny, nx as usize)
}

impl RoundPart for Slab {
    fn written_rows(&mut self) -> DeviceRows<'_> {
        self.cuda().written_rows()
    }
}

/// The events of `--overlap`'s scheme and its turn.
enum Turn {
    Halves(Halves),
    Edges(Edges),
    Rounds(Rounds),
}

/// Heat's overlap hook: the scheme's events (or rounds), and each slab's exchange stream.
pub struct HeatOverlap {
    turn: Turn,
    streams: Vec<Arc<CudaStream>>,
    /// The cells of a plane (a row, to the split).
    plane: u32,
}

impl HeatOverlap {
    /// The scheme for halos that travel by `path` ([`OverlapScheme::chosen`]) over `parts`
    /// (planes of `nx × ny`), each slab's halos on its stream of `streams`. Between processes
    /// over NCCL, the slabs leave NCCL's kernel [`NCCL_FREE_SMS`] multiprocessors.
    pub fn new(
        parts: &mut [Slab],
        streams: &[Arc<CudaStream>],
        path: HaloPath,
        nx: u32,
        ny: u32,
    ) -> Result<Self> {
        if path == HaloPath::Nccl {
            for part in parts.iter_mut() {
                part.cuda().leave_sms_free(nccl_free_sms())?;
            }
        }
        let turn = match OverlapScheme::chosen(path)? {
            OverlapScheme::Halves => Turn::Halves(Halves::new(parts)?),
            OverlapScheme::Edges => {
                Turn::Edges(Edges { edges_done: overlap_events(parts)?, halos: overlap_events(parts)? })
            }
            OverlapScheme::Rounds => Turn::Rounds(round_exchange(parts, nx, ny)?),
        };
        Ok(Self { turn, streams: streams.to_vec(), plane: nx * ny })
    }

    fn scheme(&self) -> OverlapScheme {
        match self.turn {
            Turn::Halves(_) => OverlapScheme::Halves,
            Turn::Edges(_) => OverlapScheme::Edges,
            Turn::Rounds(_) => OverlapScheme::Rounds,
        }
    }
}

impl Overlap<Slab> for HeatOverlap {
    /// One RK4 step (the split's steps per exchange) with the exchange hidden behind the
    /// halves, the middle or the rounds.
    fn round(&mut self, parts: &mut [Slab], transport: &mut Transport, steps: u32) -> Result<()> {
        for _ in 0..steps {
            match &mut self.turn {
                Turn::Halves(halves) => step_halves(parts, transport, &self.streams, halves, self.plane)?,
                Turn::Edges(edges) => step_edges(parts, transport, &self.streams, edges, self.plane)?,
                Turn::Rounds(rounds) => step_rounds(parts, &self.streams, rounds)?,
            }
        }
        Ok(())
    }

    /// The last halos are still travelling: whatever comes next (a frame, a save, new values)
    /// sees the whole field.
    fn settle(&mut self, parts: &mut [Slab]) -> Result<()> {
        for (part, exchange) in parts.iter().zip(&self.streams) {
            part.cuda_ref().stream().join(exchange).context(|| "joining the exchange".into())?;
        }
        Ok(())
    }

    fn synchronize(&mut self) -> Result<()> {
        for stream in &self.streams {
            stream.synchronize().context(|| "waiting for a halo exchange".into())?;
        }
        Ok(())
    }

    fn describe(&self) -> String {
        match self.scheme() {
            OverlapScheme::Halves => "exchange overlapped with the other half of each slab",
            OverlapScheme::Edges => "edges first, exchange overlapped with each slab's middle",
            OverlapScheme::Rounds => "exchange by rounds of tile columns during each slab's step",
        }
        .into()
    }
}

/// The planes written first, on `side`, and the rest: the slab's two halves, or all of it and
/// nothing where a half would be thinner than the halo (its pipeline would then read the far
/// halo too).
fn halves(slab: &Slab, side: Side) -> (std::ops::Range<u32>, std::ops::Range<u32>) {
    let (lo, hi) = (slab.rows.halo_before, slab.rows.halo_before + slab.rows.band.len);
    if slab.rows.band.len < 2 * HALO {
        return (lo..hi, hi..hi);
    }
    let mid = lo + slab.rows.band.len / 2;
    match side {
        Side::Below => (lo..mid, mid..hi),
        Side::Above => (mid..hi, lo..mid),
    }
}

/// The planes written first (the `HALO` planes at each end that has a neighbour), and the
/// middle written while they travel: `[below, middle, above]`, of a slab of `len` own planes
/// after `below` halo planes, with `above` halo planes after them (0 at the domain's faces). A
/// slab too thin to have a middle apart from its edges is written at once (its middle's
/// pipeline would read the halos).
fn edge_ranges(below: u32, len: u32, above: u32) -> [std::ops::Range<u32>; 3] {
    let (lo, hi) = (below, below + len);
    let lower = if below > 0 { HALO } else { 0 };
    let upper = if above > 0 { HALO } else { 0 };
    if len < lower + upper + 2 * HALO {
        return [lo..hi, hi..hi, hi..hi];
    }
    [lo..lo + lower, lo + lower..hi - upper, hi - upper..hi]
}

fn step_edges(
    parts: &mut [Slab],
    transport: &mut Transport,
    streams: &[Arc<CudaStream>],
    turn: &Edges,
    plane: u32,
) -> Result<()> {
    for (p, part) in parts.iter_mut().enumerate() {
        let stream = part.cuda().stream().clone();
        stream.wait(&turn.halos[p]).context(|| "ordering the edges after their halos".into())?;
        let [below, middle, above] =
            edge_ranges(part.rows.halo_before, part.rows.band.len, part.rows.halo_after);
        for edge in [below, above].into_iter().filter(|r| !r.is_empty()) {
            part.cuda().step_planes(edge)?;
        }
        turn.edges_done[p].record(&stream).context(|| "recording the edges".into())?;
        if !middle.is_empty() {
            part.cuda().step_planes(middle)?;
        }
        part.cuda().finish_planes();
    }
    for (stream, done) in streams.iter().zip(&turn.edges_done) {
        stream.wait(done).context(|| "ordering an exchange after the edges".into())?;
    }
    transport.exchange(parts, Some(&streams[0]), 1, plane)?;
    for (stream, halos) in streams.iter().zip(&turn.halos) {
        halos.record(stream).context(|| "recording an exchange".into())?;
    }
    Ok(())
}

/// One launch of every slab, its halos sent round by round ([`Rounds`]).
fn step_rounds(parts: &mut [Slab], streams: &[Arc<CudaStream>], rounds: &mut Rounds) -> Result<()> {
    rounds.step(parts, streams, |_, slab, launch| {
        let signals = RoundSignals { flags: launch.flags, base: launch.base, sides: launch.sides };
        let own = slab.rows.halo_before..slab.rows.halo_before + slab.rows.band.len;
        slab.cuda().step_planes_signalled(own, signals)
    })?;
    for part in parts.iter_mut() {
        part.cuda().finish_planes();
    }
    Ok(())
}

fn step_halves(
    parts: &mut [Slab],
    transport: &mut Transport,
    streams: &[Arc<CudaStream>],
    turn: &mut Halves,
    plane: u32,
) -> Result<()> {
    let (first, second) = (turn.first, turn.first.other());
    let mut seconds = Vec::with_capacity(parts.len());
    for (p, part) in parts.iter_mut().enumerate() {
        let (half, rest) = halves(part, first);
        let stream = part.cuda().stream().clone();
        // The halo on the first side came during the last step's second half; a slab too thin
        // to halve is written at once and needs both.
        stream.wait(&turn.first_halo[p]).context(|| "ordering a half after its halo".into())?;
        if rest.is_empty() {
            stream.wait(&turn.second_halo[p]).context(|| "ordering a half after its halo".into())?;
        }
        part.cuda().step_planes(half)?;
        turn.first_done[p].record(&stream).context(|| "recording a half".into())?;
        seconds.push(rest);
    }
    for ((p, part), rest) in parts.iter_mut().enumerate().zip(seconds) {
        let stream = part.cuda().stream().clone();
        stream.wait(&turn.second_halo[p]).context(|| "ordering a half after its halo".into())?;
        part.cuda().step_planes(rest)?;
        turn.second_done[p].record(&stream).context(|| "recording a half".into())?;
        part.cuda().finish_planes();
    }
    // The next step writes its first half on this step's second side: that halo comes from
    // the neighbour there, whose facing edge was in its first half; then the halo on this
    // step's first side, from its neighbour's second half. Each exchange stream also waits
    // for its own slab's half, whose reads of the old halo must be done.
    transport.exchange_side(parts, second, streams, &turn.first_done, &turn.first_halo, 1, plane)?;
    transport.exchange_side(parts, first, streams, &turn.second_done, &turn.second_halo, 1, plane)?;
    turn.first = second;
    Ok(())
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
