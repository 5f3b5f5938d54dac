//! The CUDA backend: device buffers, the GPU variants of the progression, CUDA-graph replay of
//! the per-step launches, and the frame pipeline. The per-kernel launchers are public so GPU
//! tests can run each kernel alone against its CPU reference.

use std::{collections::HashMap, sync::Arc};

use cudarc::driver::{CudaEvent, CudaGraph, CudaSlice, CudaStream, PinnedHostSlice, sys};
use kernels::{
    colormap::{MIN_MAX_BLOCK, MinMax, colormap_levels, field_min_max},
    grayscott::{
        Rates, STREAM_COLS, STREAM_MAX_STEPS, STREAM_MAX_WARPS, TEMPORAL_MAX_STEPS, TEMPORAL_SPAN_Y,
        TEMPORAL_WARPS, TILE_H, TILE_W, gray_scott_fused, gray_scott_fused_x4, gray_scott_laplacian,
        gray_scott_streaming_c1_s1, gray_scott_streaming_c1_s2, gray_scott_streaming_c1_s3,
        gray_scott_streaming_c1_s4, gray_scott_streaming_c1_s5, gray_scott_streaming_c1_s6,
        gray_scott_streaming_c1_s7, gray_scott_streaming_c1_s8, gray_scott_streaming_s1,
        gray_scott_streaming_s2, gray_scott_streaming_s3, gray_scott_streaming_s4, gray_scott_streaming_s5,
        gray_scott_streaming_s6, gray_scott_streaming_s7, gray_scott_streaming_s8, gray_scott_temporal,
        gray_scott_tiled, gray_scott_update, stream_shared_bytes, stream_strip, temporal_tile,
    },
};

use super::{Engine, Variant, cpu};
use crate::{
    cuda::{Gpu, grid_1d, grid_2d},
    error::{CudaContext as _, Error, Result},
    memory,
    render::colormap,
};

/// The 2-D block shape of the one-thread-per-cell stencil kernels (laplacian, update): a
/// warp along x keeps rows coalesced.
pub const BLOCK_2D: (u32, u32) = (32, 8);

/// Launch shape of the fused step: a 2-D block, each thread marching `rows` rows of one
/// column (`gray_scott_fused`) or of four adjacent columns read and written as `float4`
/// (`gray_scott_fused_x4`, for widths that are a multiple of 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FusedShape {
    pub block: (u32, u32),
    pub rows: u32,
    /// Columns per thread: 1 or 4.
    pub columns: u32,
}

impl Default for FusedShape {
    fn default() -> Self {
        Self { block: (128, 2), rows: 4, columns: 1 }
    }
}

impl std::fmt::Display for FusedShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}x{} threads, {} rows each", self.block.0, self.block.1, self.rows)?;
        match self.columns {
            1 => {}
            4 => write!(f, " of 4 columns (float4)")?,
            n => write!(f, " of {n} columns")?,
        }
        Ok(())
    }
}

impl FusedShape {
    /// Candidates timed by [`tune_fused`] for a grid `width` wide: warp-wide or wider rows,
    /// 256 or fewer threads, 1 to 8 rows per thread, of one column per thread or, where
    /// `width` is a multiple of 4, of four (which won at every size on an H200; then only
    /// three one-column shapes are timed beside them, so that the first run at a size tunes
    /// in about the time it took before).
    pub fn candidates(width: u32) -> Vec<FusedShape> {
        let blocks = [(32, 8), (32, 4), (64, 4), (64, 2), (128, 2), (128, 1), (256, 1)];
        let every = |columns| {
            blocks.iter().flat_map(move |&block| [1, 2, 4, 8].map(|rows| FusedShape { block, rows, columns }))
        };
        if width % 4 != 0 {
            return every(1).collect();
        }
        let one_column = [((32, 8), 1), ((128, 2), 4), ((256, 1), 4)].map(|(block, rows)| FusedShape {
            block,
            rows,
            columns: 1,
        });
        every(4).chain(one_column).collect()
    }

    /// `128x2x4` (block width, block height, rows per thread), then `x4` for four columns per
    /// thread, as cached.
    pub fn key(&self) -> String {
        let columns = if self.columns > 1 { format!("x{}", self.columns) } else { String::new() };
        format!("{}x{}x{}{columns}", self.block.0, self.block.1, self.rows)
    }

    /// Parses [`FusedShape::key`]; `None` for anything malformed or unlaunchable.
    pub fn parse(text: &str) -> Option<FusedShape> {
        let parts: Vec<u32> = text.split('x').map(str::parse).collect::<Result<_, _>>().ok()?;
        let (bx, by, rows, columns) = match parts[..] {
            [bx, by, rows] => (bx, by, rows, 1),
            [bx, by, rows, 4] => (bx, by, rows, 4),
            _ => return None,
        };
        let valid = bx > 0 && by > 0 && rows > 0 && bx * by <= 1024 && rows <= 64;
        valid.then_some(FusedShape { block: (bx, by), rows, columns })
    }
}

/// Launch setting of the `streaming` kernels: steps per launch (T), warps per block (side by
/// side along x), output rows per block (the chunk it marches down) and cells per thread
/// (`cols`: 2 for `gray_scott_streaming_s*`, 1 for `gray_scott_streaming_c1_s*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamShape {
    pub steps: u32,
    pub warps: u32,
    pub chunk: u32,
    pub cols: u32,
}

impl Default for StreamShape {
    fn default() -> Self {
        Self { steps: 4, warps: 1, chunk: 32, cols: STREAM_COLS }
    }
}

impl std::fmt::Display for StreamShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} steps per launch, {} warp(s), chunks of {} rows, {} column(s) per thread",
            self.steps, self.warps, self.chunk, self.cols
        )
    }
}

