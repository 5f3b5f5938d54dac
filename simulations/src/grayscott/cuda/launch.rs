//! The per-kernel launchers, public so GPU tests can run each kernel alone against its CPU
//! reference.

use cudarc::driver::{CudaSlice, CudaStream};
use kernels::{
    colormap::{MIN_MAX_BLOCK, MinMax, colormap_levels, field_min_max},
    grayscott::{
        Rates, STREAM_MAX_CELLS, TEMPORAL_MAX_STEPS, TEMPORAL_SPAN_Y, TEMPORAL_WARPS, TILE_H, TILE_W,
        gray_scott_fused, gray_scott_fused_x4, gray_scott_laplacian, gray_scott_streaming_c1_pdl_s1,
        gray_scott_streaming_c1_pdl_s2, gray_scott_streaming_c1_pdl_s3, gray_scott_streaming_c1_pdl_s4,
        gray_scott_streaming_c1_pdl_s5, gray_scott_streaming_c1_pdl_s6, gray_scott_streaming_c1_pdl_s7,
        gray_scott_streaming_c1_pdl_s8, gray_scott_streaming_c1_s1, gray_scott_streaming_c1_s2,
        gray_scott_streaming_c1_s3, gray_scott_streaming_c1_s4, gray_scott_streaming_c1_s5,
        gray_scott_streaming_c1_s6, gray_scott_streaming_c1_s7, gray_scott_streaming_c1_s8,
        gray_scott_streaming_s1, gray_scott_streaming_s2, gray_scott_streaming_s3, gray_scott_streaming_s4,
        gray_scott_streaming_s5, gray_scott_streaming_s6, gray_scott_streaming_s7, gray_scott_streaming_s8,
        gray_scott_temporal, gray_scott_tiled, gray_scott_update, stream_shared_bytes, stream_strip,
        temporal_tile,
    },
};
use ptxkit_host::Kernel;

use super::*;
use crate::{
    cuda::{Gpu, KernelArgs, grid_1d, grid_2d},
    error::{CudaContext as _, Error, Result},
};

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
    launch_laplacian_on(gpu, gpu.stream(), width, height, (u, v, lu, lv, width, height))
}

/// [`launch_laplacian`] on `stream` with any buffers (another library's memory too): `args`
/// are `(u, v, lu, lv, width, height)`, each buffer of `width × height` cells.
pub fn launch_laplacian_on(
    gpu: &Gpu,
    stream: &CudaStream,
    width: u32,
    height: u32,
    args: impl KernelArgs<<gray_scott_laplacian as Kernel>::Params>,
) -> Result<()> {
    // All buffers hold width × height cells and the grid covers exactly that.
    Ok(gpu.launch_on(stream, gray_scott_laplacian, grid_2d(width, height, BLOCK_2D), args)?)
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
    launch_update_on(gpu, gpu.stream(), width, height, (u, v, lu, lv, width, height, rates))
}

/// [`launch_update`] on `stream` with any buffers: `args` are
/// `(u, v, lu, lv, width, height, rates)`.
pub fn launch_update_on(
    gpu: &Gpu,
    stream: &CudaStream,
    width: u32,
    height: u32,
    args: impl KernelArgs<<gray_scott_update as Kernel>::Params>,
) -> Result<()> {
    // As in `launch_laplacian_on`.
    Ok(gpu.launch_on(stream, gray_scott_update, grid_2d(width, height, BLOCK_2D), args)?)
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
    launch_fused_on(gpu, gpu.stream(), width, height, shape, args)
}

/// The fused kernels' parameters (one column per thread or four take the same).
pub type FusedParams = <gray_scott_fused as Kernel>::Params;

