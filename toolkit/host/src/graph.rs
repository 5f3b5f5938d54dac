//! CUDA graphs: a sequence of launches and copies captured once from a stream, then replayed
//! with one driver call each time (no per-launch host cost: for many small kernels).

use crate::{Context as _, Error, Gpu, Result};
use cudarc::driver::{CudaGraph, CudaStream, result, sys};
use std::sync::Arc;

/// A captured, instantiated CUDA graph ([`Gpu::capture`]): replaying it runs the captured
/// work again, with the same buffers and scalar arguments as at capture (a buffer's contents
/// may change between replays; its address may not, so keep the captured buffers alive and
/// unmoved as long as the graph is replayed). Not to be used from two threads at once.
pub struct Graph {
    graph: CudaGraph,
    stream: Arc<CudaStream>,
}

impl std::fmt::Debug for Graph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Graph").finish_non_exhaustive()
    }
}

impl Gpu {
    /// Captures the work `record` queues on `stream` (a stream of this GPU, e.g. from
    /// [`Gpu::new_stream`] or [`Gpu::stream`]) into a [`Graph`] instead of running it:
    ///
    /// ```ignore
    /// let stream = gpu.new_stream()?;
    /// let graph = gpu.capture(&stream, |s| {
    ///     for _ in 0..100 {
    ///         gpu.launch_on(s, my_kernels::step, cfg, (&u, &mut v))?;
    ///         gpu.launch_on(s, my_kernels::step, cfg, (&v, &mut u))?;
    ///     }
    ///     Ok(())
    /// })?;
    /// graph.launch()?; // 200 kernels, one call
    /// ```
    ///
    /// Nothing runs during the capture, so `record` must not wait for the stream (no
    /// `synchronize`, no copy to the host's `Vec`) and should allocate its buffers before
    /// (allocations, and other calls that may synchronise, fail the capture when made from this
    /// thread while it lasts; other threads are not affected). The kernel modules are loaded
    /// first, outside the capture. If `record` fails, the capture is ended and its error
    /// returned; the stream is usable again either way.
    pub fn capture(
        &self,
        stream: &Arc<CudaStream>,
        record: impl FnOnce(&Arc<CudaStream>) -> Result<()>,
    ) -> Result<Graph> {
        self.check_stream(stream, "capturing a graph")?;
        self.load_kernels()?;
        stream
            .begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            .context(|| "beginning a graph capture".into())?;
        let recorded = record(stream);
        // Ended whatever `record` did: a stream left capturing refuses all later work.
        let ended = stream.end_capture(sys::CUgraphInstantiate_flags(0));
        recorded?;
        let graph = ended
            .context(|| {
                "ending the graph capture (a call during it that is not allowed while capturing?)".into()
            })?
            .ok_or_else(|| Error::InvalidLaunch("the graph capture recorded nothing".into()))?;
        Ok(Graph { graph, stream: stream.clone() })
    }
}

impl Graph {
    /// Queues one replay of the captured work on the stream it was captured from.
    pub fn launch(&self) -> Result<()> {
        self.graph.launch().context(|| "launching a graph".into())
    }

    /// Queues one replay on `stream` (a stream of the same GPU) instead.
    pub fn launch_on(&self, stream: &CudaStream) -> Result<()> {
        if stream.context() != self.stream.context() {
            return Err(Error::InvalidLaunch(
                "launching a graph: the stream belongs to another GPU's context".into(),
            ));
        }
        stream.context().bind_to_thread().context(|| "binding the GPU".into())?;
        // SAFETY: the executable graph is live (owned by `self.graph`) and belongs to the
        // stream's context (checked above); the driver orders it on `stream`.
        unsafe { result::graph::launch(self.graph.cu_graph_exec(), stream.cu_stream()) }
            .context(|| "launching a graph".into())
    }

    /// Uploads the graph to the GPU now, so that the first [`Graph::launch`] does not pay for
    /// it (optional).
    pub fn upload(&self) -> Result<()> {
        self.graph.upload().context(|| "uploading a graph".into())
    }

    /// The stream the graph was captured from ([`Graph::launch`] replays it there).
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// The cudarc graph (for calls this type does not offer).
    pub fn cuda_graph(&self) -> &CudaGraph {
        &self.graph
    }
}