impl StreamShape {
    /// Candidates timed by [`tune_streaming`] on a `width × height` grid: one and two cells
    /// per thread, every step count from 2 (the strip widths tile a grid differently for
    /// each), 1 to 4 warps, and chunks of 8, 16 and 32 rows plus, of 8 rows or more, those
    /// that fill 1 to 4 whole waves of blocks (`resident(steps, warps, cols)` blocks fit on
    /// the GPU at once): the longer a chunk, the less the wavefront's start costs, and in
    /// whole waves no SM idles through a last partial one.
    pub fn candidates(width: u32, height: u32, resident: impl Fn(u32, u32, u32) -> u32) -> Vec<StreamShape> {
        let mut all = Vec::new();
        for cols in [1, STREAM_COLS] {
            for steps in 2..=STREAM_MAX_STEPS {
                for warps in 1..=STREAM_MAX_WARPS {
                    let strips = width.max(1).div_ceil(stream_strip(steps, warps, cols));
                    let mut chunks = vec![8, 16, 32];
                    for waves in 1..=4 {
                        let block_rows = waves * resident(steps, warps, cols) / strips;
                        if block_rows > 0 {
                            chunks.push(height.max(1).div_ceil(block_rows).max(8));
                        }
                    }
                    chunks.sort_unstable();
                    chunks.dedup();
                    all.extend(chunks.into_iter().map(|chunk| StreamShape { steps, warps, chunk, cols }));
                }
            }
        }
        all
    }

    /// `s4w1r32c2` (steps, warps, chunk rows, cells per thread), as cached.
    pub fn key(&self) -> String {
        format!("s{}w{}r{}c{}", self.steps, self.warps, self.chunk, self.cols)
    }

    /// Parses [`StreamShape::key`]; `None` for anything malformed or unlaunchable (and for the
    /// keys of versions without one-cell kernels, which were tuned without them).
    pub fn parse(text: &str) -> Option<StreamShape> {
        let rest = text.strip_prefix('s')?;
        let (steps, rest) = rest.split_once('w')?;
        let (warps, rest) = rest.split_once('r')?;
        let (chunk, cols) = rest.split_once('c')?;
        let shape = StreamShape {
            steps: steps.parse().ok()?,
            warps: warps.parse().ok()?,
            chunk: chunk.parse().ok()?,
            cols: cols.parse().ok()?,
        };
        shape.is_valid().then_some(shape)
    }

    /// Whether a kernel exists for it and a block fits.
    pub fn is_valid(&self) -> bool {
        (1..=STREAM_MAX_STEPS).contains(&self.steps)
            && (1..=STREAM_MAX_WARPS).contains(&self.warps)
            && self.chunk >= 1
            && (self.cols == 1 || self.cols == STREAM_COLS)
    }
}

/// Two pairs of random fields for tuning (not the simulation's: tuning must not advance it).
struct TuningFields {
    a: (CudaSlice<f32>, CudaSlice<f32>),
    b: (CudaSlice<f32>, CudaSlice<f32>),
}

impl TuningFields {
    fn new(gpu: &Gpu, cells: usize) -> Result<Self> {
        let mut rng = crate::rng::SplitMix64::new(7);
        let field: Vec<f32> = (0..cells).map(|_| rng.unit()).collect();
        let up = || gpu.stream().clone_htod(&field).context(|| "uploading tuning fields".into());
        Ok(Self { a: (up()?, up()?), b: (up()?, up()?) })
    }

    /// Runs `launch(from, to)` `pairs` times each way (a → b, then b → a).
    fn ping_pong(
        &mut self,
        pairs: usize,
        mut launch: impl FnMut(
            &CudaSlice<f32>,
            &CudaSlice<f32>,
            &mut CudaSlice<f32>,
            &mut CudaSlice<f32>,
        ) -> Result<()>,
    ) -> Result<()> {
        for _ in 0..pairs {
            launch(&self.a.0, &self.a.1, &mut self.b.0, &mut self.b.1)?;
            launch(&self.b.0, &self.b.1, &mut self.a.0, &mut self.a.1)?;
        }
        Ok(())
    }
}

/// Times `run` four times with events and returns the second fastest of the last three (the
/// first run is a warm-up; the second fastest shrugs off one outlier), in milliseconds.
fn time_candidate(gpu: &Gpu, mut run: impl FnMut() -> Result<()>) -> Result<f64> {
    let mut times = Vec::new();
    for repeat in 0..4 {
        let timer = crate::cuda::Timer::start(gpu)?;
        run()?;
        let ms = f64::from(timer.stop()?);
        if repeat > 0 {
            times.push(ms);
        }
    }
    times.sort_by(f64::total_cmp);
    Ok(times[1])
}

/// Set (to anything) to have the tuners print every candidate's time on stderr.
pub const TUNE_LOG_VAR: &str = "RUST_GPU_SIM_TUNE_LOG";

/// Prints one tuning candidate's time per step (`ms` for `launches` launches of `steps` steps
/// each) when [`TUNE_LOG_VAR`] is set.
fn log_candidate(
    kernel: &str,
    (width, height): (u32, u32),
    label: impl std::fmt::Display,
    ms: f64,
    launches: usize,
    steps: u32,
) {
    if std::env::var_os(TUNE_LOG_VAR).is_some() {
        let us = ms * 1000.0 / (launches as f64 * f64::from(steps));
        eprintln!("tune {kernel} {width}x{height}: {label}: {us:.3} µs per step");
    }
}

/// Times every [`FusedShape::candidates`] on a `width × height` grid of random fields with
/// device events, and returns the fastest.
pub fn tune_fused(gpu: &Gpu, width: u32, height: u32) -> Result<FusedShape> {
    let cells = width as usize * height as usize;
    let mut fields = TuningFields::new(gpu, cells)?;
    let rates = super::preset("coral").expect("preset").rates();
    let pairs = (100_000_000 / cells).clamp(4, 200) / 2;
    let mut best = (f64::INFINITY, FusedShape::default());
    for shape in FusedShape::candidates(width) {
        let ms = time_candidate(gpu, || {
            fields
                .ping_pong(pairs, |u, v, un, vn| launch_fused(gpu, u, v, un, vn, width, height, rates, shape))
        })?;
        log_candidate("fused", (width, height), shape, ms, 2 * pairs, 1);
        if ms < best.0 {
            best = (ms, shape);
        }
    }
    Ok(best.1)
}

