//! Halo exchange between the parts of one process (the `local` transport): each part pulls
//! its halos from its neighbours. Between GPUs with peer access (enabled for every pair that
//! has it) a kernel on the receiving GPU reads the neighbour's rows directly
//! ([`kernels::halo::halo_copy`]); without peer access, or with
//! `RUST_GPU_SIM_PEER_COPY=engine`, the copy engines move them (`cuMemcpyPeerAsync`, staged
//! through the host where the GPUs have no peer access). Within one GPU: device copies.
//! (Peer writes by the sending GPU, and pulls from the two neighbours on two streams, were
//! measured no faster on 4 H200s and are gone: docs/multi-gpu.md.)
//!
//! Ordering uses events between neighbours only: a part's pulls wait for its neighbours'
//! steps, and its next steps wait for its neighbours' pulls from it (they read the band it
//! would overwrite). No part waits for parts that are not its neighbours, and the host
//! never waits: it queues every part's work and goes on.

use std::sync::Arc;

use cudarc::driver::{CudaEvent, CudaSlice, CudaStream, DevicePtr, result};

use crate::{
    cuda::{Gpu, grid_1d},
    error::{CudaContext as _, Result},
};

/// Set to `engine` to move halos between GPUs with the copy engines even where a kernel
/// could read them through peer access, or `read` for peer reads (to compare the two); unset:
/// peer reads, but copy engines for heat's `--overlap`, whose halos travel beside a kernel
/// that fills every SM (a reading kernel would have to wait for it).
pub const PEER_COPY_VAR: &str = "RUST_GPU_SIM_PEER_COPY";

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

/// Lets every GPU of `gpus` reach every other's memory where the hardware allows, and says
/// how halos will travel between them: `preferred` unless [`PEER_COPY_VAR`] says otherwise
/// (peer reads only where every pair has peer access).
pub fn enable_peer_access(gpus: &[Arc<Gpu>], preferred: PeerCopy) -> Result<PeerCopy> {
    let mut all = true;
    for a in gpus {
        for b in gpus {
            all &= a.enable_peer_access(b)?;
        }
    }
    let asked = std::env::var(PEER_COPY_VAR).unwrap_or_default();
    let engine = match asked.as_str() {
        "" => preferred == PeerCopy::Engine,
        "read" => false,
        "engine" => true,
        other => {
            return Err(crate::Error::InvalidInput(format!(
                "{PEER_COPY_VAR}={other:?}: the halo copies between GPUs are `read` (the default) or `engine`"
            )));
        }
    };
    Ok(if all && !engine { PeerCopy::Read } else { PeerCopy::Engine })
}

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

/// The parts of one process, their streams and who neighbours whom.
pub struct Neighbourhood {
    streams: Vec<Arc<CudaStream>>,
    /// The distinct other parts each part exchanges with.
    neighbours: Vec<Vec<usize>>,
    /// Recorded on each part's stream after its steps, and after its pulls.
    stepped: Vec<CudaEvent>,
    pulled: Vec<CudaEvent>,
}

impl Neighbourhood {
    /// Consecutive parts on `streams` (parts on one GPU may share its stream), each
    /// exchanging with the parts before and after it (the first and last too where
    /// `periodic`; itself and repeats dropped).
    pub fn new(streams: Vec<Arc<CudaStream>>, periodic: bool) -> Result<Self> {
        let n = streams.len();
        let neighbours = (0..n)
            .map(|p| {
                let (before, after) = super::decomposition::neighbours(p, n, periodic);
                let mut list: Vec<usize> = before.into_iter().chain(after).filter(|&q| q != p).collect();
                list.sort_unstable();
                list.dedup();
                list
            })
            .collect();
        let events = |streams: &[Arc<CudaStream>]| {
            streams
                .iter()
                .map(|s| s.context().new_event(None).context(|| "creating an exchange event".into()))
                .collect::<Result<Vec<_>>>()
        };
        Ok(Self { stepped: events(&streams)?, pulled: events(&streams)?, streams, neighbours })
    }

    /// Call after queuing every part's steps, before its pulls: each part's stream waits for
    /// its neighbours' steps so far.
    pub fn before_pulls(&self) -> Result<()> {
        self.record_and_wait(&self.stepped)
    }

    /// Call after queuing every part's pulls: each part's next work waits for its
    /// neighbours' pulls from it.
    pub fn after_pulls(&self) -> Result<()> {
        self.record_and_wait(&self.pulled)
    }

    fn record_and_wait(&self, events: &[CudaEvent]) -> Result<()> {
        for (event, stream) in events.iter().zip(&self.streams) {
            event.record(stream).context(|| "recording an exchange event".into())?;
        }
        for (p, stream) in self.streams.iter().enumerate() {
            for &q in &self.neighbours[p] {
                if !Arc::ptr_eq(stream, &self.streams[q]) {
                    stream.wait(&events[q]).context(|| "ordering an exchange".into())?;
                }
            }
        }
        Ok(())
    }

    /// The streams of the parts, in order.
    pub fn streams(&self) -> &[Arc<CudaStream>] {
        &self.streams
    }
}

/// Copies `count` f32s from `src` (from element `src_at`) to `dst` (to element `dst_at`, a
/// buffer of `dst_gpu`) on `stream` (the receiving part's, a stream of `dst_gpu`), `how`
/// where the buffers are on different GPUs. The caller orders the copy after the source's
/// writes (see [`Neighbourhood`]).
#[allow(clippy::too_many_arguments)]
pub fn copy(
    how: PeerCopy,
    dst_gpu: &Gpu,
    stream: &CudaStream,
    src: &CudaSlice<f32>,
    src_at: usize,
    dst: &mut CudaSlice<f32>,
    dst_at: usize,
    count: usize,
) -> Result<()> {
    assert!(src_at + count <= src.len() && dst_at + count <= dst.len(), "halo copy out of bounds");
    let bytes = count * std::mem::size_of::<f32>();
    let (src_ctx, dst_ctx) = (src.stream().context(), dst.stream().context());
    if !Arc::ptr_eq(src_ctx, dst_ctx) && how == PeerCopy::Read {
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
    // SAFETY: both ranges lie inside live buffers (checked above); the stream outlives the call.
    unsafe {
        if Arc::ptr_eq(src_ctx, dst_ctx) {
            result::memcpy_dtod_async(to, from, bytes, stream.cu_stream())
        } else {
            result::memcpy_peer_async(dst_ctx.cu_ctx(), to, src_ctx.cu_ctx(), from, bytes, stream.cu_stream())
        }
    }
    .context(|| "exchanging halos".into())
}
