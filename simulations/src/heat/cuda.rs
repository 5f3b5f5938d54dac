//! The CUDA backend of the heat simulation, and one launcher per kernel of `kernels::heat`
//! (public, so GPU tests can run each kernel alone against the CPU).

use std::sync::Arc;

use cudarc::driver::{CudaSlice, LaunchConfig};
use kernels::heat::{
    MARCH_DEPTH, MARCH_H, MARCH_W, Rk4Terms, RoundSignals, SINGLE_OUT_H, SINGLE_OUT_W, SINGLE_TX, SINGLE_TY,
    heat_laplacian, heat_laplacian_tiled, heat_poly_update, heat_poly_update_tiled, heat_rk4_single,
    heat_rk4_update, heat_stage_naive, heat_stage_reuse,
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
        let single = if variant == HeatVariant::Single { Some(SinglePass::new(&gpu)?) } else { None };
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
                single.launch(g, &self.u, k1, n, 0..n[2], a, dt, RoundSignals::default())?;
                std::mem::swap(&mut self.u, k1);
            }
            HeatVariant::Cpu => unreachable!("the CPU variant has its own engine"),
        }
        Ok(())
    }
}

impl CudaHeat {
    /// The single variant's RK4 step writing output planes `planes` only, into the next
    /// field, which becomes current only at [`CudaHeat::finish_planes`] (a slab of a split
    /// run writes its own planes, not its halos, and may write its edges before its middle).
    pub(crate) fn step_planes(&mut self, planes: std::ops::Range<u32>) -> Result<()> {
        self.step_planes_signalled(planes, RoundSignals::default())
    }

    /// [`CudaHeat::step_planes`] taking part in an exchange by rounds ([`RoundSignals`]).
    pub(crate) fn step_planes_signalled(
        &mut self,
        planes: std::ops::Range<u32>,
        signals: RoundSignals,
    ) -> Result<()> {
        let single = self.single.as_ref().expect("writing chosen planes is the single variant's");
        single.launch(&self.gpu, &self.u, &mut self.k[0], self.n, planes, self.a, self.dt, signals)
    }

    /// How the single variant's launch over `planes` planes cuts its work (its rounds).
    pub(crate) fn march(&self, planes: u32) -> March {
        self.single.as_ref().expect("the single variant's").march(self.n[0], self.n[1], planes)
    }

    /// The field [`CudaHeat::step_planes`] writes (current after
    /// [`CudaHeat::finish_planes`]) and the engine's stream, for an exchange that copies its
    /// edges while it is written.
    pub(crate) fn written_rows(&mut self) -> crate::split::DeviceRows<'_> {
        crate::split::DeviceRows { values: &mut self.k[0], stream: self.gpu.stream() }
    }

    /// Leaves `sms` multiprocessors free in the single variant's launches from now on.
    pub(crate) fn leave_sms_free(&mut self, sms: u32) -> Result<()> {
        if self.single.is_some() {
            self.single = Some(SinglePass::leaving_free(&self.gpu, sms)?);
        }
        Ok(())
    }

    /// Makes the field [`CudaHeat::step_planes`] wrote current.
    pub(crate) fn finish_planes(&mut self) {
        std::mem::swap(&mut self.u, &mut self.k[0]);
    }

    /// The current field on the GPU, with the stream it is stepped on: what a slab of a split
    /// offers for its halos, which overwrite its planes in place.
    pub(crate) fn device_rows(&mut self) -> crate::split::DeviceRows<'_> {
        crate::split::DeviceRows { values: &mut self.u, stream: self.gpu.stream() }
    }

    /// The stream the engine runs on.
    pub(crate) fn stream(&self) -> &Arc<cudarc::driver::CudaStream> {
        self.gpu.stream()
    }

    /// The GPU the simulation runs on.
    pub(crate) fn gpu(&self) -> &Arc<Gpu> {
        &self.gpu
    }

    /// Overwrites the current field (restoring a checkpoint). The stage buffers are fully
    /// rewritten by every step (their faces stay 0), so u is the whole state.
    pub fn upload_field(&mut self, u: &[f32]) -> Result<()> {
        self.gpu.stream().memcpy_htod(u, &mut self.u).context(|| "uploading the field".into())?;
        // The host slice is borrowed: the copy must be done before returning.
        Ok(self.gpu.synchronize()?)
    }
}