/// Times `gray_scott_temporal` with 2 to 8 steps per launch on random fields and returns the
/// fastest per step: fewer steps mean less redundant arithmetic on the halo, more mean less
/// DRAM traffic per step.
pub fn tune_temporal(gpu: &Gpu, width: u32, height: u32) -> Result<u32> {
    let cells = width as usize * height as usize;
    let mut fields = TuningFields::new(gpu, cells)?;
    let rates = super::preset("coral").expect("preset").rates();
    let pairs = (400_000_000 / cells).clamp(4, 400) / 2;
    let mut best = (f64::INFINITY, TEMPORAL_MAX_STEPS);
    for k in 2..=TEMPORAL_MAX_STEPS {
        let ms = time_candidate(gpu, || {
            fields
                .ping_pong(pairs, |u, v, un, vn| launch_temporal(gpu, u, v, un, vn, width, height, rates, k))
        })?;
        log_candidate("temporal", (width, height), format_args!("{k} steps"), ms, 2 * pairs, k);
        if ms / f64::from(k) < best.0 {
            best = (ms / f64::from(k), k);
        }
    }
    Ok(best.1)
}

/// A tuned launch setting for this GPU and size: from the autotune cache, else tuned now and
/// cached; with `autotune` off, `default`. Also says where it came from.
#[allow(clippy::too_many_arguments)]
fn tuned<T>(
    gpu: &Gpu,
    kernel: &str,
    (width, height): (u32, u32),
    autotune: bool,
    default: T,
    parse: impl Fn(&str) -> Option<T>,
    key_of: impl Fn(&T) -> String,
    tune: impl FnOnce() -> Result<T>,
) -> Result<(T, &'static str)> {
    if !autotune {
        return Ok((default, "default"));
    }
    let key = crate::autotune::Key { gpu: gpu.name().into(), kernel: kernel.into(), width, height };
    let mut cache =
        crate::autotune::default_path().map(|p| crate::autotune::Cache::load(&p)).unwrap_or_default();
    if let Some(value) = cache.get(&key).and_then(&parse) {
        return Ok((value, "cached"));
    }
    let value = tune()?;
    cache.put(key, key_of(&value));
    Ok((value, "tuned"))
}

/// The fused kernel's shape for this GPU and size: from the autotune cache, else timed now
/// and cached; the default with autotuning off.
pub fn fused_shape_for(
    gpu: &Gpu,
    width: u32,
    height: u32,
    autotune: bool,
) -> Result<(FusedShape, &'static str)> {
    let tune = || tune_fused(gpu, width, height);
    tuned(
        gpu,
        "gray_scott_fused",
        (width, height),
        autotune,
        FusedShape::default(),
        FusedShape::parse,
        FusedShape::key,
        tune,
    )
}

/// Steps per temporal launch for this GPU and size: from the autotune cache, else timed now
/// and cached; the default with autotuning off.
pub fn temporal_steps_for(gpu: &Gpu, width: u32, height: u32, autotune: bool) -> Result<(u32, &'static str)> {
    let parse = |s: &str| s.parse().ok().filter(|k| (1..=TEMPORAL_MAX_STEPS).contains(k));
    let tune = || tune_temporal(gpu, width, height);
    tuned(
        gpu,
        "gray_scott_temporal",
        (width, height),
        autotune,
        TEMPORAL_MAX_STEPS,
        parse,
        u32::to_string,
        tune,
    )
}

/// Times every [`StreamShape::candidates`] on random fields and returns the fastest per step.
pub fn tune_streaming(gpu: &Gpu, width: u32, height: u32) -> Result<StreamShape> {
    let cells = width as usize * height as usize;
    let mut fields = TuningFields::new(gpu, cells)?;
    let rates = super::preset("coral").expect("preset").rates();
    let pairs = (400_000_000 / cells).clamp(4, 400) / 2;
    let mut best = (f64::INFINITY, StreamShape::default());
    let mut resident = [[[0u32; STREAM_MAX_WARPS as usize]; STREAM_MAX_STEPS as usize]; 2];
    // Candidates take 2 steps or more.
    for cols in [1, STREAM_COLS] {
        for steps in 2..=STREAM_MAX_STEPS {
            for warps in 1..=STREAM_MAX_WARPS {
                resident[cols as usize - 1][steps as usize - 1][warps as usize - 1] =
                    stream_resident_blocks(gpu, steps, warps, cols)?;
            }
        }
    }
    let candidates = StreamShape::candidates(width, height, |steps, warps, cols| {
        resident[cols as usize - 1][steps as usize - 1][warps as usize - 1]
    });
    for shape in candidates {
        let ms = time_candidate(gpu, || {
            fields.ping_pong(pairs, |u, v, un, vn| {
                launch_streaming(gpu, u, v, un, vn, width, height, rates, shape, shape.steps)
            })
        })?;
        log_candidate("streaming", (width, height), shape, ms, 2 * pairs, shape.steps);
        if ms / f64::from(shape.steps) < best.0 {
            best = (ms / f64::from(shape.steps), shape);
        }
    }
    Ok(best.1)
}

/// The streaming kernels' launch setting for this GPU and size: from the autotune cache,
/// else timed now and cached; the default with autotuning off.
pub fn streaming_shape_for(
    gpu: &Gpu,
    width: u32,
    height: u32,
    autotune: bool,
) -> Result<(StreamShape, &'static str)> {
    let tune = || tune_streaming(gpu, width, height);
    tuned(
        gpu,
        "gray_scott_streaming",
        (width, height),
        autotune,
        StreamShape::default(),
        StreamShape::parse,
        StreamShape::key,
        tune,
    )
}

/// Frames colour-mapped per launch by `v2`.
pub const V2_BATCH: usize = 10;

/// Device bytes per cell: U, V and two scratch fields (f32), one frame byte per pipeline
/// slot (v2 keeps a batch of U and V copies instead).
pub const BYTES_PER_CELL: u64 = 4 * 4 + FRAME_SLOTS as u64;

