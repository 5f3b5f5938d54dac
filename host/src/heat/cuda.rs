//! The CUDA backend of the heat simulation, and one launcher per kernel of `kernels::heat`
//! (public, so GPU tests can run each kernel alone against the CPU).

use std::sync::Arc;

use cudarc::driver::{CudaSlice, DeviceRepr, LaunchConfig, PushKernelArg};
use kernels::heat::{
    MARCH_DEPTH, MARCH_H, MARCH_W, Rk4Terms, SINGLE_OUT_H, SINGLE_OUT_W, SINGLE_SHARED_BYTES, SINGLE_TX,
    SINGLE_TY,
};

use super::{HeatEngine, HeatSetup, HeatVariant};
use crate::{
    cuda::{Gpu, grid_1d},
    error::{CudaContext as _, Result},
};

/// 8×8×8 blocks for the one-thread-per-cell kernels of the write-up's steps.
pub const BLOCK_NAIVE: (u32, u32, u32) = (8, 8, 8);
/// Warp-wide rows for the fused passes.
pub const BLOCK_FUSED: (u32, u32, u32) = (32, 4, 4);

fn grid_3d(n: [u32; 3], block: (u32, u32, u32)) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (n[0].div_ceil(block.0), n[1].div_ceil(block.1), n[2].div_ceil(block.2)),
        block_dim: block,
        shared_mem_bytes: 0,
    }
}

fn grid_march(n: [u32; 3]) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (n[0].div_ceil(MARCH_W), n[1].div_ceil(MARCH_H), (n[2] - 2).div_ceil(MARCH_DEPTH)),
        block_dim: (MARCH_W, MARCH_H, 1),
        shared_mem_bytes: 0,
    }
}

/// Heat on a GPU.
pub struct CudaHeat {
    gpu: Arc<Gpu>,
    variant: HeatVariant,
    n: [u32; 3],
    a: f32,
    dt: f32,
    u: CudaSlice<f32>,
    /// k1..k4 (naive, reuse) or v1..v3 (fused, tiled; the fourth unused).
    k: [CudaSlice<f32>; 4],
    /// The single pass, prepared (single variant only).
    single: Option<SinglePass>,
}

impl CudaHeat {
    pub fn new(gpu: Arc<Gpu>, variant: HeatVariant, setup: &HeatSetup, u: &[f32]) -> Result<Self> {
        let stream = gpu.stream().clone();
        let len = |used: bool| if used { u.len() } else { 1 };
        let alloc = |len: usize| stream.alloc_zeros::<f32>(len).context(|| "allocating stages".into());
        // naive/reuse: k1..k4; fused/tiled: v1..v3, faces 0 (allocated zeroed); single: u_next.
        let stages = match variant {
            HeatVariant::Single => 1,
            HeatVariant::Fused | HeatVariant::Tiled => 3,
            _ => 4,
        };
        let k = [
            alloc(len(stages >= 1))?,
            alloc(len(stages >= 2))?,
            alloc(len(stages >= 3))?,
            alloc(len(stages >= 4))?,
        ];
        let single =
            if variant == HeatVariant::Single { Some(SinglePass::new(&gpu, setup.n)?) } else { None };
        Ok(Self {
            single,
            variant,
            n: setup.n,
            a: setup.a(),
            dt: setup.dt,
            u: stream.clone_htod(u).context(|| "uploading the field".into())?,
            k,
            gpu,
        })
    }

