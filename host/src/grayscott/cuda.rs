//! The CUDA backend: device buffers, and one launcher per kernel of
//! `kernels::grayscott` and `kernels::colormap`. The launchers are public so that GPU tests
//! can run each kernel alone against its CPU reference.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, DeviceRepr, PushKernelArg};
use kernels::{
    colormap::{MIN_MAX_BLOCK, MinMax},
    grayscott::Rates,
};

use super::{Engine, Variant};
use crate::{
    cuda::{Gpu, grid_1d, grid_2d, grid_stride_1d},
    error::{CudaContext as _, Result},
    memory,
};

/// The 2-D block shape of the stencil kernels: a warp along x keeps rows coalesced.
pub const BLOCK_2D: (u32, u32) = (32, 8);

/// A `Rates` is five f32 fields, `#[repr(C)]`: the kernel receives it by value as a 20-byte
/// `.param` aggregate.
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct RatesArg(pub Rates);

// SAFETY: `Rates` is `#[repr(C)]` plain data, laid out exactly as the kernel parameter.
unsafe impl DeviceRepr for RatesArg {}

/// Gray-Scott on a GPU.
pub struct CudaGrayScott {
    gpu: Arc<Gpu>,
    variant: Variant,
    width: u32,
    height: u32,
    rates: RatesArg,
    u: CudaSlice<f32>,
    v: CudaSlice<f32>,
    /// The ping-pong partners of `u`, `v` (fused), or the Laplacians (v1).
    scratch_u: CudaSlice<f32>,
    scratch_v: CudaSlice<f32>,
    slots: CudaSlice<u32>,
    levels: CudaSlice<u8>,
}

/// Device bytes per cell: U, V and two scratch fields (f32), one frame byte.
pub const BYTES_PER_CELL: u64 = 4 * 4 + 1;

/// Refuses, with the sizes, a grid that would not fit in the GPU's free memory (keeping
/// 64 MiB for the module and the driver).
pub fn check_fits(gpu: &Gpu, width: u32, height: u32) -> Result<()> {
    let need = BYTES_PER_CELL * u64::from(width) * u64::from(height) + (64 << 20);
    let (free, _) = gpu.memory()?;
    memory::require(width, height, need, free, "GPU")
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
        check_fits(&gpu, width, height)?;
        let cells = width as usize * height as usize;
        let stream = gpu.stream().clone();
        let upload = |data: &[f32]| stream.clone_htod(data).context(|| "uploading the initial fields".into());
        let alloc = || stream.alloc_zeros::<f32>(cells).context(|| "allocating fields".into());
        Ok(Self {
            variant,
            width,
            height,
            rates: RatesArg(rates),
            u: upload(u)?,
            v: upload(v)?,
            scratch_u: alloc()?,
            scratch_v: alloc()?,
            slots: stream.alloc_zeros::<u32>(4).context(|| "allocating the reduction slots".into())?,
            levels: stream.alloc_zeros::<u8>(cells).context(|| "allocating the frame".into())?,
            gpu,
        })
    }
}

impl Engine for CudaGrayScott {
    fn step(&mut self, steps: u32) -> Result<()> {
        let (w, h) = (self.width, self.height);
        for _ in 0..steps {
            match self.variant {
                Variant::V1 => {
                    launch_laplacian(
                        &self.gpu,
                        &self.u,
                        &self.v,
                        &mut self.scratch_u,
                        &mut self.scratch_v,
                        w,
                        h,
                    )?;
                    launch_update(
                        &self.gpu,
                        &mut self.u,
                        &mut self.v,
                        &self.scratch_u,
                        &self.scratch_v,
                        w,
                        h,
                        self.rates.0,
                    )?;
                }
                Variant::Fused => {
                    launch_fused(
                        &self.gpu,
                        &self.u,
                        &self.v,
                        &mut self.scratch_u,
                        &mut self.scratch_v,
                        w,
                        h,
                        self.rates.0,
                    )?;
                    std::mem::swap(&mut self.u, &mut self.scratch_u);
                    std::mem::swap(&mut self.v, &mut self.scratch_v);
                }
            }
        }
        Ok(())
    }