impl HeatEngine for CudaHeat {
    fn views(&self) -> Result<Vec<crate::view::FieldView>> {
        let [nx, ny, nz] = self.n.map(|n| n as usize);
        Ok(vec![crate::view::FieldView::cuda("u", vec![nz, ny, nx], &self.u, &self.gpu)])
    }

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
        Ok(self.gpu.synchronize()?)
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
    // Both buffers hold the whole grid.
    Ok(gpu.launch(heat_laplacian, grid_3d(n, BLOCK_FUSED), (src, out, n[0], n[1], n[2], a))?)
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
    Ok(gpu.launch(heat_stage_naive, grid_3d(n, BLOCK_NAIVE), (u, k_prev, k_out, n[0], n[1], n[2], a, c))?)
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
    Ok(gpu.launch(heat_stage_reuse, grid_3d(n, BLOCK_NAIVE), (k1, k_prev, k_out, n[0], n[1], n[2], a, c))?)
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
    // One thread per cell.
    let cells = u.len() as u32;
    Ok(gpu.launch(heat_rk4_update, grid_1d(cells, 256), (u, k1, k2, k3, k4, cells, dt))?)
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
    Ok(gpu.launch(heat_poly_update, grid_3d(n, BLOCK_FUSED), (u, v1, v2, v3, n[0], n[1], n[2], a, dt))?)
}

/// `heat_laplacian_tiled`: the 2.5-D `heat_laplacian` (faces of `out` must be 0 already).
pub fn launch_laplacian_tiled(
    gpu: &Gpu,
    src: &CudaSlice<f32>,
    out: &mut CudaSlice<f32>,
    n: [u32; 3],
    a: f32,
) -> Result<()> {
    // Blocks of exactly MARCH_W × MARCH_H threads.
    Ok(gpu.launch(heat_laplacian_tiled, grid_march(n), (src, out, n[0], n[1], n[2], a))?)
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
    // Blocks of exactly MARCH_W × MARCH_H threads.
    Ok(gpu.launch(heat_poly_update_tiled, grid_march(n), (u, v1, v2, v3, n[0], n[1], n[2], a, dt))?)
}

/// `heat_rk4_single`, prepared once: how many of its blocks are resident at once (the
/// kernel's dynamic shared memory comes from its `#[kernel(dynamic_shared = ...)]`
/// declaration); each launch cuts its planes into that many runs ([`split_march`]).
pub struct SinglePass {
    resident: u32,
}

impl SinglePass {
    /// For this GPU: one wave of resident blocks per launch.
    pub fn new(gpu: &Gpu) -> Result<Self> {
        Ok(Self { resident: gpu.resident_blocks(heat_rk4_single, SINGLE_TX * SINGLE_TY)? })
    }

    /// For this GPU, leaving `sms` of its multiprocessors free for other kernels (NCCL's,
    /// beside an overlapped half).
    pub fn leaving_free(gpu: &Gpu, sms: u32) -> Result<Self> {
        let resident = gpu.resident_blocks(heat_rk4_single, SINGLE_TX * SINGLE_TY)?;
        let count = gpu
            .context()
            .attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .context(|| "querying the SM count".into())?
            .max(1) as u32;
        let per_sm = resident / count;
        Ok(Self::with_resident(resident.saturating_sub(per_sm * sms.min(count - 1))))
    }

    /// With `resident` blocks per launch (tests cut the work into other runs with it).
    pub fn with_resident(resident: u32) -> Self {
        Self { resident: resident.max(1) }
    }

