//! The halos between the parts of one process, device to device: the one peer-access policy
//! ([`LocalHalos::new`]) and the one device exchange of every split ([`LocalHalos::exchange`]).
//!
//! **Peer access** is enabled, both ways, between the GPUs of every halo copied between two
//! (each pair of GPUs once, [`ptxkit_host::enable_peer_access`]: their contexts and their
//! memory pools); a pair that cannot have it is noted ([`LocalHalos::staged`]): the driver
//! stages its copies through host memory. Between GPUs with peer access a kernel on the
//! receiving GPU reads the neighbour's rows directly ([`kernels::halo::halo_copy`],
//! [`PeerCopy::Read`]) where the model prefers it and its parts name their GPU
//! ([`Part::gpu`]); otherwise (or with `RUST_GPU_SIM_PEER_COPY=engine`, or where a pair
//! has no peer access) the copy engines move them (`cuMemcpyPeerAsync`). Within one GPU:
//! device copies. (Peer writes by the sending GPU, and pulls from the two neighbours on two
//! streams, were measured no faster on 4 H200s and are gone: docs/multi-gpu.md.)
//!
//! **Ordering** uses events between neighbours only: each part's stream records `stepped`
//! once its steps are queued, and its halo copies (queued on its stream, the receiving part's)
//! wait for its neighbours' `stepped`; then `copied`, and each part's next steps wait for its
//! neighbours' `copied` (they read the band it would overwrite). Parts on one stream need no
//! wait ([`LocalHalos::unordered`]: pieces of one stream, no event at all).
//! No part waits for parts that are not its neighbours, and the host never waits: it queues
//! every part's work and goes on.

use std::sync::Arc;

use cudarc::driver::{CudaEvent, CudaSlice, CudaStream, DevicePtr, result};

use super::part::{DeviceRows, PeerCopy};
use super::{
    decomposition::Side,
    part::{Halo, Part},
};
use crate::{
    cuda::{Gpu, grid_1d},
    error::{CudaContext as _, Error, Result},
};

/// Set to `engine` to move halos between GPUs with the copy engines even where a kernel
/// could read them through peer access, or `read` for peer reads (to compare the two); unset:
/// the model's preference (peer reads for Gray-Scott and heat, but copy engines for heat's
/// `--overlap`, whose halos travel beside a kernel that fills every SM).
pub const PEER_COPY_VAR: &str = "RUST_GPU_SIM_PEER_COPY";

/// Where the parts of one process are, for descriptions: `on 1 GPU`, or `on N GPUs, halos by
/// ...`, from the GPU ordinals of the parts.
pub fn describe(ordinals: impl IntoIterator<Item = usize>, how: PeerCopy) -> String {
    let mut ordinals: Vec<usize> = ordinals.into_iter().collect();
    ordinals.sort_unstable();
    ordinals.dedup();
    match ordinals.len() {
        1 => "on 1 GPU".into(),
        n => format!("on {n} GPUs, halos by {}", how.name()),
    }
}

/// The halos copied device to device between the parts of one process, the streams they are
/// copied on and the events that order them (see the module's doc).
pub struct LocalHalos {
    /// Every halo copied device to device, in the order they are queued.
    halos: Vec<Halo>,
    /// Per part: the stream its halos are copied on (its own, or an exchange stream of its),
    /// `None` for a part that offers no device memory.
    streams: Vec<Option<Arc<CudaStream>>>,
    /// Per part: its `stepped` and `copied` events; `None` for a part not on a GPU, and for
    /// every part of [`LocalHalos::unordered`].
    events: Vec<Option<[CudaEvent; 2]>>,
    /// Per part: the other parts it takes halos from, on other streams (sorted).
    neighbours: Vec<Vec<usize>>,
    how: PeerCopy,
    staged: Vec<(usize, usize)>,
}

impl LocalHalos {
    /// The device halos `halos` of parts whose halos are copied on `streams` (`None` where a
    /// part offers no device memory), peer access enabled between the GPUs they cross (see
    /// the module's doc). Halos between GPUs go as `preferred` says unless [`PEER_COPY_VAR`]
    /// says otherwise (peer reads only where every pair has peer access and `readers`: every
    /// receiving part names its GPU). Refuses a [`PEER_COPY_VAR`] other than `read` or
    /// `engine`.
    pub fn new(
        streams: Vec<Option<Arc<CudaStream>>>,
        halos: Vec<Halo>,
        preferred: PeerCopy,
        readers: bool,
    ) -> Result<Self> {
        let staged = enable_peer_access(&streams, &halos)?;
        let asked = std::env::var(PEER_COPY_VAR).unwrap_or_default();
        let engine = match asked.as_str() {
            "" => preferred == PeerCopy::Engine,
            "read" => false,
            "engine" => true,
            other => {
                return Err(Error::InvalidInput(format!(
                    "{PEER_COPY_VAR}={other:?}: the halo copies between GPUs are `read` (the default) or `engine`"
                )));
            }
        };
        let how = if staged.is_empty() && !engine && readers { PeerCopy::Read } else { PeerCopy::Engine };
        let mut neighbours: Vec<Vec<usize>> = vec![Vec::new(); streams.len()];
        for halo in &halos {
            if halo.from != halo.to && !neighbours[halo.to].contains(&halo.from) {
                neighbours[halo.to].push(halo.from);
            }
        }
        neighbours.iter_mut().for_each(|list| list.sort_unstable());
        let events = streams
            .iter()
            .map(|stream| match stream {
                Some(stream) => {
                    let event =
                        || stream.context().new_event(None).context(|| "creating an exchange event".into());
                    Ok(Some([event()?, event()?]))
                }
                _ => Ok(None),
            })
            .collect::<Result<_>>()?;
        Ok(Self { halos, streams, events, neighbours, how, staged })
    }