/// [`launch_fused`] on `stream` with any buffers: `args` are
/// `(u, v, u_next, v_next, width, height, rates, shape.rows)`, each buffer of `width × height`
/// cells.
pub fn launch_fused_on(
    gpu: &Gpu,
    stream: &CudaStream,
    width: u32,
    height: u32,
    shape: FusedShape,
    args: impl KernelArgs<FusedParams>,
) -> Result<()> {
    // Thread rows × `rows` cover the height; threads × `columns` the width.
    match shape.columns {
        1 => Ok(gpu.launch_on(
            stream,
            gray_scott_fused,
            grid_2d(width, height.div_ceil(shape.rows), shape.block),
            args,
        )?),
        4 if width % 4 == 0 => Ok(gpu.launch_on(
            stream,
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

/// Evaluates `$body` with `$kernel` bound to the kernel handle whose pattern matches `$key`
/// (each kernel's handle is its own type, so this is a match rather than a table).
macro_rules! with_kernel_for {
    ($key:expr, $kernel:ident => $body:expr; $($pattern:pat => $handle:ident),* $(,)?) => {
        match $key {
            $($pattern => {
                let $kernel = $handle;
                $body
            })*
            key => unreachable!("no streaming kernel for {key:?}"),
        }
    };
}

/// Evaluates `$body` with `$kernel` bound to the handle of the streaming kernel for `$cols`
/// cells per thread and `$steps` steps (`gray_scott_streaming_s{steps}` for two cells,
/// `gray_scott_streaming_c1_s{steps}` for one).
macro_rules! with_streaming_kernel {
    ($cols:expr, $steps:expr, $kernel:ident => $body:expr) => {
        with_kernel_for!(($cols, $steps), $kernel => $body;
            (2, 1) => gray_scott_streaming_s1, (2, 2) => gray_scott_streaming_s2,
            (2, 3) => gray_scott_streaming_s3, (2, 4) => gray_scott_streaming_s4,
            (2, 5) => gray_scott_streaming_s5, (2, 6) => gray_scott_streaming_s6,
            (2, 7) => gray_scott_streaming_s7, (2, 8) => gray_scott_streaming_s8,
            (1, 1) => gray_scott_streaming_c1_s1, (1, 2) => gray_scott_streaming_c1_s2,
            (1, 3) => gray_scott_streaming_c1_s3, (1, 4) => gray_scott_streaming_c1_s4,
            (1, 5) => gray_scott_streaming_c1_s5, (1, 6) => gray_scott_streaming_c1_s6,
            (1, 7) => gray_scott_streaming_c1_s7, (1, 8) => gray_scott_streaming_c1_s8,
        )
    };
}

/// Evaluates `$body` with `$kernel` bound to the one-cell streaming kernel for `$steps` steps
/// made for programmatic dependent launch (`gray_scott_streaming_c1_pdl_s{steps}`, sm_90).
macro_rules! with_programmatic_streaming_kernel {
    ($steps:expr, $kernel:ident => $body:expr) => {
        with_kernel_for!($steps, $kernel => $body;
            1 => gray_scott_streaming_c1_pdl_s1, 2 => gray_scott_streaming_c1_pdl_s2,
            3 => gray_scott_streaming_c1_pdl_s3, 4 => gray_scott_streaming_c1_pdl_s4,
            5 => gray_scott_streaming_c1_pdl_s5, 6 => gray_scott_streaming_c1_pdl_s6,
            7 => gray_scott_streaming_c1_pdl_s7, 8 => gray_scott_streaming_c1_pdl_s8,
        )
    };
}

/// Turns the one-cell streaming kernels' programmatic dependent launches off (`0`); on by
/// default where the GPU has them ([`programmatic_streaming`]).
pub const PROGRAMMATIC_VAR: &str = "RUST_GPU_SIM_PROGRAMMATIC";

/// Whether programmatic launches are allowed: [`PROGRAMMATIC_VAR`] at first use (a value other
/// than `0` or `1` is said once on stderr and leaves them on), then
/// [`set_programmatic_streaming`].
static PROGRAMMATIC: std::sync::LazyLock<std::sync::atomic::AtomicBool> = std::sync::LazyLock::new(|| {
    let value = std::env::var_os(PROGRAMMATIC_VAR);
    let allowed = programmatic_setting(value.as_ref().map(|v| v.to_string_lossy()).as_deref())
        .unwrap_or_else(|message| {
            crate::stderr_line!("warning: {message}");
            true
        });
    std::sync::atomic::AtomicBool::new(allowed)
});

/// [`PROGRAMMATIC_VAR`]'s value read: unset or `1` allows, `0` forbids; anything else is a
/// mistake, in words.
pub fn programmatic_setting(value: Option<&str>) -> std::result::Result<bool, String> {
    match value {
        None | Some("1") => Ok(true),
        Some("0") => Ok(false),
        Some(other) => {
            Err(format!("{PROGRAMMATIC_VAR}={other:?} is neither 0 nor 1: programmatic launches stay on"))
        }
    }
}

/// Allows or forbids programmatic dependent launches of the streaming kernels in this process
/// (to compare both launch paths on one GPU; the default comes from [`PROGRAMMATIC_VAR`]);
/// returns the setting before.
pub fn set_programmatic_streaming(on: bool) -> bool {
    PROGRAMMATIC.swap(on, std::sync::atomic::Ordering::Relaxed)
}

/// Whether [`launch_streaming`] launches the one-cell kernels with programmatic dependence on
/// `gpu`: where it can load their sm_90 module (Hopper and later) and it is allowed
/// ([`set_programmatic_streaming`]). The one place that decides it.
pub fn programmatic_streaming(gpu: &Gpu) -> bool {
    PROGRAMMATIC.load(std::sync::atomic::Ordering::Relaxed) && gpu.can_launch(gray_scott_streaming_c1_pdl_s1)
}

/// How many blocks of the streaming kernel for `steps` steps and `cols` cells per thread, with
/// `warps` warps, the GPU holds at once.
pub(super) fn stream_resident_blocks(gpu: &Gpu, steps: u32, warps: u32, cols: u32) -> Result<u32> {
    let (threads, shared) = (32 * warps, stream_shared_bytes(steps));
    // The kernel `launch_streaming` launches.
    if cols == 1 && programmatic_streaming(gpu) {
        return with_programmatic_streaming_kernel!(steps, kernel => Ok(gpu.resident_blocks_with(kernel, threads, shared)?));
    }
    with_streaming_kernel!(cols, steps, kernel => Ok(gpu.resident_blocks_with(kernel, threads, shared)?))
}

/// Refuses a streaming launch of more cells than the kernels' 32-bit offsets reach
/// ([`STREAM_MAX_CELLS`]; they would do nothing): a grid of `MAX_SIDE`² cells fits, a part of a
/// split run with its halo rows may not.
pub(crate) fn streaming_cells_fit(width: u32, height: u32) -> Result<()> {
    if u64::from(width) * u64::from(height) > STREAM_MAX_CELLS {
        return Err(Error::InvalidInput(format!(
            "the streaming kernels take at most 2^32 cells a launch, and this grid or part with its \
             halo rows has {width} x {height}: split it into more parts, or choose another --variant"
        )));
    }
    Ok(())
}

// Every whole grid fits the streaming kernels' 32-bit cell offsets.
const _: () = assert!(
    crate::grayscott::MAX_SIDE as u64 * crate::grayscott::MAX_SIDE as u64 <= STREAM_MAX_CELLS,
    "a grid of MAX_SIDE x MAX_SIDE cells must fit the streaming kernels' 32-bit offsets"
);

/// A streaming kernel: `steps` (≤ 8) steps from (`u`, `v`) into (`u_next`, `v_next`), with
/// the warps, chunk and cells per thread of `shape` (its `steps` is not used: the last launch
/// of a run may take fewer). One cell per thread on a GPU with [`programmatic_streaming`]: the
/// same kernel built for programmatic dependent launch, whose blocks start while the launch
/// before it on the stream finishes.
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
    streaming_cells_fit(width, height)?;
    // A chunk taller than the grid would only repeat rows.
    let chunk = shape.chunk.min(height.max(1));
    let cfg = cudarc::driver::LaunchConfig {
        grid_dim: (width.div_ceil(stream_strip(steps, shape.warps, shape.cols)), height.div_ceil(chunk), 1),
        block_dim: (32 * shape.warps, 1, 1),
        shared_mem_bytes: stream_shared_bytes(steps),
    };
    // Blocks of 32 × warps (≤ 4) threads with their shared planes; strips of `stream_strip`
    // columns and chunks of `chunk` rows cover the grid.
    let args = (u, v, u_next, v_next, width, height, rates, chunk);
    if shape.cols == 1 && programmatic_streaming(gpu) {
        // SAFETY: every `_pdl` kernel waits for the launch before it
        // (`grid::dependency_synchronize`, on every path that reaches a field) before its
        // first load from the fields and its first store to them.
        return with_programmatic_streaming_kernel!(steps, kernel => Ok(unsafe { gpu.launch_programmatic(kernel, cfg, args) }?));
    }
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