    /// One whole RK4 step from `u` into `u_next` (must not alias), output planes `planes`
    /// only (all of them: `0..n[2]`).
    #[allow(clippy::too_many_arguments)]
    pub fn launch(
        &self,
        gpu: &Gpu,
        u: &CudaSlice<f32>,
        u_next: &mut CudaSlice<f32>,
        n: [u32; 3],
        planes: std::ops::Range<u32>,
        a: f32,
        dt: f32,
        signals: RoundSignals,
    ) -> Result<()> {
        assert!(
            planes.start <= planes.end && planes.end <= n[2],
            "output planes {planes:?} outside 0..{}",
            n[2]
        );
        let count = planes.end - planes.start;
        if count == 0 {
            return Ok(());
        }
        let March { blocks, columns_per_block, planes_per_block } =
            split_march([n[0], n[1], count], self.resident);
        // Blocks of exactly SINGLE_TX × SINGLE_TY threads (the kernel's declared block, checked
        // at compile time below); distinct buffers.
        const _: () = assert!(matches!(
            <heat_rk4_single as ptxkit_host::Kernel>::BLOCK,
            Some([SINGLE_TX, SINGLE_TY, 1])
        ));
        let cfg = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (SINGLE_TX, SINGLE_TY, 1),
            shared_mem_bytes: 0,
        };
        let terms = Rk4Terms::new(dt);
        let args = (
            u,
            u_next,
            n[0],
            n[1],
            n[2],
            a,
            terms,
            columns_per_block,
            planes_per_block,
            planes.start,
            count,
            signals,
        );
        Ok(gpu.launch(heat_rk4_single, cfg, args)?)
    }

    /// How a launch over `planes` planes of an `nx × ny` plane cuts its work.
    pub fn march(&self, nx: u32, ny: u32, planes: u32) -> March {
        split_march([nx, ny, planes], self.resident)
    }
}

/// How [`heat_rk4_single`] shares its work (tile columns × `n[2]` output planes) among its
/// blocks: rounds of one whole tile column per block, then equal runs over the columns left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct March {
    pub blocks: u32,
    pub columns_per_block: u32,
    pub planes_per_block: u32,
}

/// Cuts the single pass's work among at most `resident` blocks (one wave): as many rounds of
/// whole tile columns as there are `resident` columns for each block, then the columns left
/// (fewer than `resident`) in equal runs of planes.
pub fn split_march(n: [u32; 3], resident: u32) -> March {
    let resident = resident.max(1);
    let tiles = n[0].div_ceil(SINGLE_OUT_W) * n[1].div_ceil(SINGLE_OUT_H);
    let columns_per_block = if n[2] == 0 { 0 } else { tiles / resident };
    let work = (tiles - columns_per_block * resident) * n[2];
    if work == 0 {
        return March { blocks: resident.min(tiles).max(1), columns_per_block, planes_per_block: 0 };
    }
    let planes_per_block = work.div_ceil(resident);
    let blocks = if columns_per_block > 0 { resident } else { work.div_ceil(planes_per_block) };
    March { blocks, columns_per_block, planes_per_block }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Walks the kernel's loops (as `heat_rk4_single` runs them) and counts how often each
    /// (tile, plane) is marched.
    fn marched(n: [u32; 3], march: March) -> Vec<u32> {
        let tiles = n[0].div_ceil(SINGLE_OUT_W) * n[1].div_ceil(SINGLE_OUT_H);
        let mut count = vec![0u32; (tiles * n[2]) as usize];
        let round_tiles = (march.columns_per_block * march.blocks).min(tiles);
        let work = (tiles - round_tiles) * n[2];
        for block in 0..march.blocks {
            let mut tile = block;
            while tile < round_tiles {
                (0..n[2]).for_each(|z| count[(tile * n[2] + z) as usize] += 1);
                tile += march.blocks;
            }
            let start = block * march.planes_per_block;
            for k in start..(start + march.planes_per_block).min(work) {
                count[(round_tiles * n[2] + k) as usize] += 1;
            }
        }
        count
    }

    /// The rounds and runs cover the work exactly once, in one wave, with equal work per block
    /// (up to one run's rounding).
    #[test]
    fn split_march_covers_the_work_once_in_one_wave() {
        for (n, resident) in [
            ([600u32, 600, 600], 132),
            ([1200, 1200, 300], 132),
            ([37, 41, 43], 132),
            ([3, 3, 3], 264),
            ([130, 60, 43], 7),
            ([130, 60, 43], 9),
            ([130, 60, 1], 3),
        ] {
            let march = split_march(n, resident);
            assert!(march.blocks <= resident, "{n:?}: {march:?}");
            assert!(marched(n, march).iter().all(|&c| c == 1), "{n:?}: {march:?}");
            let tiles = n[0].div_ceil(SINGLE_OUT_W) * n[1].div_ceil(SINGLE_OUT_H);
            assert_eq!(march.columns_per_block, tiles / resident, "{n:?}");
        }
        // 600³ on 132 SMs: 275 tiles, two whole columns per block, then 11 columns in runs of 50.
        assert_eq!(
            split_march([600, 600, 600], 132),
            March { blocks: 132, columns_per_block: 2, planes_per_block: 50 }
        );
    }
}