/// Refuses, with the sizes, a grid that would not fit in the GPU's free memory (keeping
/// 64 MiB for the module and the driver).
pub fn check_fits(gpu: &Gpu, width: u32, height: u32, variant: Variant) -> Result<()> {
    let per_cell = if variant == Variant::V2 { 4 * 4 + 9 * V2_BATCH as u64 } else { BYTES_PER_CELL };
    let need = per_cell * u64::from(width) * u64::from(height) + (64 << 20);
    let (free, _) = gpu.memory()?;
    memory::require(width, height, need, free, "GPU")
}

/// Gray-Scott on a GPU.
pub struct CudaGrayScott {
    gpu: Arc<Gpu>,
    variant: Variant,
    width: u32,
    height: u32,
    rates: Rates,
    u: CudaSlice<f32>,
    v: CudaSlice<f32>,
    /// The ping-pong partners of `u`, `v` (fused, tiled, temporal), or the Laplacians
    /// (v0, v1, v2).
    scratch_u: CudaSlice<f32>,
    scratch_v: CudaSlice<f32>,
    /// v0 keeps the state on the host and copies it every step.
    host: Option<HostState>,
    fused_shape: FusedShape,
    /// Steps per `gray_scott_temporal` launch (1 to 8).
    temporal_steps: u32,
    /// Launch setting of the `gray_scott_streaming_*` kernels.
    stream_shape: StreamShape,
    /// Replay per-step launches from CUDA graphs (one per step count and buffer parity).
    use_graphs: bool,
    graphs: HashMap<(u32, bool), CudaGraph>,
    /// Whether `u`/`v` currently hold the buffers allocated as the scratch pair.
    flipped: bool,
    frames: FramePipeline,
}

struct HostState {
    u: Vec<f32>,
    v: Vec<f32>,
    lu: Vec<f32>,
    lv: Vec<f32>,
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
        assert!(variant != Variant::Cpu, "the CPU variant has its own engine");
        check_fits(&gpu, width, height, variant)?;
        let cells = width as usize * height as usize;
        let stream = gpu.stream().clone();
        let upload = |data: &[f32]| stream.clone_htod(data).context(|| "uploading the initial fields".into());
        let alloc = || stream.alloc_zeros::<f32>(cells).context(|| "allocating fields".into());
        let host = (variant == Variant::V0).then(|| HostState {
            u: u.to_vec(),
            v: v.to_vec(),
            lu: vec![0.0; cells],
            lv: vec![0.0; cells],
        });
        let frames = if variant == Variant::V2 {
            FramePipeline::Batched(BatchedFrames::new(&gpu, cells)?)
        } else if variant == Variant::V0 {
            FramePipeline::Host(Vec::new())
        } else {
            FramePipeline::Async(AsyncFrames::new(&gpu, cells)?)
        };
        Ok(Self {
            variant,
            width,
            height,
            rates,
            u: upload(u)?,
            v: upload(v)?,
            scratch_u: alloc()?,
            scratch_v: alloc()?,
            host,
            fused_shape: FusedShape::default(),
            temporal_steps: TEMPORAL_MAX_STEPS,
            stream_shape: StreamShape::default(),
            use_graphs: true,
            graphs: HashMap::new(),
            flipped: false,
            frames,
            gpu,
        })
    }

    /// Sets the launch shape of the fused kernel.
    pub fn set_fused_shape(&mut self, shape: FusedShape) {
        self.fused_shape = shape;
        self.graphs.clear();
    }

    /// Sets the steps per temporal launch (clamped to 1..=8).
    pub fn set_temporal_steps(&mut self, steps: u32) {
        self.temporal_steps = steps.clamp(1, TEMPORAL_MAX_STEPS);
        self.graphs.clear();
    }

    /// Sets the streaming kernels' launch setting (ignored unless [`StreamShape::is_valid`]).
    pub fn set_stream_shape(&mut self, shape: StreamShape) {
        if shape.is_valid() {
            self.stream_shape = shape;
            self.graphs.clear();
        }
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

    /// Kernel launches that swap the ping-pong buffers in a run of `steps` steps.
    fn swaps(&self, steps: u32) -> u32 {
        match self.variant {
            Variant::Fused | Variant::Tiled => steps,
            Variant::Temporal => steps.div_ceil(self.temporal_steps),
            Variant::Streaming => steps.div_ceil(self.stream_shape.steps),
            _ => 0,
        }
    }

    fn swap_buffers(&mut self) {
        std::mem::swap(&mut self.u, &mut self.scratch_u);
        std::mem::swap(&mut self.v, &mut self.scratch_v);
        self.flipped = !self.flipped;
    }

    /// Queues the launches of `steps` steps (all variants but v0).
    fn enqueue(&mut self, steps: u32) -> Result<()> {
        let (w, h, rates) = (self.width, self.height, self.rates);
        let gpu = self.gpu.clone();
        match self.variant {
            Variant::V1 | Variant::V2 => {
                for _ in 0..steps {
                    launch_laplacian(&gpu, &self.u, &self.v, &mut self.scratch_u, &mut self.scratch_v, w, h)?;
                    launch_update(
                        &gpu,
                        &mut self.u,
                        &mut self.v,
                        &self.scratch_u,
                        &self.scratch_v,
                        w,
                        h,
                        rates,
                    )?;
                }
            }
            Variant::Fused => {
                for _ in 0..steps {
                    let shape = self.fused_shape;
                    launch_fused(
                        &gpu,
                        &self.u,
                        &self.v,
                        &mut self.scratch_u,
                        &mut self.scratch_v,
                        w,
                        h,
                        rates,
                        shape,
                    )?;
                    self.swap_buffers();
                }
            }
            Variant::Tiled => {
                for _ in 0..steps {
                    launch_tiled(
                        &gpu,
                        &self.u,
                        &self.v,
                        &mut self.scratch_u,
                        &mut self.scratch_v,
                        w,
                        h,
                        rates,
                    )?;
                    self.swap_buffers();
                }
            }
            Variant::Temporal => {
                let mut left = steps;
                while left > 0 {
                    let k = left.min(self.temporal_steps);
                    launch_temporal(
                        &gpu,
                        &self.u,
                        &self.v,
                        &mut self.scratch_u,
                        &mut self.scratch_v,
                        w,
                        h,
                        rates,
                        k,
                    )?;
                    self.swap_buffers();
                    left -= k;
                }
            }
            Variant::Streaming => {
                let mut left = steps;
                while left > 0 {
                    let k = left.min(self.stream_shape.steps);
                    launch_streaming(
                        &gpu,
                        &self.u,
                        &self.v,
                        &mut self.scratch_u,
                        &mut self.scratch_v,
                        w,
                        h,
                        rates,
                        self.stream_shape,
                        k,
                    )?;
                    self.swap_buffers();
                    left -= k;
                }
            }
            Variant::V0 | Variant::Cpu => unreachable!("stepped elsewhere"),
        }
        Ok(())
    }

    /// v0: the state lives on the host; each step uploads U and V, computes the Laplacians on
    /// the GPU, downloads them, and updates on the CPU.
    fn step_v0(&mut self, steps: u32) -> Result<()> {
        let (w, h) = (self.width, self.height);
        let gpu = self.gpu.clone();
        let host = self.host.as_mut().expect("v0 has host state");
        let stream = gpu.stream();
        for _ in 0..steps {
            stream.memcpy_htod(&host.u, &mut self.u).context(|| "uploading U".into())?;
            stream.memcpy_htod(&host.v, &mut self.v).context(|| "uploading V".into())?;
            launch_laplacian(&gpu, &self.u, &self.v, &mut self.scratch_u, &mut self.scratch_v, w, h)?;
            stream.memcpy_dtoh(&self.scratch_u, &mut host.lu).context(|| "downloading Lu".into())?;
            stream.memcpy_dtoh(&self.scratch_v, &mut host.lv).context(|| "downloading Lv".into())?;
            gpu.synchronize()?;
            cpu::update(&mut host.u, &mut host.v, &host.lu, &host.lv, &self.rates);
        }
        Ok(())
    }
}