    /// The halos between parts on one stream, unordered: copies on that stream, no event and
    /// no peer access (Gray-Scott's pieces of an NCCL rank's band).
    pub fn unordered(stream: &Arc<CudaStream>, parts: usize, halos: Vec<Halo>) -> Self {
        Self {
            halos,
            streams: vec![Some(stream.clone()); parts],
            events: (0..parts).map(|_| None).collect(),
            neighbours: vec![Vec::new(); parts],
            how: PeerCopy::Engine,
            staged: Vec::new(),
        }
    }

    /// How halos travel between two GPUs.
    pub fn how(&self) -> PeerCopy {
        self.how
    }

    /// The GPUs (ordinals, lower first) between which halos are copied but which cannot reach
    /// each other: the driver stages those copies through host memory.
    pub fn staged(&self) -> &[(usize, usize)] {
        &self.staged
    }

    /// The halos copied, in order.
    pub fn halos(&self) -> &[Halo] {
        &self.halos
    }

    /// Refreshes every halo: [`LocalHalos::before`], every copy on the receiving part's
    /// stream, [`LocalHalos::after`] (even after a failed copy: no part may overwrite a band
    /// a queued copy reads).
    pub fn exchange<P: Part>(&self, parts: &mut [P], width: u32, fields: usize) -> Result<()> {
        self.before()?;
        let copied = self.halos.iter().try_for_each(|halo| {
            let stream = self.stream(halo.to)?.clone();
            self.copy(parts, halo, &stream, width, fields)
        });
        self.after()?;
        copied
    }

    /// Call once every part's steps are queued, before the copies: records each part's
    /// `stepped` event, and makes each part's stream wait for its neighbours'.
    pub fn before(&self) -> Result<()> {
        self.record_and_wait(0)
    }

    /// Call once every copy is queued: records each part's `copied` event, and makes each
    /// part's stream wait for its neighbours' (their copies read its band). Every record and
    /// wait is tried even after one fails (the first error is returned): a sender left
    /// unordered could overwrite a band a queued copy still reads.
    pub fn after(&self) -> Result<()> {
        self.record_and_wait(1)
    }

