//! Launch shapes of `fused`, `temporal` and `streaming`, and their tuning: candidates timed
//! on the GPU once per GPU and grid size, then cached.

use cudarc::driver::CudaSlice;
use kernels::grayscott::{STREAM_COLS, STREAM_MAX_STEPS, STREAM_MAX_WARPS, TEMPORAL_MAX_STEPS, stream_strip};

use super::*;
use crate::{
    cuda::Gpu,
    error::{CudaContext as _, Result},
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

/// Times `run` as [`time_candidate`] does, replayed from a CUDA graph captured from it once
/// (the way a run steps), instead of launched from the host each time.
fn time_candidate_in_graph(gpu: &Gpu, run: impl FnOnce() -> Result<()>) -> Result<f64> {
    use cudarc::driver::sys;
    let stream = gpu.stream();
    stream
        .begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
        .context(|| "starting a tuning graph's capture".into())?;
    let captured = run();
    let graph =
        stream.end_capture(sys::CUgraphInstantiate_flags(0)).context(|| "capturing a tuning graph".into());
    captured?;
    let graph = graph?.expect("the capture recorded launches");
    time_candidate(gpu, || graph.launch().context(|| "replaying a tuning graph".into()))
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
        crate::stderr_line!("tune {kernel} {width}x{height}: {label}: {us:.3} µs per step");
    }
}

/// Times every [`FusedShape::candidates`] on a `width × height` grid of random fields with
/// device events, and returns the fastest.
pub fn tune_fused(gpu: &Gpu, width: u32, height: u32) -> Result<FusedShape> {
    let cells = width as usize * height as usize;
    let mut fields = TuningFields::new(gpu, cells)?;
    let rates = crate::grayscott::preset("coral").expect("preset").rates();
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
    let rates = crate::grayscott::preset("coral").expect("preset").rates();
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

/// Times every [`StreamShape::candidates`] on random fields and returns the fastest per step,
/// each replayed from a CUDA graph as a run steps: at small sizes a launch is short, and timed
/// launched from the host one by one the tuner chose, on an H100 at 512², a shape that took
/// 1.62 µs a step in `bench`'s graph where another took 1.32 µs in a graph of the same
/// kernels run by `scripts/pdl-gs.cu` (two programs: docs/performance.md).
pub fn tune_streaming(gpu: &Gpu, width: u32, height: u32) -> Result<StreamShape> {
    let cells = width as usize * height as usize;
    let mut fields = TuningFields::new(gpu, cells)?;
    let rates = crate::grayscott::preset("coral").expect("preset").rates();
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
        let ms = time_candidate_in_graph(gpu, || {
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
    // Tuned apart with and without programmatic launches (their ranking may differ).
    let kernel = match programmatic_streaming(gpu) {
        true => "gray_scott_streaming+programmatic",
        false => "gray_scott_streaming",
    };
    tuned(
        gpu,
        kernel,
        (width, height),
        autotune,
        StreamShape::default(),
        StreamShape::parse,
        StreamShape::key,
        tune,
    )
}
