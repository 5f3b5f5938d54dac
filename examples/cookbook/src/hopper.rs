//! Host functions for the Hopper kernels (`kernels/src/hopper.rs`, sm_90 only): each opens
//! nothing itself; pass a `Gpu` opened with [`HOPPER_IMAGES`](crate::HOPPER_IMAGES).

use cookbook_kernels as k;
use ptxkit_host::{
    Error, Gpu, Result, TensorMapSpec, TmaSwizzle,
    cudarc::driver::{CudaSlice, LaunchConfig},
};

use crate::gpu::{download, upload, zeros};

/// `input` (`height` rows of `width`) transposed through TMA boxes of 32 × 32. TMA needs rows
/// of a multiple of 16 bytes: `width` and `height` multiples of 4 (refused otherwise).
pub fn tma_transpose(gpu: &Gpu, input: &[f32], width: u32, height: u32) -> Result<Vec<f32>> {
    if input.len() != width as usize * height as usize {
        return Err(Error::InvalidLaunch(format!(
            "tma_transpose: {} elements, expected {width} × {height}",
            input.len()
        )));
    }
    let d_input = upload(gpu, input)?;
    let output = zeros::<f32>(gpu, input.len())?;
    let tile = k::TMA_TILE;
    let input_map =
        gpu.tensor_map(&d_input, TensorMapSpec::packed([width.into(), height.into()], [tile, tile]))?;
    let output_map =
        gpu.tensor_map(&output, TensorMapSpec::packed([height.into(), width.into()], [tile, tile]))?;
    let config = LaunchConfig {
        grid_dim: (width.div_ceil(tile), height.div_ceil(tile), 1),
        block_dim: (k::TMA_BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    gpu.launch(k::tma_transpose_f32, config, (&input_map, &output_map))?;
    drop((input_map, output_map));
    download(gpu, &output)
}

/// `a·x` through TMA bulk copies of 2048 elements.
pub fn bulk_scale(gpu: &Gpu, a: f32, x: &[f32]) -> Result<Vec<f32>> {
    let n = u32::try_from(x.len())
        .map_err(|_| Error::InvalidLaunch("bulk_scale: more than u32 elements".into()))?;
    let d_x = upload(gpu, x)?;
    let mut y = zeros::<f32>(gpu, x.len())?;
    if n > 0 {
        let config = LaunchConfig {
            grid_dim: (n.div_ceil(k::BULK_CHUNK), 1, 1),
            block_dim: (k::TMA_BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        gpu.launch(k::bulk_scale_f32, config, (&d_x, &mut y, n, a))?;
    }
    download(gpu, &y)
}

/// `steps` steps of `v ← a·v + b` on each value of `x`, one launch of
/// [`k::chain_step_f32`] a step (two buffers in turn), each launched with programmatic
/// dependence where `programmatic` (it may start while the step before is finishing), else
/// the ordinary way.
pub fn chain(gpu: &Gpu, x: &[f32], (a, b): (f32, f32), steps: u32, programmatic: bool) -> Result<Vec<f32>> {
    let n = u32::try_from(x.len()).map_err(|_| Error::InvalidLaunch("chain: more than u32 values".into()))?;
    let (mut from, mut to) = (upload(gpu, x)?, zeros::<f32>(gpu, x.len())?);
    if n == 0 {
        return Ok(Vec::new());
    }
    let config = LaunchConfig {
        grid_dim: (n.div_ceil(k::CHAIN_BLOCK), 1, 1),
        block_dim: (k::CHAIN_BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    for _ in 0..steps {
        let args = (&from, &mut to, n, a, b);
        if programmatic {
            // SAFETY: every thread of `chain_step_f32` waits for the step before
            // (`grid::dependency_synchronize`) before it reads `from` or writes `to`.
            unsafe { gpu.launch_programmatic(k::chain_step_f32, config, args)? };
        } else {
            gpu.launch(k::chain_step_f32, config, args)?;
        }
        std::mem::swap(&mut from, &mut to);
    }
    download(gpu, &from)
}

/// The 1024-bin histogram (`v % 1024`) of `values`, by clusters of
/// [`k::HISTOGRAM_CLUSTER`] blocks sharing their bins through distributed shared memory;
/// `clusters` clusters in the grid.
pub fn cluster_histogram(gpu: &Gpu, values: &[u32], clusters: u32) -> Result<Vec<u32>> {
    let n = u32::try_from(values.len())
        .map_err(|_| Error::InvalidLaunch("cluster_histogram: more than u32 values".into()))?;
    let d_values = upload(gpu, values)?;
    let mut bins = zeros::<u32>(gpu, k::CLUSTER_BINS as usize)?;
    let config = LaunchConfig {
        grid_dim: (clusters * k::HISTOGRAM_CLUSTER, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    gpu.launch_cluster(
        k::cluster_histogram_1024,
        config,
        (k::HISTOGRAM_CLUSTER, 1, 1),
        (&d_values, n, &mut bins),
    )?;
    download(gpu, &bins)
}

/// `a·bᵀ` (`a` `m × k`, `b` `n × k`, row-major bf16) on Hopper's warpgroup MMA, `k` a multiple
/// of 8 (refused otherwise).
pub fn wgmma_gemm(gpu: &Gpu, a: &[k::BF16], b: &[k::BF16], m: u32, n: u32, kd: u32) -> Result<Vec<f32>> {
    wgmma_gemm_with(gpu, a, b, (m, n, kd), false)
}

/// [`wgmma_gemm`] or [`wgmma_gemm_rs`].
fn wgmma_gemm_with(
    gpu: &Gpu,
    a: &[k::BF16],
    b: &[k::BF16],
    (m, n, kd): (u32, u32, u32),
    register_a: bool,
) -> Result<Vec<f32>> {
    check_depth("wgmma_gemm", kd, "the kernel copies rows in 16-byte chunks")?;
    check_operands("wgmma_gemm", (a.len(), b.len()), (m, n, kd))?;
    let (d_a, d_b) = (upload(gpu, a)?, upload(gpu, b)?);
    let mut c = zeros::<f32>(gpu, m as usize * n as usize)?;
    let config = LaunchConfig {
        grid_dim: (n.div_ceil(k::WGMMA_TILE), m.div_ceil(k::WGMMA_TILE), 1),
        block_dim: (k::WGMMA_BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    if register_a {
        gpu.launch(k::wgmma_gemm_rs_bf16, config, (&d_a, &d_b, &mut c, m, n, kd))?;
    } else {
        gpu.launch(k::wgmma_gemm_bf16, config, (&d_a, &d_b, &mut c, m, n, kd))?;
    }
    download(gpu, &c)
}

/// [`wgmma_gemm`] with A's fragments in registers (`wgmma_gemm_rs_bf16`).
pub fn wgmma_gemm_rs(gpu: &Gpu, a: &[k::BF16], b: &[k::BF16], m: u32, n: u32, kd: u32) -> Result<Vec<f32>> {
    wgmma_gemm_with(gpu, a, b, (m, n, kd), true)
}

/// The TMA maps and launch of [`k::gemm_tma_wgmma_bf16`] for `c ← a·bᵀ` on device buffers
/// (`a` `m × k`, `b` `n × k`, `c` `m × n`), queued on the GPU's stream; `k` a multiple of 8.
pub fn gemm_tma_wgmma_launch(
    gpu: &Gpu,
    a: &CudaSlice<k::BF16>,
    b: &CudaSlice<k::BF16>,
    c: &mut CudaSlice<f32>,
    (m, n, kd): (u32, u32, u32),
) -> Result<()> {
    check_depth("gemm_tma_wgmma", kd, "TMA needs rows of a multiple of 16 bytes")?;
    let boxed = [k::GEMM_DEPTH, k::GEMM_TILE];
    let a_map = gpu
        .tensor_map(a, TensorMapSpec::packed([kd.into(), m.into()], boxed).with_swizzle(TmaSwizzle::B128))?;
    let b_map = gpu
        .tensor_map(b, TensorMapSpec::packed([kd.into(), n.into()], boxed).with_swizzle(TmaSwizzle::B128))?;
    if c.len() != m as usize * n as usize {
        return Err(Error::InvalidLaunch(format!(
            "gemm_tma_wgmma: c has {} elements, expected {m} × {n}",
            c.len()
        )));
    }
    let config = LaunchConfig {
        grid_dim: (n.div_ceil(k::GEMM_TILE), m.div_ceil(k::GEMM_TILE), 1),
        block_dim: (k::GEMM_BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    gpu.launch(k::gemm_tma_wgmma_bf16, config, (&a_map, &b_map, c, m, n, kd))
}

/// `a·bᵀ` (`a` `m × k`, `b` `n × k`, row-major bf16) by the warp-specialised TMA and `wgmma`
/// GEMM, `k` a multiple of 8 (refused otherwise).
pub fn gemm_tma_wgmma(gpu: &Gpu, a: &[k::BF16], b: &[k::BF16], m: u32, n: u32, kd: u32) -> Result<Vec<f32>> {
    check_operands("gemm_tma_wgmma", (a.len(), b.len()), (m, n, kd))?;
    let (d_a, d_b) = (upload(gpu, a)?, upload(gpu, b)?);
    let mut c = zeros::<f32>(gpu, m as usize * n as usize)?;
    gemm_tma_wgmma_launch(gpu, &d_a, &d_b, &mut c, (m, n, kd))?;
    download(gpu, &c)
}

/// `a·bᵀ` (`a` `m × k`, `b` `n × k`, row-major bf16) by [`k::wgmma_swizzle_gemm_bf16`] in TMA's
/// `swizzle` (`B32`, `B64` or `B128`): boxes of one swizzle span along K (16, 32 or 64 bf16) by
/// 64 rows, read by `wgmma` through `SharedDescriptor::k_major_swizzle_32`, `_64` or `_128`;
/// `k` a multiple of 8 (refused otherwise, as is `TmaSwizzle::None`).
pub fn wgmma_swizzle_gemm(
    gpu: &Gpu,
    a: &[k::BF16],
    b: &[k::BF16],
    (m, n, kd): (u32, u32, u32),
    swizzle: TmaSwizzle,
) -> Result<Vec<f32>> {
    if swizzle == TmaSwizzle::None {
        return Err(Error::InvalidLaunch("wgmma_swizzle_gemm: a swizzle of 32, 64 or 128 bytes".into()));
    }
    check_depth("wgmma_swizzle_gemm", kd, "TMA needs rows of a multiple of 16 bytes")?;
    check_operands("wgmma_swizzle_gemm", (a.len(), b.len()), (m, n, kd))?;
    let span = swizzle.bytes() as u32;
    // The box the kernel's barrier expects: one span of bf16 along K by 64 rows, its bytes
    // `k::swizzle_box_bytes(span)`.
    let boxed = [k::swizzle_depth(span), k::SWIZZLE_TILE];
    debug_assert_eq!(boxed[0] * boxed[1] * 2, k::swizzle_box_bytes(span));
    let (d_a, d_b) = (upload(gpu, a)?, upload(gpu, b)?);
    let a_map =
        gpu.tensor_map(&d_a, TensorMapSpec::packed([kd.into(), m.into()], boxed).with_swizzle(swizzle))?;
    let b_map =
        gpu.tensor_map(&d_b, TensorMapSpec::packed([kd.into(), n.into()], boxed).with_swizzle(swizzle))?;
    let mut c = zeros::<f32>(gpu, m as usize * n as usize)?;
    let config = LaunchConfig {
        grid_dim: (n.div_ceil(k::SWIZZLE_TILE), m.div_ceil(k::SWIZZLE_TILE), 1),
        block_dim: (k::SWIZZLE_BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    let args = (&a_map, &b_map, &mut c, m, n, kd);
    match swizzle {
        TmaSwizzle::B32 => gpu.launch(k::wgmma_swizzle_gemm_bf16_32, config, args)?,
        TmaSwizzle::B64 => gpu.launch(k::wgmma_swizzle_gemm_bf16_64, config, args)?,
        _ => gpu.launch(k::wgmma_swizzle_gemm_bf16_128, config, args)?,
    }
    drop((a_map, b_map));
    download(gpu, &c)
}

/// The clusters [`cluster_reduce`] launches for `n` elements by default: one per 8 · 4096
/// elements (16 per thread, as `reduce_config`), 1 to 256 (2048 blocks).
pub fn cluster_reduce_clusters(n: u32) -> u32 {
    n.div_ceil(k::CLUSTER_REDUCE_CLUSTER * k::CLUSTER_REDUCE_BLOCK * 16).clamp(1, 256)
}

/// The launch of [`cluster_reduce`] with `clusters` clusters (and the cluster's shape).
pub fn cluster_reduce_config(clusters: u32) -> (LaunchConfig, (u32, u32, u32)) {
    let config = LaunchConfig {
        grid_dim: (clusters * k::CLUSTER_REDUCE_CLUSTER, 1, 1),
        block_dim: (k::CLUSTER_REDUCE_BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    (config, (k::CLUSTER_REDUCE_CLUSTER, 1, 1))
}

/// The sum of `x` by clusters of [`k::CLUSTER_REDUCE_CLUSTER`] blocks combining their partial
/// sums through distributed shared memory, `clusters` clusters in the grid (one atomic each;
/// [`cluster_reduce_clusters`] for the default). With one cluster the result is
/// `cpu::cluster_sum_order`'s exactly.
pub fn cluster_reduce(gpu: &Gpu, x: &[f32], clusters: u32) -> Result<f32> {
    let n = u32::try_from(x.len())
        .map_err(|_| Error::InvalidLaunch("cluster_reduce: more than u32 elements".into()))?;
    if clusters == 0 {
        return Err(Error::InvalidLaunch("cluster_reduce: no clusters".into()));
    }
    let d_x = upload(gpu, x)?;
    let mut sum = zeros::<f32>(gpu, 1)?;
    let (config, cluster) = cluster_reduce_config(clusters);
    gpu.launch_cluster(k::cluster_reduce_f32, config, cluster, (&d_x, n, &mut sum))?;
    Ok(download(gpu, &sum)?[0])
}

/// `steps` smoothing steps of each segment of `k::EXCHANGE_SEGMENT` cells of `x` on its own
/// (`cpu::cluster_smooth`'s result, bit for bit), one cluster of `k::EXCHANGE_CLUSTER` blocks a
/// segment, exchanging their edge cells through distributed shared memory. `x` must be a
/// whole number of segments (refused in words otherwise).
pub fn cluster_smooth(gpu: &Gpu, x: &[f32], steps: u32) -> Result<Vec<f32>> {
    let segment = k::EXCHANGE_SEGMENT as usize;
    if x.is_empty() || !x.len().is_multiple_of(segment) || x.len() / segment > u32::MAX as usize / segment {
        return Err(Error::InvalidLaunch(format!(
            "cluster_smooth: {} cells is not a whole number of {segment}-cell segments",
            x.len()
        )));
    }
    let d_x = upload(gpu, x)?;
    let mut y = zeros::<f32>(gpu, x.len())?;
    let config = LaunchConfig {
        grid_dim: ((x.len() / k::EXCHANGE_BLOCK as usize) as u32, 1, 1),
        block_dim: (k::EXCHANGE_BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    gpu.launch_cluster(k::cluster_smooth_f32, config, (k::EXCHANGE_CLUSTER, 1, 1), (&d_x, &mut y, steps))?;
    download(gpu, &y)
}

/// Whether [`tma_stencil`] runs on an `nx × ny × nz` grid of `cells` values: the cells number
/// nx·ny·nz, no size is 0, and nx is a multiple of 4 (TMA needs rows of a multiple of 16
/// bytes); else why not, in words ([`Error::InvalidLaunch`]). Needs no GPU.
pub fn tma_stencil_check(cells: usize, nx: u32, ny: u32, nz: u32) -> Result<()> {
    let expected = nx as usize * ny as usize * nz as usize;
    let why = if cells != expected {
        format!("tma_stencil: {cells} cells, expected {nx} × {ny} × {nz} = {expected}")
    } else if nx == 0 || ny == 0 || nz == 0 {
        format!("tma_stencil: an empty grid ({nx} × {ny} × {nz})")
    } else if !nx.is_multiple_of(4) {
        format!(
            "tma_stencil: nx = {nx} is not a multiple of 4 (TMA needs rows of a multiple of 16 bytes; \
             pad the rows)"
        )
    } else {
        return Ok(());
    };
    Err(Error::InvalidLaunch(why))
}

/// The tensor map [`tma_stencil`] loads through: the `nx × ny × nz` grid, boxes of the tile and
/// its halo (40 × 10 × 10).
pub fn tma_stencil_spec(nx: u32, ny: u32, nz: u32) -> TensorMapSpec<3> {
    TensorMapSpec::packed(
        [nx.into(), ny.into(), nz.into()],
        [k::STENCIL3D_BOX_X, k::STENCIL3D_BOX_Y, k::STENCIL3D_BOX_Z],
    )
}

/// The launch of [`tma_stencil`]: one block of 32 × 8 threads per 32 × 8 × 8 tile.
pub fn tma_stencil_config(nx: u32, ny: u32, nz: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (
            nx.div_ceil(k::STENCIL3D_TILE_X),
            ny.div_ceil(k::STENCIL3D_TILE_Y),
            nz.div_ceil(k::STENCIL3D_TILE_Z),
        ),
        block_dim: (k::STENCIL3D_TILE_X, k::STENCIL3D_TILE_Y, 1),
        shared_mem_bytes: 0,
    }
}

/// One Jacobi step of Laplace's equation on an `nx × ny × nz` grid (x innermost), zero outside
/// the grid, each block's tile and halo loaded by one 3-D TMA copy: `cpu::jacobi_7pt` bit for
/// bit. `nx` must be a multiple of 4 (refused otherwise, in words).
pub fn tma_stencil(gpu: &Gpu, input: &[f32], nx: u32, ny: u32, nz: u32) -> Result<Vec<f32>> {
    tma_stencil_check(input.len(), nx, ny, nz)?;
    let d_input = upload(gpu, input)?;
    let mut output = zeros::<f32>(gpu, input.len())?;
    let map = gpu.tensor_map(&d_input, tma_stencil_spec(nx, ny, nz))?;
    gpu.launch(k::tma_stencil_7pt, tma_stencil_config(nx, ny, nz), (&map, &mut output, nx, ny, nz))?;
    drop(map);
    download(gpu, &output)
}

/// Refuses a GEMM depth `kd` that is not a multiple of 8 (`why`: what needs it), naming `kernel`.
fn check_depth(kernel: &str, kd: u32, why: &str) -> Result<()> {
    if kd.is_multiple_of(8) {
        return Ok(());
    }
    Err(Error::InvalidLaunch(format!("{kernel}: k = {kd} is not a multiple of 8 ({why})")))
}

/// Refuses operands `a` (`m × k`) and `b` (`n × k`) of other lengths, naming `kernel`.
fn check_operands(kernel: &str, (a, b): (usize, usize), (m, n, kd): (u32, u32, u32)) -> Result<()> {
    let (rows_a, rows_b) = (m as usize * kd as usize, n as usize * kd as usize);
    if a == rows_a && b == rows_b {
        return Ok(());
    }
    Err(Error::InvalidLaunch(format!(
        "{kernel}: a has {a} and b {b} elements, expected {rows_a} and {rows_b}"
    )))
}
