//! The CUDA engine: device buffers, stepping with the variant's [`Scheme`] and CUDA-graph
//! replay of the per-step launches.

use std::{collections::HashMap, sync::Arc};

use cudarc::driver::{CudaGraph, CudaSlice, CudaStream, sys};
use kernels::grayscott::{Rates, TEMPORAL_MAX_STEPS};

use super::{
    schemes::{HostFields, Launch, Scheme},
    *,
};
use crate::grayscott::{Engine, Variant, parts::LaunchSettings};
use crate::{
    cuda::Gpu,
    error::{CudaContext as _, Result},
    memory,
    render::colormap,
};

/// Frames colour-mapped per launch by `v2`.
pub const V2_BATCH: usize = 10;

/// Device bytes per cell: U, V and two scratch fields (f32), one frame byte per pipeline
/// slot (v2 keeps a batch of U and V copies instead).
pub const BYTES_PER_CELL: u64 = 4 * 4 + FRAME_SLOTS as u64;

/// Refuses, with the sizes, a grid that would not fit in the GPU's free memory (keeping
/// 64 MiB for the module and the driver). The CPU variant needs nothing there.
pub fn check_fits(gpu: &Gpu, width: u32, height: u32, variant: Variant) -> Result<()> {
    let per_cell = variant.scheme().map_or(0, |scheme| scheme.device_bytes_per_cell());
    let need = per_cell * u64::from(width) * u64::from(height) + (64 << 20);
    let (free, _) = gpu.memory()?;
    memory::require(width, height, need, free, "GPU")
}

/// Gray-Scott on a GPU.
pub struct CudaGrayScott {
    gpu: Arc<Gpu>,
    variant: Variant,
    scheme: &'static dyn Scheme,
    width: u32,
    height: u32,
    rates: Rates,
    u: CudaSlice<f32>,
    v: CudaSlice<f32>,
    /// The ping-pong partners of `u`, `v`, or scratch (the Laplacians of v0, v1, v2).
    scratch_u: CudaSlice<f32>,
    scratch_v: CudaSlice<f32>,
    /// The fields, where the scheme keeps them on the host (v0, which copies them every step).
    host: Option<HostFields>,
    /// The launch settings the scheme reads (checked by [`CudaGrayScott::set_launch_settings`]).
    settings: LaunchSettings,
    /// Replay per-step launches from CUDA graphs (one per step count and buffer parity).
    use_graphs: bool,
    graphs: HashMap<(u32, bool), CudaGraph>,
    /// Whether `u`/`v` currently hold the buffers allocated as the scratch pair.
    flipped: bool,
    frames: FramePipeline,
}

impl CudaGrayScott {
    /// Allocates the fields on `gpu` and uploads the initial state. Refuses (with the sizes)
    /// a grid that does not fit in the GPU's free memory.
    pub fn new(
        gpu: Arc<Gpu>,
        variant: Variant,
        width: u32,
        height: u32,
        rates: Rates,
        u: &[f32],
        v: &[f32],
    ) -> Result<Self> {
        let scheme = variant.scheme().expect("the CPU variant has its own engine");
        check_fits(&gpu, width, height, variant)?;
        let cells = width as usize * height as usize;
        let stream = gpu.stream().clone();
        let upload = |data: &[f32]| stream.clone_htod(data).context(|| "uploading the initial fields".into());
        let alloc = || stream.alloc_zeros::<f32>(cells).context(|| "allocating fields".into());
        let host = scheme.state_on_host().then(|| HostFields::new(u, v));
        let frames = if scheme.state_on_host() {
            FramePipeline::Host(Vec::new())
        } else if scheme.batched_frames() {
            FramePipeline::Batched(BatchedFrames::new(&gpu, cells)?)
        } else {
            FramePipeline::Async(AsyncFrames::new(&gpu, cells)?)
        };
        Ok(Self {
            variant,
            scheme,
            width,
            height,
            rates,
            u: upload(u)?,
            v: upload(v)?,
            scratch_u: alloc()?,
            scratch_v: alloc()?,
            host,
            settings: LaunchSettings::default(),
            use_graphs: true,
            graphs: HashMap::new(),
            flipped: false,
            frames,
            gpu,
        })
    }