    fn step_once(&mut self) -> Result<()> {
        let (g, n, a, dt) = (&self.gpu, self.n, self.a, self.dt);
        let [k1, k2, k3, k4] = &mut self.k;
        match self.variant {
            HeatVariant::Naive => {
                launch_laplacian(g, &self.u, k1, n, a)?;
                launch_stage_naive(g, &self.u, k1, k2, n, a, dt / 2.0)?;
                launch_stage_naive(g, &self.u, k2, k3, n, a, dt / 2.0)?;
                launch_stage_naive(g, &self.u, k3, k4, n, a, dt)?;
                launch_rk4_update(g, &mut self.u, k1, k2, k3, k4, dt)?;
            }
            HeatVariant::Reuse => {
                launch_laplacian(g, &self.u, k1, n, a)?;
                launch_stage_reuse(g, k1, k1, k2, n, a, dt / 2.0)?;
                launch_stage_reuse(g, k1, k2, k3, n, a, dt / 2.0)?;
                launch_stage_reuse(g, k1, k3, k4, n, a, dt)?;
                launch_rk4_update(g, &mut self.u, k1, k2, k3, k4, dt)?;
            }
            HeatVariant::Fused => {
                launch_laplacian(g, &self.u, k1, n, a)?;
                launch_laplacian(g, k1, k2, n, a)?;
                launch_laplacian(g, k2, k3, n, a)?;
                launch_poly_update(g, &mut self.u, k1, k2, k3, n, a, dt)?;
            }
            HeatVariant::Tiled => {
                launch_laplacian_tiled(g, &self.u, k1, n, a)?;
                launch_laplacian_tiled(g, k1, k2, n, a)?;
                launch_laplacian_tiled(g, k2, k3, n, a)?;
                launch_poly_update_tiled(g, &mut self.u, k1, k2, k3, n, a, dt)?;
            }
            HeatVariant::Single => {
                let single = self.single.as_ref().expect("prepared for the single variant");
                single.launch(g, &self.u, k1, n, a, dt)?;
                std::mem::swap(&mut self.u, k1);
            }
            HeatVariant::Cpu => unreachable!("the CPU variant has its own engine"),
        }
        Ok(())
    }
}

impl CudaHeat {
    /// Overwrites the current field (restoring a checkpoint). The stage buffers are fully
    /// rewritten by every step (their faces stay 0), so u is the whole state.
    pub fn upload_field(&mut self, u: &[f32]) -> Result<()> {
        self.gpu.stream().memcpy_htod(u, &mut self.u).context(|| "uploading the field".into())?;
        // The host slice is borrowed: the copy must be done before returning.
        self.gpu.synchronize()
    }
}

impl HeatEngine for CudaHeat {
    fn step(&mut self, steps: u32) -> Result<()> {
        for _ in 0..steps {
            self.step_once()?;
        }
        Ok(())
    }

    fn field(&mut self) -> Result<Vec<f32>> {
        let u = self.gpu.stream().clone_dtoh(&self.u).context(|| "downloading the field".into())?;
        self.gpu.synchronize()?;
        Ok(u)
    }

    fn slice(&mut self, z: u32) -> Result<Vec<f32>> {
        let plane = self.n[0] as usize * self.n[1] as usize;
        let start = z as usize * plane;
        let slice = self
            .gpu
            .stream()
            .clone_dtoh(&self.u.slice(start..start + plane))
            .context(|| "downloading a slice".into())?;
        self.gpu.synchronize()?;
        Ok(slice)
    }

    fn set_field(&mut self, u: &[f32]) -> Result<()> {
        self.upload_field(u)
    }

    fn synchronize(&mut self) -> Result<()> {
        self.gpu.synchronize()
    }

    fn describe(&self) -> String {
        format!("cuda {} ({})", self.variant.name(), self.gpu.name())
    }
}

/// `heat_laplacian`: `out = a·∇²src` inside, 0 on the faces.
pub fn launch_laplacian(
    gpu: &Gpu,
    src: &CudaSlice<f32>,
    out: &mut CudaSlice<f32>,
    n: [u32; 3],
    a: f32,
) -> Result<()> {
    let f = gpu.kernel("heat_laplacian")?;
    let mut launch = gpu.stream().launch_builder(&f);
    launch.arg(src).arg(out).arg(&n[0]).arg(&n[1]).arg(&n[2]).arg(&a);
    // SAFETY: matches the kernel's signature; both buffers hold the whole grid.
    unsafe { launch.launch(grid_3d(n, BLOCK_FUSED)) }.context(|| "launching heat_laplacian".into())?;
    Ok(())
}

/// `heat_stage_naive`: `k_out = L(u + c·k_prev)`.
pub fn launch_stage_naive(
    gpu: &Gpu,
    u: &CudaSlice<f32>,
    k_prev: &CudaSlice<f32>,
    k_out: &mut CudaSlice<f32>,
    n: [u32; 3],
    a: f32,
    c: f32,
) -> Result<()> {
    let f = gpu.kernel("heat_stage_naive")?;
    let mut launch = gpu.stream().launch_builder(&f);
    launch.arg(u).arg(k_prev).arg(k_out).arg(&n[0]).arg(&n[1]).arg(&n[2]).arg(&a).arg(&c);
    // SAFETY: as above.
    unsafe { launch.launch(grid_3d(n, BLOCK_NAIVE)) }.context(|| "launching heat_stage_naive".into())?;
    Ok(())
}