    fn record_and_wait(&self, which: usize) -> Result<()> {
        let mut first_error = None;
        let mut keep = |result: Result<()>| {
            if let Err(e) = result {
                first_error.get_or_insert(e);
            }
        };
        for (events, stream) in self.events.iter().zip(&self.streams) {
            if let (Some(events), Some(stream)) = (events, stream) {
                keep(events[which].record(stream).context(|| "recording an exchange event".into()));
            }
        }
        for (p, stream) in self.streams.iter().enumerate() {
            let Some(stream) = stream else { continue };
            for &q in &self.neighbours[p] {
                if let (Some(other), Some(events)) = (&self.streams[q], &self.events[q])
                    && stream.cu_stream() != other.cu_stream()
                {
                    keep(stream.wait(&events[which]).context(|| "ordering an exchange".into()));
                }
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Part `p`'s halo on `side` (before it: [`Side::Below`]), if it has one.
    pub fn halo(&self, p: usize, side: Side) -> Option<&Halo> {
        let before = side == Side::Below;
        self.halos.iter().find(|h| h.to == p && (h.to_row == 0) == before)
    }

    /// Queues the copy of `halo` (every field) on `stream` (the receiving part's, or an
    /// exchange stream of it), ordered by the caller.
    pub fn copy<P: Part>(
        &self,
        parts: &mut [P],
        halo: &Halo,
        stream: &CudaStream,
        width: u32,
        fields: usize,
    ) -> Result<()> {
        let width = width as usize;
        let (to, from) = two_parts(parts, halo.to, halo.from)?;
        let gpu = to.gpu().cloned();
        for field in 0..fields {
            let source = offered(from.device_rows(field), halo.from, field)?;
            let target = offered(to.device_rows(field), halo.to, field)?;
            let at = |row: u32| row as usize * width;
            copy(
                self.how,
                gpu.as_deref(),
                stream,
                source.values,
                at(halo.from_row),
                target.values,
                at(halo.to_row),
                at(halo.rows),
            )?;
        }
        Ok(())
    }

    fn stream(&self, p: usize) -> Result<&Arc<CudaStream>> {
        self.streams[p].as_ref().ok_or_else(|| {
            Error::InvalidInput(format!(
                "part {p} has its halos copied on the GPU but offers no device memory"
            ))
        })
    }
}

/// Enables peer access both ways between the GPUs of every halo between two parts of
/// `streams` (each pair once); the pairs that cannot have it (ordinals, lower first).
fn enable_peer_access(streams: &[Option<Arc<CudaStream>>], halos: &[Halo]) -> Result<Vec<(usize, usize)>> {
    let (mut asked, mut staged) = (Vec::new(), Vec::new());
    for halo in halos {
        let (Some(to), Some(from)) = (&streams[halo.to], &streams[halo.from]) else { continue };
        let (to, from) = (to.context(), from.context());
        let pair = (to.ordinal().min(from.ordinal()), to.ordinal().max(from.ordinal()));
        // Each pair of GPUs once (many halos, many parts, cross the same two).
        if pair.0 == pair.1 || asked.contains(&pair) {
            continue;
        }
        asked.push(pair);
        // Where the driver says the GPUs can reach each other but enabling it fails (say, a
        // GPU already has the most peers it may), the copies are staged, and the split says so.
        let reach = |a, b| ptxkit_host::enable_peer_access(a, b).unwrap_or(false);
        if !(reach(to, from) && reach(from, to)) {
            staged.push(pair);
        }
    }
    Ok(staged)
}

/// Field `field` of part `p` in device memory, or why not.
fn offered(rows: Option<DeviceRows<'_>>, p: usize, field: usize) -> Result<DeviceRows<'_>> {
    rows.ok_or_else(|| {
        Error::InvalidInput(format!(
            "part {p} no longer offers field {field} in device memory (Part::device_rows), which its halos are \
             copied with"
        ))
    })
}

/// The parts `to` and `from` (different parts) of `parts`, both mutable.
pub(crate) fn two_parts<P>(parts: &mut [P], to: usize, from: usize) -> Result<(&mut P, &mut P)> {
    if to == from || to.max(from) >= parts.len() {
        return Err(Error::InvalidInput(format!(
            "a halo of part {to} from part {from}: not two parts of the split"
        )));
    }
    let (low, high) = parts.split_at_mut(to.max(from));
    let (low, high) = (&mut low[to.min(from)], &mut high[0]);
    Ok(if to < from { (low, high) } else { (high, low) })
}

/// Copies `count` f32s from `src` (from element `src_at`) to `dst` (to element `dst_at`) on
/// `stream` (a stream of `dst`'s GPU), where the buffers are on different GPUs by a kernel of
/// `dst_gpu` reading peer memory ([`PeerCopy::Read`], where given) or by the copy engines.
/// The caller orders the copy after the source's writes.
#[allow(clippy::too_many_arguments)]
pub fn copy(
    how: PeerCopy,
    dst_gpu: Option<&Gpu>,
    stream: &CudaStream,
    src: &CudaSlice<f32>,
    src_at: usize,
    dst: &mut CudaSlice<f32>,
    dst_at: usize,
    count: usize,
) -> Result<()> {
    if src_at + count > src.len() || dst_at + count > dst.len() {
        return Err(Error::InvalidInput(format!(
            "a halo of {count} values from value {src_at} of a {}-value field into value {dst_at} of a {}-value \
             field: a part's device rows must hold all of its rows",
            src.len(),
            dst.len()
        )));
    }
    let bytes = count * std::mem::size_of::<f32>();
    let (src_ctx, dst_ctx) = (src.stream().context(), dst.stream().context());
    let same_gpu = src_ctx.cu_ctx() == dst_ctx.cu_ctx();
    if let (false, PeerCopy::Read, Some(dst_gpu)) = (same_gpu, how, dst_gpu) {
        let aligned = {
            let (a, _) = src.device_ptr(src.stream());
            let (b, _) = dst.device_ptr(dst.stream());
            u32::from((a + src_at as u64 * 4) % 16 == 0 && (b + dst_at as u64 * 4) % 16 == 0)
        };
        let count = u32::try_from(count).expect("a halo of fewer than 2^32 floats");
        let from = src.slice(src_at..src_at + count as usize);
        let mut to = dst.slice_mut(dst_at..dst_at + count as usize);
        let cfg = grid_1d(count.div_ceil(4), 256);
        return Ok(dst_gpu.launch_on(
            stream,
            kernels::halo::halo_copy,
            cfg,
            (&from, &mut to, count, aligned),
        )?);
    }
    // Raw pointers: the streams are ordered with explicit events (cudarc's tracking is off).
    let (from, _) = src.device_ptr(src.stream());
    let (to, _) = dst.device_ptr(dst.stream());
    let (from, to) = (from + (src_at * 4) as u64, to + (dst_at * 4) as u64);
    stream.context().bind_to_thread().context(|| "binding the GPU".into())?;
    // SAFETY: both ranges lie inside live buffers (checked above), which the parts keep until
    // their streams have run this copy; the stream outlives the call.
    unsafe {
        if same_gpu {
            result::memcpy_dtod_async(to, from, bytes, stream.cu_stream())
        } else {
            result::memcpy_peer_async(dst_ctx.cu_ctx(), to, src_ctx.cu_ctx(), from, bytes, stream.cu_stream())
        }
    }
    .context(|| "copying a halo between GPU parts".into())
}