    /// Sets the launch settings the variant steps with: the steps per temporal launch
    /// clamped to 1..=8, a streaming setting ignored unless [`StreamShape::is_valid`].
    pub fn set_launch_settings(&mut self, settings: &LaunchSettings) {
        let stream = if settings.stream.is_valid() { settings.stream } else { self.settings.stream };
        let temporal_steps = settings.temporal_steps.clamp(1, TEMPORAL_MAX_STEPS);
        self.settings = LaunchSettings { temporal_steps, stream, ..*settings };
        self.graphs.clear();
    }

    /// Sets the launch shape of the fused kernel.
    pub fn set_fused_shape(&mut self, fused: FusedShape) {
        self.set_launch_settings(&LaunchSettings { fused, ..self.settings });
    }

    /// Sets the steps per temporal launch (clamped to 1..=8).
    pub fn set_temporal_steps(&mut self, temporal_steps: u32) {
        self.set_launch_settings(&LaunchSettings { temporal_steps, ..self.settings });
    }

    /// Sets the streaming kernels' launch setting (ignored unless [`StreamShape::is_valid`]).
    pub fn set_stream_shape(&mut self, stream: StreamShape) {
        self.set_launch_settings(&LaunchSettings { stream, ..self.settings });
    }

    /// Turns CUDA-graph replay on or off (on by default).
    pub fn set_graphs(&mut self, on: bool) {
        self.use_graphs = on;
    }

    /// The stream the simulation runs on (for timing with events).
    pub fn stream(&self) -> &Arc<CudaStream> {
        self.gpu.stream()
    }

    /// The ordinal of the GPU the simulation runs on.
    pub fn gpu_ordinal(&self) -> usize {
        self.gpu.ordinal()
    }

    /// The GPU the simulation runs on.
    pub(crate) fn gpu(&self) -> &Arc<Gpu> {
        &self.gpu
    }

    /// Steps one launch advances with the settings held (at least 1).
    fn steps_per_launch(&self) -> u32 {
        self.scheme.steps_per_launch(&self.settings).max(1)
    }

    /// Kernel launches that swap the ping-pong buffers in a run of `steps` steps.
    fn swaps(&self, steps: u32) -> u32 {
        if self.scheme.ping_pongs() { steps.div_ceil(self.steps_per_launch()) } else { 0 }
    }

    fn swap_buffers(&mut self) {
        std::mem::swap(&mut self.u, &mut self.scratch_u);
        std::mem::swap(&mut self.v, &mut self.scratch_v);
        self.flipped = !self.flipped;
    }

    /// Queues the launches of `steps` steps: as many of the scheme's steps per launch as fit,
    /// then the rest in one launch, each swapping the buffers if the scheme ping-pongs.
    fn enqueue(&mut self, steps: u32) -> Result<()> {
        let per_launch = self.steps_per_launch();
        let mut left = steps;
        while left > 0 {
            let k = left.min(per_launch);
            let launch = Launch {
                gpu: &self.gpu,
                width: self.width,
                height: self.height,
                rates: self.rates,
                settings: &self.settings,
                u: &mut self.u,
                v: &mut self.v,
                other_u: &mut self.scratch_u,
                other_v: &mut self.scratch_v,
                host: self.host.as_mut(),
            };
            self.scheme.enqueue(launch, k)?;
            if self.scheme.ping_pongs() {
                self.swap_buffers();
            }
            left -= k;
        }
        Ok(())
    }
}

impl CudaGrayScott {
    /// Field `field` (0: U, 1: V) on the GPU, with the stream it is stepped on: what a part of
    /// a split offers for its halos, which overwrite its rows in place (captured step graphs
    /// hold these addresses, so the buffers themselves never change; a ping-ponging scheme
    /// swaps which is current, so ask again at every exchange).
    pub(crate) fn device_rows(&mut self, field: usize) -> crate::split::DeviceRows<'_> {
        let values = if field == 0 { &mut self.u } else { &mut self.v };
        crate::split::DeviceRows { values, stream: self.gpu.stream() }
    }

    /// Overwrites the current U and V (restoring a checkpoint). The copies go into the
    /// buffers in place, so captured step graphs, which hold their addresses, stay valid.
    pub fn upload_fields(&mut self, u: &[f32], v: &[f32]) -> Result<()> {
        if let Some(host) = &mut self.host {
            host.u.copy_from_slice(u);
            host.v.copy_from_slice(v);
            return Ok(());
        }
        let stream = self.gpu.stream();
        stream.memcpy_htod(u, &mut self.u).context(|| "uploading U".into())?;
        stream.memcpy_htod(v, &mut self.v).context(|| "uploading V".into())?;
        // The host slices are borrowed: the copies must be done before returning.
        Ok(self.gpu.synchronize()?)
    }
}