/// `heat_stage_reuse`: `k_out = k1 + c·a∇²k_prev`.
pub fn launch_stage_reuse(
    gpu: &Gpu,
    k1: &CudaSlice<f32>,
    k_prev: &CudaSlice<f32>,
    k_out: &mut CudaSlice<f32>,
    n: [u32; 3],
    a: f32,
    c: f32,
) -> Result<()> {
    let f = gpu.kernel("heat_stage_reuse")?;
    let mut launch = gpu.stream().launch_builder(&f);
    launch.arg(k1).arg(k_prev).arg(k_out).arg(&n[0]).arg(&n[1]).arg(&n[2]).arg(&a).arg(&c);
    // SAFETY: as above.
    unsafe { launch.launch(grid_3d(n, BLOCK_NAIVE)) }.context(|| "launching heat_stage_reuse".into())?;
    Ok(())
}

/// `heat_rk4_update`: `u += dt/6·(k1 + 2k2 + 2k3 + k4)`.
pub fn launch_rk4_update(
    gpu: &Gpu,
    u: &mut CudaSlice<f32>,
    k1: &CudaSlice<f32>,
    k2: &CudaSlice<f32>,
    k3: &CudaSlice<f32>,
    k4: &CudaSlice<f32>,
    dt: f32,
) -> Result<()> {
    let f = gpu.kernel("heat_rk4_update")?;
    let cells = u.len() as u32;
    let mut launch = gpu.stream().launch_builder(&f);
    launch.arg(u).arg(k1).arg(k2).arg(k3).arg(k4).arg(&cells).arg(&dt);
    // SAFETY: as above; one thread per cell.
    unsafe { launch.launch(grid_1d(cells, 256)) }.context(|| "launching heat_rk4_update".into())?;
    Ok(())
}

/// `heat_poly_update`: the fused last pass.
#[allow(clippy::too_many_arguments)]
pub fn launch_poly_update(
    gpu: &Gpu,
    u: &mut CudaSlice<f32>,
    v1: &CudaSlice<f32>,
    v2: &CudaSlice<f32>,
    v3: &CudaSlice<f32>,
    n: [u32; 3],
    a: f32,
    dt: f32,
) -> Result<()> {
    let f = gpu.kernel("heat_poly_update")?;
    let mut launch = gpu.stream().launch_builder(&f);
    launch.arg(u).arg(v1).arg(v2).arg(v3).arg(&n[0]).arg(&n[1]).arg(&n[2]).arg(&a).arg(&dt);
    // SAFETY: as above.
    unsafe { launch.launch(grid_3d(n, BLOCK_FUSED)) }.context(|| "launching heat_poly_update".into())?;
    Ok(())
}

/// `heat_laplacian_tiled`: the 2.5-D `heat_laplacian` (faces of `out` must be 0 already).
pub fn launch_laplacian_tiled(
    gpu: &Gpu,
    src: &CudaSlice<f32>,
    out: &mut CudaSlice<f32>,
    n: [u32; 3],
    a: f32,
) -> Result<()> {
    let f = gpu.kernel("heat_laplacian_tiled")?;
    let mut launch = gpu.stream().launch_builder(&f);
    launch.arg(src).arg(out).arg(&n[0]).arg(&n[1]).arg(&n[2]).arg(&a);
    // SAFETY: as above; blocks of exactly MARCH_W × MARCH_H threads.
    unsafe { launch.launch(grid_march(n)) }.context(|| "launching heat_laplacian_tiled".into())?;
    Ok(())
}

/// `heat_poly_update_tiled`: the 2.5-D fused last pass.
#[allow(clippy::too_many_arguments)]
pub fn launch_poly_update_tiled(
    gpu: &Gpu,
    u: &mut CudaSlice<f32>,
    v1: &CudaSlice<f32>,
    v2: &CudaSlice<f32>,
    v3: &CudaSlice<f32>,
    n: [u32; 3],
    a: f32,
    dt: f32,
) -> Result<()> {
    let f = gpu.kernel("heat_poly_update_tiled")?;
    let mut launch = gpu.stream().launch_builder(&f);
    launch.arg(u).arg(v1).arg(v2).arg(v3).arg(&n[0]).arg(&n[1]).arg(&n[2]).arg(&a).arg(&dt);
    // SAFETY: as above; blocks of exactly MARCH_W × MARCH_H threads.
    unsafe { launch.launch(grid_march(n)) }.context(|| "launching heat_poly_update_tiled".into())?;
    Ok(())
}

