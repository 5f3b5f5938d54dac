//! Host functions that allocate, launch and read back each kernel: the launch shapes
//! (`*_config`, shared with the bench's nvcc twins so that both run the same grid), launches
//! on device buffers (for the bench) and whole round trips from host slices (for the tests).

use cookbook_kernels as k;
use ptxkit_host::{
    Error, Gpu, Result,
    cudarc::driver::{CudaSlice, LaunchConfig},
    grid_1d, grid_2d,
};

pub use cookbook_kernels::F32x4;

/// Copies `data` to a new device buffer.
pub fn upload<T: ptxkit_host::cudarc::driver::DeviceRepr>(gpu: &Gpu, data: &[T]) -> Result<CudaSlice<T>> {
    gpu.stream().clone_htod(data).map_err(Error::driver("copying an input to the GPU"))
}

/// A zeroed device buffer of `len` values.
pub fn zeros<T: ptxkit_host::cudarc::driver::DeviceRepr + ptxkit_host::cudarc::driver::ValidAsZeroBits>(
    gpu: &Gpu,
    len: usize,
) -> Result<CudaSlice<T>> {
    gpu.stream().alloc_zeros(len).map_err(Error::driver("allocating a device buffer"))
}

/// Copies `buffer` back to the host (waiting for the work queued before it).
pub fn download<T: ptxkit_host::cudarc::driver::DeviceRepr + Default + Clone>(
    gpu: &Gpu,
    buffer: &CudaSlice<T>,
) -> Result<Vec<T>> {
    gpu.stream().clone_dtoh(buffer).map_err(Error::driver("copying a result from the GPU"))
}

/// Converts a host length to the kernels' `u32`, refusing lengths past it.
fn len_u32(len: usize, what: &str) -> Result<u32> {
    u32::try_from(len).map_err(|_| Error::InvalidLaunch(format!("{what}: {len} elements exceed u32")))
}

// ---- 1. reduction ----------------------------------------------------------------------------

/// The reduction's grid: blocks of [`k::REDUCE_BLOCK`], about 16 elements per thread, at most
/// 2048 blocks (the grid-stride loop takes the rest).
pub fn reduce_config(n: u32) -> LaunchConfig {
    let blocks = n.div_ceil(k::REDUCE_BLOCK * 16).clamp(1, 2048);
    LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (k::REDUCE_BLOCK, 1, 1), shared_mem_bytes: 0 }
}

/// Queues `sum ← Σ x` (`sum` one element, zeroed here first).
pub fn reduce_sum_launch(gpu: &Gpu, x: &CudaSlice<f32>, sum: &mut CudaSlice<f32>) -> Result<()> {
    let n = len_u32(x.len(), "reduce")?;
    gpu.stream().memset_zeros(sum).map_err(Error::driver("zeroing the sum"))?;
    gpu.launch(k::reduce_sum_f32, reduce_config(n), (x, n, sum))
}

/// The sum of `x` on the GPU.
pub fn reduce_sum(gpu: &Gpu, x: &[f32]) -> Result<f32> {
    let x = upload(gpu, x)?;
    let mut sum = zeros::<f32>(gpu, 1)?;
    reduce_sum_launch(gpu, &x, &mut sum)?;
    Ok(download(gpu, &sum)?[0])
}

// ---- 2. transpose ----------------------------------------------------------------------------

/// The transpose's grid: one block of 32×8 threads per 32×32 tile of the input.
pub fn transpose_config(width: u32, height: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (width.div_ceil(k::TRANSPOSE_TILE), height.div_ceil(k::TRANSPOSE_TILE), 1),
        block_dim: (k::TRANSPOSE_TILE, k::TRANSPOSE_ROWS, 1),
        shared_mem_bytes: 0,
    }
}

/// Queues `output ← inputᵀ` (`input` has `height` rows of `width`).
pub fn transpose_launch(
    gpu: &Gpu,
    input: &CudaSlice<f32>,
    output: &mut CudaSlice<f32>,
    width: u32,
    height: u32,
) -> Result<()> {
    check_len(input.len(), width as usize * height as usize, "transpose input")?;
    check_len(output.len(), width as usize * height as usize, "transpose output")?;
    gpu.launch(k::transpose_f32, transpose_config(width, height), (input, output, width, height))
}