impl Engine for CudaGrayScott {
    fn views(&self) -> Result<Vec<crate::view::FieldView>> {
        use crate::view::FieldView;
        let shape = vec![self.height as usize, self.width as usize];
        // v0 keeps the state on the host (its device buffers are scratch).
        Ok(match &self.host {
            Some(host) => {
                vec![FieldView::host("u", shape.clone(), &host.u), FieldView::host("v", shape, &host.v)]
            }
            None => vec![
                FieldView::cuda("u", shape.clone(), &self.u, &self.gpu),
                FieldView::cuda("v", shape, &self.v, &self.gpu),
            ],
        })
    }

    fn step(&mut self, steps: u32) -> Result<()> {
        if steps == 0 {
            return Ok(());
        }
        // Steps that wait for the host in between cannot be captured.
        if !self.use_graphs || self.scheme.state_on_host() {
            return self.enqueue(steps);
        }
        let key = (steps, self.flipped);
        if let Some(graph) = self.graphs.get(&key) {
            graph.launch().context(|| "replaying a step graph".into())?;
            if self.swaps(steps) % 2 == 1 {
                self.swap_buffers();
            }
            return Ok(());
        }
        // First time for this step count and parity: capture the launches (which swaps the
        // buffers as if they had run), then run the graph once.
        let stream = self.gpu.stream().clone();
        stream
            .begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            .context(|| "starting graph capture".into())?;
        let enqueued = self.enqueue(steps);
        let graph =
            stream.end_capture(sys::CUgraphInstantiate_flags(0)).context(|| "capturing a step graph".into());
        enqueued?;
        let graph = graph?.expect("the capture recorded launches");
        graph.launch().context(|| "running a step graph".into())?;
        self.graphs.insert(key, graph);
        Ok(())
    }

    fn snapshot(&mut self) -> Result<()> {
        match &mut self.frames {
            FramePipeline::Host(ready) => {
                let host = self.host.as_ref().expect("v0 has host state");
                let mut levels = vec![0u8; host.u.len()];
                colormap::levels_cpu(&host.u, &host.v, &mut levels);
                ready.push(levels);
                Ok(())
            }
            FramePipeline::Async(frames) => frames.snapshot(&self.gpu, &self.u, &self.v),
            FramePipeline::Batched(frames) => frames.snapshot(&self.gpu, &self.u, &self.v),
        }
    }

    fn collect(&mut self, wait: bool) -> Result<Vec<Vec<u8>>> {
        match &mut self.frames {
            FramePipeline::Host(ready) => Ok(std::mem::take(ready)),
            FramePipeline::Async(frames) => frames.collect(wait),
            FramePipeline::Batched(frames) => frames.collect(&self.gpu, wait),
        }
    }

    fn fields(&mut self) -> Result<(Vec<f32>, Vec<f32>)> {
        if let Some(host) = &self.host {
            return Ok((host.u.clone(), host.v.clone()));
        }
        let stream = self.gpu.stream();
        let u = stream.clone_dtoh(&self.u).context(|| "downloading U".into())?;
        let v = stream.clone_dtoh(&self.v).context(|| "downloading V".into())?;
        self.gpu.synchronize()?;
        Ok((u, v))
    }

    fn set_fields(&mut self, u: &[f32], v: &[f32]) -> Result<()> {
        self.upload_fields(u, v)
    }

    /// The captured step graphs hold the old rates as launch parameters: they go.
    fn set_rates(&mut self, rates: Rates) {
        self.rates = rates;
        self.graphs.clear();
    }

    fn synchronize(&mut self) -> Result<()> {
        Ok(self.gpu.synchronize()?)
    }

    fn describe(&self) -> String {
        format!("cuda {} ({})", self.variant.name(), self.gpu.name())
    }

    fn as_cuda(&mut self) -> Option<&mut CudaGrayScott> {
        Some(self)
    }
}