    fn levels(&mut self, out: &mut [u8]) -> Result<()> {
        launch_min_max(&self.gpu, &self.u, &self.v, &mut self.slots)?;
        launch_colormap(&self.gpu, &self.u, &self.v, &self.slots, &mut self.levels)?;
        self.gpu.stream().memcpy_dtoh(&self.levels, out).context(|| "downloading a frame".into())?;
        self.gpu.synchronize()
    }

    fn fields(&mut self) -> Result<(Vec<f32>, Vec<f32>)> {
        let stream = self.gpu.stream();
        let u = stream.clone_dtoh(&self.u).context(|| "downloading U".into())?;
        let v = stream.clone_dtoh(&self.v).context(|| "downloading V".into())?;
        self.gpu.synchronize()?;
        Ok((u, v))
    }

    fn describe(&self) -> String {
        let variant = match self.variant {
            Variant::V1 => "v1",
            Variant::Fused => "fused",
        };
        format!("cuda {variant} ({})", self.gpu.name())
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
    let f = gpu.kernel("gray_scott_laplacian")?;
    let mut launch = gpu.stream().launch_builder(&f);
    launch.arg(u).arg(v).arg(lu).arg(lv).arg(&width).arg(&height);
    // SAFETY: the argument list matches the kernel's signature; all buffers hold
    // width × height cells and the grid covers exactly that.
    unsafe { launch.launch(grid_2d(width, height, BLOCK_2D)) }
        .context(|| "launching gray_scott_laplacian".into())?;
    Ok(())
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
    let f = gpu.kernel("gray_scott_update")?;
    let rates = RatesArg(rates);
    let mut launch = gpu.stream().launch_builder(&f);
    launch.arg(u).arg(v).arg(lu).arg(lv).arg(&width).arg(&height).arg(&rates);
    // SAFETY: as in `launch_laplacian`.
    unsafe { launch.launch(grid_2d(width, height, BLOCK_2D)) }
        .context(|| "launching gray_scott_update".into())?;
    Ok(())
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
) -> Result<()> {
    let f = gpu.kernel("gray_scott_fused")?;
    let rates = RatesArg(rates);
    let mut launch = gpu.stream().launch_builder(&f);
    launch.arg(u).arg(v).arg(u_next).arg(v_next).arg(&width).arg(&height).arg(&rates);
    // SAFETY: as in `launch_laplacian`.
    unsafe { launch.launch(grid_2d(width, height, BLOCK_2D)) }
        .context(|| "launching gray_scott_fused".into())?;
    Ok(())
}

/// `field_min_max`: resets `slots` and reduces V and U into them (see [`MinMax`]).
pub fn launch_min_max(
    gpu: &Gpu,
    u: &CudaSlice<f32>,
    v: &CudaSlice<f32>,
    slots: &mut CudaSlice<u32>,
) -> Result<()> {
    let stream = gpu.stream();
    stream.memcpy_htod(&MinMax::EMPTY, slots).context(|| "resetting the min/max slots".into())?;
    let f = gpu.kernel("field_min_max")?;
    let cells = u.len() as u32;
    let mut launch = stream.launch_builder(&f);
    launch.arg(u).arg(v).arg(&cells).arg(slots);
    // SAFETY: the kernel needs blocks of exactly MIN_MAX_BLOCK threads and four slots.
    unsafe { launch.launch(grid_stride_1d(cells, MIN_MAX_BLOCK as u32, 1024)) }
        .context(|| "launching field_min_max".into())?;
    Ok(())
}

/// `colormap_levels`: the palette level of every cell, normalised by `slots`.
pub fn launch_colormap(
    gpu: &Gpu,
    u: &CudaSlice<f32>,
    v: &CudaSlice<f32>,
    slots: &CudaSlice<u32>,
    levels: &mut CudaSlice<u8>,
) -> Result<()> {
    let f = gpu.kernel("colormap_levels")?;
    let cells = u.len() as u32;
    let mut launch = gpu.stream().launch_builder(&f);
    launch.arg(u).arg(v).arg(&cells).arg(slots).arg(levels);
    // SAFETY: all buffers hold `cells` elements, `slots` four.
    unsafe { launch.launch(grid_1d(cells, 256)) }.context(|| "launching colormap_levels".into())?;
    Ok(())
}