/// `input` (`height` rows of `width`) transposed, on the GPU.
pub fn transpose(gpu: &Gpu, input: &[f32], width: u32, height: u32) -> Result<Vec<f32>> {
    let d_input = upload(gpu, input)?;
    let mut output = zeros::<f32>(gpu, input.len())?;
    transpose_launch(gpu, &d_input, &mut output, width, height)?;
    download(gpu, &output)
}

fn check_len(len: usize, expected: usize, what: &str) -> Result<()> {
    if len == expected {
        Ok(())
    } else {
        Err(Error::InvalidLaunch(format!("{what}: {len} elements, expected {expected}")))
    }
}

// ---- 3. histogram ----------------------------------------------------------------------------

/// The histogram's grid: blocks of 256, about 16 words per thread, at most 1024 blocks.
pub fn histogram_config(n_words: u32) -> LaunchConfig {
    let blocks = n_words.div_ceil(k::HISTOGRAM_BLOCK * 16).clamp(1, 1024);
    LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (k::HISTOGRAM_BLOCK, 1, 1), shared_mem_bytes: 0 }
}

/// Queues `bins ← the histogram of the bytes of words` (`bins`: 256, zeroed here first).
pub fn histogram_launch(gpu: &Gpu, words: &CudaSlice<u32>, bins: &mut CudaSlice<u32>) -> Result<()> {
    let n = len_u32(words.len(), "histogram")?;
    check_len(bins.len(), 256, "histogram bins")?;
    gpu.stream().memset_zeros(bins).map_err(Error::driver("zeroing the bins"))?;
    gpu.launch(k::histogram_256, histogram_config(n), (words, n, bins))
}

/// The histogram of the bytes of `words`, on the GPU.
pub fn histogram_256(gpu: &Gpu, words: &[u32]) -> Result<Vec<u32>> {
    let d_words = upload(gpu, words)?;
    let mut bins = zeros::<u32>(gpu, 256)?;
    histogram_launch(gpu, &d_words, &mut bins)?;
    download(gpu, &bins)
}

// ---- 4. scan ---------------------------------------------------------------------------------

/// The number of tiles (and blocks of the first and last pass) for `n` elements.
pub fn scan_tiles_for(n: u32) -> u32 {
    n.div_ceil(k::SCAN_TILE).max(1)
}

/// The launch shapes of the scan's three passes: tile sums, the scan of the tile sums (one
/// block of 1024), the tiles.
pub fn scan_configs(n: u32) -> [LaunchConfig; 3] {
    let tiles = scan_tiles_for(n);
    let per_tile =
        LaunchConfig { grid_dim: (tiles, 1, 1), block_dim: (k::SCAN_BLOCK, 1, 1), shared_mem_bytes: 0 };
    let sums =
        LaunchConfig { grid_dim: (1, 1, 1), block_dim: (k::SCAN_SUMS_BLOCK, 1, 1), shared_mem_bytes: 0 };
    [per_tile, sums, per_tile]
}

/// Queues `output ← the exclusive prefix sum of input`, with `tile_sums` (at least
/// [`scan_tiles_for`]`(n)` elements) as scratch.
pub fn scan_launch(
    gpu: &Gpu,
    input: &CudaSlice<u32>,
    tile_sums: &mut CudaSlice<u32>,
    output: &mut CudaSlice<u32>,
) -> Result<()> {
    let n = len_u32(input.len(), "scan")?;
    check_len(output.len(), input.len(), "scan output")?;
    let tiles = scan_tiles_for(n);
    if tile_sums.len() < tiles as usize {
        return Err(Error::InvalidLaunch(format!("scan: {} tile sums for {tiles} tiles", tile_sums.len())));
    }
    let [first, second, third] = scan_configs(n);
    gpu.launch(k::scan_tile_sums, first, (input, n, &mut *tile_sums))?;
    gpu.launch(k::scan_block_sums, second, (&mut *tile_sums, tiles))?;
    gpu.launch(k::scan_tiles, third, (input, n, &*tile_sums, output))
}