impl CudaGrayScott {
    /// The current U and V on the GPU (for halo exchanges between parts).
    pub(crate) fn state(&self) -> (&CudaSlice<f32>, &CudaSlice<f32>) {
        (&self.u, &self.v)
    }

    /// The current U and V, to overwrite rows in place (halo exchanges; captured step graphs
    /// hold these addresses, so the buffers themselves never change).
    pub(crate) fn state_mut(&mut self) -> (&mut CudaSlice<f32>, &mut CudaSlice<f32>) {
        (&mut self.u, &mut self.v)
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
    fn step(&mut self, steps: u32) -> Result<()> {
        if steps == 0 {
            return Ok(());
        }
        if self.variant == Variant::V0 {
            return self.step_v0(steps);
        }
        if !self.use_graphs {
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

/// How frames leave the GPU.
enum FramePipeline {
    /// v0: the state is on the host; frames are colour-mapped there.
    Host(Vec<Vec<u8>>),
    /// Each frame colour-mapped when taken, copied back asynchronously.
    Async(AsyncFrames),
    /// v2: U and V gathered on the GPU, colour-mapped a batch per launch.
    Batched(BatchedFrames),
}

/// Frames in flight at once in the asynchronous pipeline.
const FRAME_SLOTS: usize = 3;

/// The asynchronous frame pipeline: a frame is colour-mapped on the simulation stream into
/// one of a few device slots; a copy stream waits for it and copies it to pinned host memory
/// while the simulation goes on; the host takes it once the copy's event has completed.
struct AsyncFrames {
    copy_stream: Arc<CudaStream>,
    slots: Vec<FrameSlot>,
    min_max: CudaSlice<u32>,
    /// Slot indices in submission order.
    in_flight: std::collections::VecDeque<usize>,
    next: usize,
    ready: Vec<Vec<u8>>,
}

struct FrameSlot {
    levels: CudaSlice<u8>,
    host: PinnedHostSlice<u8>,
    rendered: CudaEvent,
    copied: CudaEvent,
}

impl AsyncFrames {
    fn new(gpu: &Gpu, cells: usize) -> Result<Self> {
        let stream = gpu.stream();
        let ctx = stream.context();
        let mut slots = Vec::new();
        for _ in 0..FRAME_SLOTS {
            slots.push(FrameSlot {
                levels: stream.alloc_zeros::<u8>(cells).context(|| "allocating a frame".into())?,
                // SAFETY: every byte is written by a copy before it is read.
                host: unsafe { ctx.alloc_pinned_with_flags::<u8>(cells, 0) }
                    .pinned_context(|| "allocating pinned host memory for frames".into())?,
                rendered: ctx.new_event(None).context(|| "creating an event".into())?,
                copied: ctx.new_event(None).context(|| "creating an event".into())?,
            });
        }
        Ok(Self {
            copy_stream: ctx.new_stream().context(|| "creating the copy stream".into())?,
            slots,
            min_max: stream.alloc_zeros::<u32>(4).context(|| "allocating the reduction slots".into())?,
            in_flight: Default::default(),
            next: 0,
            ready: Vec::new(),
        })
    }

    fn snapshot(&mut self, gpu: &Gpu, u: &CudaSlice<f32>, v: &CudaSlice<f32>) -> Result<()> {
        let index = self.next;
        self.next = (self.next + 1) % FRAME_SLOTS;
        if self.in_flight.contains(&index) {
            // All slots busy: finish the oldest (this one) first.
            self.finish_oldest()?;
        }
        let cells = u.len() as u32;
        let slot = &mut self.slots[index];
        launch_min_max(gpu, u, v, cells, 1, &mut self.min_max)?;
        launch_colormap(gpu, u, v, cells, 1, &self.min_max, &mut slot.levels)?;
        slot.rendered.record(gpu.stream()).context(|| "recording a frame event".into())?;
        self.copy_stream.wait(&slot.rendered).context(|| "ordering the frame copy".into())?;
        self.copy_stream
            .memcpy_dtoh(&slot.levels, &mut slot.host)
            .context(|| "copying a frame back".into())?;
        slot.copied.record(&self.copy_stream).context(|| "recording a copy event".into())?;
        self.in_flight.push_back(index);
        Ok(())
    }

    fn finish_oldest(&mut self) -> Result<()> {
        let index = self.in_flight.pop_front().expect("a frame in flight");
        let slot = &self.slots[index];
        slot.copied.synchronize().context(|| "waiting for a frame".into())?;
        self.ready.push(slot.host.as_slice().context(|| "reading a frame".into())?.to_vec());
        Ok(())
    }

    fn collect(&mut self, wait: bool) -> Result<Vec<Vec<u8>>> {
        while let Some(&index) = self.in_flight.front() {
            if !wait && !self.slots[index].copied.is_complete() {
                break;
            }
            self.finish_oldest()?;
        }
        Ok(std::mem::take(&mut self.ready))
    }
}

/// v2's frames: U and V copied into a batch on the GPU; when the batch is full (or frames
/// are asked for), one reduction launch and one colormap launch cover the whole batch.
struct BatchedFrames {
    u: CudaSlice<f32>,
    v: CudaSlice<f32>,
    levels: CudaSlice<u8>,
    min_max: CudaSlice<u32>,
    count: usize,
    cells: usize,
    ready: Vec<Vec<u8>>,
}

impl BatchedFrames {
    fn new(gpu: &Gpu, cells: usize) -> Result<Self> {
        let stream = gpu.stream();
        let alloc =
            || stream.alloc_zeros::<f32>(cells * V2_BATCH).context(|| "allocating the frame batch".into());
        Ok(Self {
            u: alloc()?,
            v: alloc()?,
            levels: stream
                .alloc_zeros::<u8>(cells * V2_BATCH)
                .context(|| "allocating the frame batch".into())?,
            min_max: stream
                .alloc_zeros::<u32>(4 * V2_BATCH)
                .context(|| "allocating reduction slots".into())?,
            count: 0,
            cells,
            ready: Vec::new(),
        })
    }

    fn snapshot(&mut self, gpu: &Gpu, u: &CudaSlice<f32>, v: &CudaSlice<f32>) -> Result<()> {
        let range = self.count * self.cells..(self.count + 1) * self.cells;
        let stream = gpu.stream();
        stream.memcpy_dtod(u, &mut self.u.slice_mut(range.clone())).context(|| "gathering U".into())?;
        stream.memcpy_dtod(v, &mut self.v.slice_mut(range)).context(|| "gathering V".into())?;
        self.count += 1;
        if self.count == V2_BATCH {
            self.render(gpu)?;
        }
        Ok(())
    }

    fn render(&mut self, gpu: &Gpu) -> Result<()> {
        if self.count == 0 {
            return Ok(());
        }
        let (cells, frames) = (self.cells as u32, self.count as u32);
        launch_min_max(gpu, &self.u, &self.v, cells, frames, &mut self.min_max)?;
        launch_colormap(gpu, &self.u, &self.v, cells, frames, &self.min_max, &mut self.levels)?;
        let levels = gpu
            .stream()
            .clone_dtoh(&self.levels.slice(..self.count * self.cells))
            .context(|| "downloading frames".into())?;
        gpu.synchronize()?;
        self.ready.extend(levels.chunks(self.cells).map(<[u8]>::to_vec));
        self.count = 0;
        Ok(())
    }

    fn collect(&mut self, gpu: &Gpu, wait: bool) -> Result<Vec<Vec<u8>>> {
        if wait {
            self.render(gpu)?;
        }
        Ok(std::mem::take(&mut self.ready))
    }
}

/// `gray_scott_laplacian`: `lu = ∇²u`, `lv = ∇²v`.
pub fn launch_laplacian(
    gpu: &Gpu,
    u: &CudaSlice<f32>,
    v: &CudaSlice<f32>,
    lu: &mut CudaSlice<f32>,
    lv: &mut CudaSlice<f32>,
    width: u32,
    height: u32,
) -> Result<()> {
    // All buffers hold width × height cells and the grid covers exactly that.
    Ok(gpu.launch(gray_scott_laplacian, grid_2d(width, height, BLOCK_2D), (u, v, lu, lv, width, height))?)
}

/// `gray_scott_update`: one Euler step of `u`, `v` in place from `lu`, `lv`.
#[allow(clippy::too_many_arguments)]
pub fn launch_update(
    gpu: &Gpu,
    u: &mut CudaSlice<f32>,
    v: &mut CudaSlice<f32>,
    lu: &CudaSlice<f32>,
    lv: &CudaSlice<f32>,
    width: u32,
    height: u32,
    rates: Rates,
) -> Result<()> {
    // As in `launch_laplacian`.
    Ok(gpu.launch(
        gray_scott_update,
        grid_2d(width, height, BLOCK_2D),
        (u, v, lu, lv, width, height, rates),
    )?)
}

/// `gray_scott_fused`: one step from (`u`, `v`) into (`u_next`, `v_next`).
#[allow(clippy::too_many_arguments)]
pub fn launch_fused(
    gpu: &Gpu,
    u: &CudaSlice<f32>,
    v: &CudaSlice<f32>,
    u_next: &mut CudaSlice<f32>,
    v_next: &mut CudaSlice<f32>,
    width: u32,
    height: u32,
    rates: Rates,
    shape: FusedShape,
) -> Result<()> {
    let args = (u, v, u_next, v_next, width, height, rates, shape.rows);
    // Thread rows × `rows` cover the height; threads × `columns` the width.
    match shape.columns {
        1 => Ok(gpu.launch(
            gray_scott_fused,
            grid_2d(width, height.div_ceil(shape.rows), shape.block),
            args,
        )?),
        4 if width % 4 == 0 => Ok(gpu.launch(
            gray_scott_fused_x4,
            grid_2d(width / 4, height.div_ceil(shape.rows), shape.block),
            args,
        )?),
        4 => Err(Error::InvalidInput(format!(
            "the fused kernel with four columns per thread needs a width that is a multiple of 4, not {width}"
        ))),
        columns => Err(Error::InvalidInput(format!(
            "the fused kernel takes 1 or 4 columns per thread, not {columns}"
        ))),
    }
}

/// `gray_scott_tiled`: as fused, through a shared-memory tile.
#[allow(clippy::too_many_arguments)]
pub fn launch_tiled(
    gpu: &Gpu,
    u: &CudaSlice<f32>,
    v: &CudaSlice<f32>,
    u_next: &mut CudaSlice<f32>,
    v_next: &mut CudaSlice<f32>,
    width: u32,
    height: u32,
    rates: Rates,
) -> Result<()> {
    // The kernel needs blocks of exactly TILE_W × TILE_H.
    let cfg = grid_2d(width, height, (TILE_W, TILE_H));
    Ok(gpu.launch(gray_scott_tiled, cfg, (u, v, u_next, v_next, width, height, rates))?)
}

/// `gray_scott_temporal`: `steps` (≤ 8) steps from (`u`, `v`) into (`u_next`, `v_next`).
#[allow(clippy::too_many_arguments)]
pub fn launch_temporal(
    gpu: &Gpu,
    u: &CudaSlice<f32>,
    v: &CudaSlice<f32>,
    u_next: &mut CudaSlice<f32>,
    v_next: &mut CudaSlice<f32>,
    width: u32,
    height: u32,
    rates: Rates,
    steps: u32,
) -> Result<()> {
    assert!(steps <= TEMPORAL_MAX_STEPS, "at most {TEMPORAL_MAX_STEPS} steps per temporal launch");
    let (tile_w, tile_h) = temporal_tile(steps);
    let cfg = cudarc::driver::LaunchConfig {
        grid_dim: (width.div_ceil(tile_w), height.div_ceil(tile_h), 1),
        block_dim: (32 * TEMPORAL_WARPS as u32, 1, 1),
        shared_mem_bytes: 0,
    };
    debug_assert_eq!(TEMPORAL_SPAN_Y, TEMPORAL_WARPS as u32 * kernels::grayscott::TEMPORAL_ROWS as u32);
    // Tiles of `temporal_tile(steps)` cover the grid.
    Ok(gpu.launch(gray_scott_temporal, cfg, (u, v, u_next, v_next, width, height, rates, steps))?)
}

/// Evaluates `$body` with `$kernel` bound to the handle of the streaming kernel for `$cols`
/// cells per thread and `$steps` steps (`gray_scott_streaming_s{steps}` for two cells,
/// `gray_scott_streaming_c1_s{steps}` for one; each kernel's handle is its own type, so this
/// is a match rather than a table).
macro_rules! with_streaming_kernel {
    ($cols:expr, $steps:expr, $kernel:ident => $body:expr) => {
        match ($cols, $steps) {
            (2, 1) => {
                let $kernel = gray_scott_streaming_s1;
                $body
            }
            (2, 2) => {
                let $kernel = gray_scott_streaming_s2;
                $body
            }
            (2, 3) => {
                let $kernel = gray_scott_streaming_s3;
                $body
            }
            (2, 4) => {
                let $kernel = gray_scott_streaming_s4;
                $body
            }
            (2, 5) => {
                let $kernel = gray_scott_streaming_s5;
                $body
            }
            (2, 6) => {
                let $kernel = gray_scott_streaming_s6;
                $body
            }
            (2, 7) => {
                let $kernel = gray_scott_streaming_s7;
                $body
            }
            (2, 8) => {
                let $kernel = gray_scott_streaming_s8;
                $body
            }
            (1, 1) => {
                let $kernel = gray_scott_streaming_c1_s1;
                $body
            }
            (1, 2) => {
                let $kernel = gray_scott_streaming_c1_s2;
                $body
            }
            (1, 3) => {
                let $kernel = gray_scott_streaming_c1_s3;
                $body
            }
            (1, 4) => {
                let $kernel = gray_scott_streaming_c1_s4;
                $body
            }
            (1, 5) => {
                let $kernel = gray_scott_streaming_c1_s5;
                $body
            }
            (1, 6) => {
                let $kernel = gray_scott_streaming_c1_s6;
                $body
            }
            (1, 7) => {
                let $kernel = gray_scott_streaming_c1_s7;
                $body
            }
            (1, 8) => {
                let $kernel = gray_scott_streaming_c1_s8;
                $body
            }
            (cols, steps) => {
                unreachable!("no streaming kernel for {cols} cells per thread and {steps} steps")
            }
        }
    };
}

/// How many blocks of the streaming kernel for `steps` steps and `cols` cells per thread, with
/// `warps` warps, the GPU holds at once.
fn stream_resident_blocks(gpu: &Gpu, steps: u32, warps: u32, cols: u32) -> Result<u32> {
    let (threads, shared) = (32 * warps, stream_shared_bytes(steps, warps));
    with_streaming_kernel!(cols, steps, kernel => Ok(gpu.resident_blocks_with(kernel, threads, shared)?))
}

/// A streaming kernel: `steps` (≤ 8) steps from (`u`, `v`) into (`u_next`, `v_next`), with
/// the warps, chunk and cells per thread of `shape` (its `steps` is not used: the last launch
/// of a run may take fewer).
#[allow(clippy::too_many_arguments)]
pub fn launch_streaming(
    gpu: &Gpu,
    u: &CudaSlice<f32>,
    v: &CudaSlice<f32>,
    u_next: &mut CudaSlice<f32>,
    v_next: &mut CudaSlice<f32>,
    width: u32,
    height: u32,
    rates: Rates,
    shape: StreamShape,
    steps: u32,
) -> Result<()> {
    let launched = StreamShape { steps, ..shape };
    assert!(launched.is_valid(), "no streaming kernel for {launched:?}");
    // A chunk taller than the grid would only repeat rows.
    let chunk = shape.chunk.min(height.max(1));
    let cfg = cudarc::driver::LaunchConfig {
        grid_dim: (width.div_ceil(stream_strip(steps, shape.warps, shape.cols)), height.div_ceil(chunk), 1),
        block_dim: (32 * shape.warps, 1, 1),
        shared_mem_bytes: stream_shared_bytes(steps, shape.warps),
    };
    // Blocks of 32 × warps (≤ 4) threads with their shared planes; strips of `stream_strip`
    // columns and chunks of `chunk` rows cover the grid.
    let args = (u, v, u_next, v_next, width, height, rates, chunk);
    with_streaming_kernel!(shape.cols, steps, kernel => Ok(gpu.launch(kernel, cfg, args)?))
}

/// `field_min_max` over `frames` consecutive frames of `cells` cells: resets `slots`
/// (4 per frame) and reduces V and U into them (see [`MinMax`]).
pub fn launch_min_max(
    gpu: &Gpu,
    u: &CudaSlice<f32>,
    v: &CudaSlice<f32>,
    cells: u32,
    frames: u32,
    slots: &mut CudaSlice<u32>,
) -> Result<()> {
    let stream = gpu.stream();
    let reset: Vec<u32> = (0..frames).flat_map(|_| MinMax::EMPTY).collect();
    stream
        .memcpy_htod(&reset, &mut slots.slice_mut(..reset.len()))
        .context(|| "resetting the min/max slots".into())?;
    let block = MIN_MAX_BLOCK as u32;
    let cfg = cudarc::driver::LaunchConfig {
        grid_dim: (cells.div_ceil(block).clamp(1, 512), frames, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    };
    // Blocks of exactly MIN_MAX_BLOCK threads; `u`, `v` hold `frames × cells` values and
    // `slots` 4 per frame.
    Ok(gpu.launch(field_min_max, cfg, (u, v, cells, slots))?)
}

/// `colormap_levels` over `frames` consecutive frames: the palette level of every cell,
/// normalised by that frame's `slots`.
#[allow(clippy::too_many_arguments)]
pub fn launch_colormap(
    gpu: &Gpu,
    u: &CudaSlice<f32>,
    v: &CudaSlice<f32>,
    cells: u32,
    frames: u32,
    slots: &CudaSlice<u32>,
    levels: &mut CudaSlice<u8>,
) -> Result<()> {
    // All buffers hold `frames × cells` elements, `slots` 4 per frame.
    let mut cfg = grid_1d(cells, 256);
    cfg.grid_dim.1 = frames;
    Ok(gpu.launch(colormap_levels, cfg, (u, v, cells, slots, levels))?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every tuning candidate is valid, and its cache key reads back as itself.
    #[test]
    fn launch_settings_round_trip_through_their_cache_keys() {
        for shape in FusedShape::candidates(4096) {
            assert_eq!(FusedShape::parse(&shape.key()), Some(shape), "{}", shape.key());
        }
        assert_eq!(FusedShape::candidates(4094).len(), 28);
        assert!(FusedShape::candidates(4094).iter().all(|s| s.columns == 1));
        let four = FusedShape::candidates(4096);
        assert_eq!(four.len(), 28 + 3);
        assert!(four.contains(&FusedShape::default()), "the default stays a candidate");
        assert_eq!(FusedShape::default().key(), "128x2x4");
        assert_eq!(FusedShape { columns: 4, ..FusedShape::default() }.key(), "128x2x4x4");
        // An H200's 132 SMs holding 6 blocks each, on an odd grid.
        let candidates = StreamShape::candidates(4093, 3001, |_, _, _| 792);
        assert!(candidates.len() >= 2 * 7 * 4 * 3 && candidates.len() <= 2 * 7 * 4 * 7);
        for cols in [1, STREAM_COLS] {
            for steps in 2..=STREAM_MAX_STEPS {
                for warps in 1..=STREAM_MAX_WARPS {
                    let chunks: Vec<u32> = candidates
                        .iter()
                        .filter(|s| (s.steps, s.warps, s.cols) == (steps, warps, cols))
                        .map(|s| s.chunk)
                        .collect();
                    assert!([8, 16, 32].iter().all(|c| chunks.contains(c)), "{chunks:?}");
                    // The longest chunk fills one wave: its blocks fit on the GPU at once, and
                    // one row less per chunk would not.
                    let strips = 4093u32.div_ceil(stream_strip(steps, warps, cols));
                    let longest = *chunks.iter().max().unwrap();
                    assert!(strips * 3001u32.div_ceil(longest) <= 792, "s{steps}w{warps}c{cols}: {chunks:?}");
                    assert!(
                        strips * 3001u32.div_ceil(longest - 1) > 792,
                        "s{steps}w{warps}c{cols}: {chunks:?}"
                    );
                }
            }
        }
        for shape in candidates {
            assert!(shape.is_valid(), "{shape:?}");
            assert_eq!(StreamShape::parse(&shape.key()), Some(shape), "{}", shape.key());
            // The strip must hold output columns: the window exceeds the two halos.
            assert!(stream_strip(shape.steps, shape.warps, shape.cols) > 0);
        }
        assert_eq!(StreamShape::default().key(), "s4w1r32c2");
    }

    /// Cache entries from another version or edited by hand are ignored, not launched.
    #[test]
    fn malformed_or_unlaunchable_cache_entries_are_refused() {
        for text in [
            "",
            "s",
            "s4w1",
            "s4w1r",
            "s4w1r32",
            "s4w1r32c",
            "s4w1r32c0",
            "s4w1r32c3",
            "s4w1r32c4",
            "s0w1r32c2",
            "s9w1r32c2",
            "s4w0r32c2",
            "s4w5r32c2",
            "s4w1r0c2",
            "8",
            "s4c2w1r32",
        ] {
            assert_eq!(StreamShape::parse(text), None, "{text:?}");
        }
        for text in
            ["", "128x2", "0x2x4", "2048x1x4", "128x2x0", "128x2x65", "axbxc", "128x2x4x2", "128x2x4x4x4"]
        {
            assert_eq!(FusedShape::parse(text), None, "{text:?}");
        }
    }

    /// The shared memory a streaming block gets covers the planes it indexes: 2·T planes of
    /// one float4 per thread plus one at each end.
    #[test]
    fn streaming_shared_memory_matches_its_layout() {
        for steps in 1..=STREAM_MAX_STEPS {
            for warps in 1..=STREAM_MAX_WARPS {
                let floats_per_plane = 4 * (32 * warps + 2);
                assert_eq!(stream_shared_bytes(steps, warps), 2 * steps * floats_per_plane * 4);
            }
        }
        // The largest block stays under the 48 KiB a launch gets without opting in.
        assert!(stream_shared_bytes(STREAM_MAX_STEPS, STREAM_MAX_WARPS) <= 48 * 1024);
    }
}