/// `heat_rk4_single`, prepared once: the kernel allowed its dynamic shared memory (past the
/// default 48 KiB), and the split of the grid into runs of planes.
pub struct SinglePass {
    kernel: cudarc::driver::CudaFunction,
    /// Blocks, and planes each marches.
    work: (u32, u32),
}

impl SinglePass {
    /// For an `n` grid on this GPU: one wave of resident blocks (see [`split_march`]).
    pub fn new(gpu: &Gpu, n: [u32; 3]) -> Result<Self> {
        let mut pass = Self::with_work(gpu, (0, 0))?;
        let resident = gpu.resident_blocks(&pass.kernel, SINGLE_TX * SINGLE_TY, SINGLE_SHARED_BYTES)?;
        pass.work = split_march(n, resident);
        Ok(pass)
    }

    /// With a given split: `work.0` blocks each marching `work.1` planes.
    pub fn with_work(gpu: &Gpu, work: (u32, u32)) -> Result<Self> {
        let kernel = gpu.kernel("heat_rk4_single")?;
        kernel
            .set_attribute(
                cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                SINGLE_SHARED_BYTES as i32,
            )
            .context(|| "allowing heat_rk4_single its shared memory".into())?;
        Ok(Self { kernel, work })
    }

    /// One whole RK4 step from `u` into `u_next` (must not alias).
    #[allow(clippy::too_many_arguments)]
    pub fn launch(
        &self,
        gpu: &Gpu,
        u: &CudaSlice<f32>,
        u_next: &mut CudaSlice<f32>,
        n: [u32; 3],
        a: f32,
        dt: f32,
    ) -> Result<()> {
        let (blocks, planes_per_block) = self.work;
        let mut launch = gpu.stream().launch_builder(&self.kernel);
        let terms = Rk4TermsArg(Rk4Terms::new(dt));
        launch.arg(u).arg(u_next).arg(&n[0]).arg(&n[1]).arg(&n[2]).arg(&a).arg(&terms).arg(&planes_per_block);
        let cfg = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (SINGLE_TX, SINGLE_TY, 1),
            shared_mem_bytes: SINGLE_SHARED_BYTES,
        };
        // SAFETY: as above; blocks of exactly SINGLE_TX × SINGLE_TY threads with the dynamic
        // shared memory the kernel indexes; distinct buffers.
        unsafe { launch.launch(cfg) }.context(|| "launching heat_rk4_single".into())?;
        Ok(())
    }
}

/// `Rk4Terms` by value as a kernel argument.
#[derive(Clone, Copy)]
#[repr(transparent)]
struct Rk4TermsArg(Rk4Terms);

// SAFETY: `Rk4Terms` is `#[repr(C)]` plain data (four f32), laid out as the kernel reads it.
unsafe impl DeviceRepr for Rk4TermsArg {}

/// Cuts the single pass's work (tile columns × nz planes) into at most `resident` equal runs:
/// (blocks, planes per block).
pub fn split_march(n: [u32; 3], resident: u32) -> (u32, u32) {
    let work = n[0].div_ceil(SINGLE_OUT_W) * n[1].div_ceil(SINGLE_OUT_H) * n[2];
    let planes_per_block = work.div_ceil(resident.max(1));
    (work.div_ceil(planes_per_block), planes_per_block)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The runs cover the work exactly once, with no more blocks than are resident.
    #[test]
    fn split_march_covers_the_work_in_one_wave() {
        for (n, resident) in
            [([600u32, 600, 600], 132), ([37, 41, 43], 132), ([3, 3, 3], 264), ([130, 60, 43], 7)]
        {
            let work = n[0].div_ceil(SINGLE_OUT_W) * n[1].div_ceil(SINGLE_OUT_H) * n[2];
            let (blocks, planes) = split_march(n, resident);
            assert!(blocks <= resident, "{n:?}: {blocks} blocks");
            assert!(blocks * planes >= work && (blocks - 1) * planes < work, "{n:?}: {blocks} × {planes}");
        }
    }
}