/// The exclusive prefix sum of `input` (wrapping), on the GPU.
pub fn exclusive_scan(gpu: &Gpu, input: &[u32]) -> Result<Vec<u32>> {
    let n = len_u32(input.len(), "scan")?;
    let d_input = upload(gpu, input)?;
    let mut tile_sums = zeros::<u32>(gpu, scan_tiles_for(n) as usize)?;
    let mut output = zeros::<u32>(gpu, input.len())?;
    scan_launch(gpu, &d_input, &mut tile_sums, &mut output)?;
    download(gpu, &output)
}

// ---- 5. SGEMM --------------------------------------------------------------------------------

/// Whether `m × k` times `k × n` fits the SGEMM's tiles: `m`, `n` multiples of 64, `k` of 16.
pub fn sgemm_shape_ok(m: u32, n: u32, depth: u32) -> bool {
    m > 0
        && n > 0
        && depth > 0
        && m.is_multiple_of(k::SGEMM_TILE)
        && n.is_multiple_of(k::SGEMM_TILE)
        && depth.is_multiple_of(k::SGEMM_DEPTH)
}

/// The SGEMM's grid: one block of 256 per 64×64 tile of C.
pub fn sgemm_config(m: u32, n: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (n / k::SGEMM_TILE, m / k::SGEMM_TILE, 1),
        block_dim: (k::SGEMM_BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Queues `c ← a · b` (`a` is `m × k`, `b` is `k × n`, row-major; shapes per [`sgemm_shape_ok`]).
pub fn sgemm_launch(
    gpu: &Gpu,
    a: &CudaSlice<f32>,
    b: &CudaSlice<f32>,
    c: &mut CudaSlice<f32>,
    (m, n, depth): (u32, u32, u32),
) -> Result<()> {
    if !sgemm_shape_ok(m, n, depth) {
        return Err(Error::InvalidLaunch(format!(
            "sgemm: {m}x{depth} times {depth}x{n}: m, n must be multiples of 64, k of 16"
        )));
    }
    check_len(a.len(), m as usize * depth as usize, "sgemm a")?;
    check_len(b.len(), depth as usize * n as usize, "sgemm b")?;
    check_len(c.len(), m as usize * n as usize, "sgemm c")?;
    gpu.launch(k::sgemm_64x64, sgemm_config(m, n), (a, b, c, m, n, depth))
}

/// `a · b` on the GPU.
pub fn sgemm(gpu: &Gpu, a: &[f32], b: &[f32], (m, n, depth): (u32, u32, u32)) -> Result<Vec<f32>> {
    let (d_a, d_b) = (upload(gpu, a)?, upload(gpu, b)?);
    let mut c = zeros::<f32>(gpu, m as usize * n as usize)?;
    sgemm_launch(gpu, &d_a, &d_b, &mut c, (m, n, depth))?;
    download(gpu, &c)
}

// ---- 6. n-body -------------------------------------------------------------------------------

/// The n-body grid: one thread per body, blocks of 256.
pub fn nbody_config(n: u32) -> LaunchConfig {
    grid_1d(n.max(1), k::NBODY_BLOCK)
}

/// Queues `accelerations ← the acceleration of each body from all` (bodies: x, y, z, mass).
pub fn nbody_launch(
    gpu: &Gpu,
    bodies: &CudaSlice<F32x4>,
    accelerations: &mut CudaSlice<F32x4>,
    softening2: f32,
) -> Result<()> {
    let n = len_u32(bodies.len(), "nbody")?;
    check_len(accelerations.len(), bodies.len(), "nbody accelerations")?;
    gpu.launch(k::nbody_accelerations, nbody_config(n), (bodies, accelerations, n, softening2))
}

/// The accelerations of `bodies` (`[x, y, z, mass]` each) on the GPU, `[ax, ay, az, 0]` each.
pub fn nbody_accelerations(gpu: &Gpu, bodies: &[[f32; 4]], softening2: f32) -> Result<Vec<[f32; 4]>> {
    let packed: Vec<F32x4> = bodies.iter().map(|&b| F32x4::from_array(b)).collect();
    let d_bodies = upload(gpu, &packed)?;
    let mut accelerations = zeros::<F32x4>(gpu, bodies.len())?;
    nbody_launch(gpu, &d_bodies, &mut accelerations, softening2)?;
    Ok(download(gpu, &accelerations)?.into_iter().map(F32x4::to_array).collect())
}

// ---- 7. softmax ------------------------------------------------------------------------------

/// The softmax grid: one warp per row, 8 rows per block of 256.
pub fn softmax_config(rows: u32) -> LaunchConfig {
    grid_1d(rows.max(1) * 32, k::SOFTMAX_BLOCK)
}

/// Queues `output ← the softmax of each row of input` (`rows × cols`).
pub fn softmax_launch(
    gpu: &Gpu,
    input: &CudaSlice<f32>,
    output: &mut CudaSlice<f32>,
    rows: u32,
    cols: u32,
) -> Result<()> {
    check_len(input.len(), rows as usize * cols as usize, "softmax input")?;
    check_len(output.len(), input.len(), "softmax output")?;
    gpu.launch(k::softmax_rows, softmax_config(rows), (input, output, rows, cols))
}

/// The softmax of each row of `input` (`rows × cols`) on the GPU.
pub fn softmax_rows(gpu: &Gpu, input: &[f32], rows: u32, cols: u32) -> Result<Vec<f32>> {
    let d_input = upload(gpu, input)?;
    let mut output = zeros::<f32>(gpu, input.len())?;
    softmax_launch(gpu, &d_input, &mut output, rows, cols)?;
    download(gpu, &output)
}

// ---- 8. safe kernels and their raw-pointer twins -----------------------------------------------

/// Which of a pair of kernels to run: the safe one (slices) or its `unsafe` raw-pointer twin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavour {
    Safe,
    Raw,
}

/// The elementwise grid: one thread per element, blocks of 256.
pub fn saxpy_config(n: u32) -> LaunchConfig {
    grid_1d(n.max(1), k::ELEMENTWISE_BLOCK)
}

/// The stencil grid: one thread per cell, blocks of 32×8.
pub fn jacobi_config(width: u32, height: u32) -> LaunchConfig {
    grid_2d(width, height, k::STENCIL_BLOCK)
}

/// Queues `out ← a·x + y` with the safe kernel or its raw twin.
pub fn saxpy_launch(
    gpu: &Gpu,
    flavour: Flavour,
    x: &CudaSlice<f32>,
    y: &CudaSlice<f32>,
    out: &mut CudaSlice<f32>,
    a: f32,
) -> Result<()> {
    let n = len_u32(x.len(), "saxpy")?;
    check_len(y.len(), x.len(), "saxpy y")?;
    check_len(out.len(), x.len(), "saxpy out")?;
    match flavour {
        Flavour::Safe => gpu.launch(k::saxpy, saxpy_config(n), (x, y, out, a)),
        Flavour::Raw => gpu.launch(k::saxpy_raw, saxpy_config(n), (x, y, out, n, a)),
    }
}

/// `a·x + y` on the GPU.
pub fn saxpy(gpu: &Gpu, flavour: Flavour, a: f32, x: &[f32], y: &[f32]) -> Result<Vec<f32>> {
    let (d_x, d_y) = (upload(gpu, x)?, upload(gpu, y)?);
    let mut out = zeros::<f32>(gpu, x.len())?;
    saxpy_launch(gpu, flavour, &d_x, &d_y, &mut out, a)?;
    download(gpu, &out)
}

/// Queues one Jacobi sweep `output ← J(input)` on a `width × height` grid with the safe kernel
/// or its raw twin.
pub fn jacobi_launch(
    gpu: &Gpu,
    flavour: Flavour,
    input: &CudaSlice<f32>,
    output: &mut CudaSlice<f32>,
    width: u32,
    height: u32,
) -> Result<()> {
    check_len(input.len(), width as usize * height as usize, "jacobi input")?;
    check_len(output.len(), input.len(), "jacobi output")?;
    let config = jacobi_config(width, height);
    match flavour {
        Flavour::Safe => {
            let rows = ptxkit_host::RowsMut::new(output, width as usize);
            gpu.launch(k::jacobi_5pt, config, (ptxkit_host::Rows::new(input, width as usize), rows))
        }
        Flavour::Raw => gpu.launch(k::jacobi_5pt_raw, config, (input, output, width, height)),
    }
}

/// One Jacobi sweep of `input` (`width × height`) on the GPU.
pub fn jacobi_5pt(gpu: &Gpu, flavour: Flavour, input: &[f32], width: u32, height: u32) -> Result<Vec<f32>> {
    let d_input = upload(gpu, input)?;
    let mut output = zeros::<f32>(gpu, input.len())?;
    jacobi_launch(gpu, flavour, &d_input, &mut output, width, height)?;
    download(gpu, &output)
}

// ---- 10. half-precision GEMM on the tensor cores -----------------------------------------------

/// The half-precision GEMM's grid: one block of [`k::HGEMM_BLOCK`] threads per 64 × 64 tile of C.
pub fn hgemm_config(m: u32, n: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (n.div_ceil(k::HGEMM_TILE), m.div_ceil(k::HGEMM_TILE), 1),
        block_dim: (k::HGEMM_BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// The inputs of the half-precision GEMM: f16 or bf16.
pub trait HalfInput: ptxkit_host::cudarc::driver::DeviceRepr + Copy {
    /// The value nearest `x` (round to nearest even).
    fn from_f32(x: f32) -> Self;
    /// The value as an `f32` (exact).
    fn to_f32(self) -> f32;
    /// Queues `c ← a·bᵀ` on the GPU with this input type's kernel.
    fn launch(
        gpu: &Gpu,
        a: &CudaSlice<Self>,
        b: &CudaSlice<Self>,
        c: &mut CudaSlice<f32>,
        dims: [u32; 3],
    ) -> Result<()>;
}

impl HalfInput for k::F16 {
    fn from_f32(x: f32) -> Self {
        Self::from_f32(x)
    }
    fn to_f32(self) -> f32 {
        self.to_f32()
    }
    fn launch(
        gpu: &Gpu,
        a: &CudaSlice<Self>,
        b: &CudaSlice<Self>,
        c: &mut CudaSlice<f32>,
        [m, n, kd]: [u32; 3],
    ) -> Result<()> {
        gpu.launch(k::hgemm_f16, hgemm_config(m, n), (a, b, c, m, n, kd))
    }
}

impl HalfInput for k::BF16 {
    fn from_f32(x: f32) -> Self {
        Self::from_f32(x)
    }
    fn to_f32(self) -> f32 {
        self.to_f32()
    }
    fn launch(
        gpu: &Gpu,
        a: &CudaSlice<Self>,
        b: &CudaSlice<Self>,
        c: &mut CudaSlice<f32>,
        [m, n, kd]: [u32; 3],
    ) -> Result<()> {
        gpu.launch(k::hgemm_bf16, hgemm_config(m, n), (a, b, c, m, n, kd))
    }
}

/// Queues `c ← a·bᵀ` (`a` `m × k`, `b` `n × k`, `c` `m × n`, row-major), `k` a multiple of 8.
pub fn hgemm_launch<H: HalfInput>(
    gpu: &Gpu,
    a: &CudaSlice<H>,
    b: &CudaSlice<H>,
    c: &mut CudaSlice<f32>,
    m: u32,
    n: u32,
    kd: u32,
) -> Result<()> {
    if !kd.is_multiple_of(8) {
        return Err(Error::InvalidLaunch(format!(
            "hgemm: k = {kd} is not a multiple of 8 (the kernel copies rows in 16-byte chunks)"
        )));
    }
    check_len(a.len(), m as usize * kd as usize, "hgemm a")?;
    check_len(b.len(), n as usize * kd as usize, "hgemm b")?;
    check_len(c.len(), m as usize * n as usize, "hgemm c")?;
    H::launch(gpu, a, b, c, [m, n, kd])
}

/// `a·bᵀ` on the GPU's tensor cores, from halves.
pub fn hgemm<H: HalfInput>(gpu: &Gpu, a: &[H], b: &[H], m: u32, n: u32, kd: u32) -> Result<Vec<f32>> {
    let (d_a, d_b) = (upload(gpu, a)?, upload(gpu, b)?);
    let mut c = zeros::<f32>(gpu, m as usize * n as usize)?;
    hgemm_launch(gpu, &d_a, &d_b, &mut c, m, n, kd)?;
    download(gpu, &c)
}

// ---- 15. the tiled stencil (safe and raw) and the look-back scan -------------------------------

/// The tiled stencil's grid: one thread per cell, blocks of exactly [`k::TILED_BLOCK`] (32×8:
/// the kernels place their tile by it).
pub fn jacobi_tiled_config(width: u32, height: u32) -> LaunchConfig {
    grid_2d(width, height, k::TILED_BLOCK)
}

/// Queues one Jacobi sweep `output ← J(input)` on a `width × height` grid through a shared
/// tile, with the safe kernel ([`k::jacobi_5pt_tiled`]) or its raw twin.
pub fn jacobi_tiled_launch(
    gpu: &Gpu,
    flavour: Flavour,
    input: &CudaSlice<f32>,
    output: &mut CudaSlice<f32>,
    width: u32,
    height: u32,
) -> Result<()> {
    check_len(input.len(), width as usize * height as usize, "jacobi_tiled input")?;
    check_len(output.len(), input.len(), "jacobi_tiled output")?;
    let config = jacobi_tiled_config(width, height);
    match flavour {
        Flavour::Safe => {
            let rows = ptxkit_host::RowsMut::new(output, width as usize);
            gpu.launch(k::jacobi_5pt_tiled, config, (ptxkit_host::Rows::new(input, width as usize), rows))
        }
        Flavour::Raw => gpu.launch(k::jacobi_5pt_tiled_raw, config, (input, output, width, height)),
    }
}

/// One Jacobi sweep of `input` (`width × height`) through a shared tile, on the GPU.
pub fn jacobi_5pt_tiled(
    gpu: &Gpu,
    flavour: Flavour,
    input: &[f32],
    width: u32,
    height: u32,
) -> Result<Vec<f32>> {
    let d_input = upload(gpu, input)?;
    let mut output = zeros::<f32>(gpu, input.len())?;
    jacobi_tiled_launch(gpu, flavour, &d_input, &mut output, width, height)?;
    download(gpu, &output)
}

/// The look-back scan's tiles (and blocks) for `n` elements: ⌈n / [`k::LOOKBACK_TILE`]⌉, at
/// least 1.
pub fn scan_lookback_tiles(n: u32) -> u32 {
    n.div_ceil(k::LOOKBACK_TILE).max(1)
}

/// The look-back scan's grid: a block of [`k::LOOKBACK_BLOCK`] per tile.
pub fn scan_lookback_config(n: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (scan_lookback_tiles(n), 1, 1),
        block_dim: (k::LOOKBACK_BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// The `u64` words of the look-back scan's state for `n` elements: a status word per tile and
/// the ticket counter after them.
pub fn scan_lookback_state_len(n: u32) -> usize {
    scan_lookback_tiles(n) as usize + 1
}

/// Queues `output ← the exclusive prefix sum of input` in one pass (zeroing `state`, at least
/// [`scan_lookback_state_len`]`(n)` words, first: the kernel's status words and ticket).
pub fn scan_lookback_launch(
    gpu: &Gpu,
    input: &CudaSlice<u32>,
    state: &mut CudaSlice<u64>,
    output: &mut CudaSlice<u32>,
) -> Result<()> {
    let n = len_u32(input.len(), "scan_lookback")?;
    check_len(output.len(), input.len(), "scan_lookback output")?;
    let words = scan_lookback_state_len(n);
    if state.len() < words {
        return Err(Error::InvalidLaunch(format!(
            "scan_lookback: {} state words, {words} needed",
            state.len()
        )));
    }
    let mut state = state.slice_mut(..words);
    gpu.stream().memset_zeros(&mut state).map_err(Error::driver("zeroing the look-back state"))?;
    gpu.launch(k::scan_lookback, scan_lookback_config(n), (input, n, output, &mut state))
}

/// The exclusive prefix sum of `input` (wrapping) by the single-pass look-back scan, on the GPU.
pub fn exclusive_scan_lookback(gpu: &Gpu, input: &[u32]) -> Result<Vec<u32>> {
    let n = len_u32(input.len(), "scan_lookback")?;
    let d_input = upload(gpu, input)?;
    let mut state = zeros::<u64>(gpu, scan_lookback_state_len(n))?;
    let mut output = zeros::<u32>(gpu, input.len())?;
    scan_lookback_launch(gpu, &d_input, &mut state, &mut output)?;
    download(gpu, &output)
}
