//! Heat split into slabs along z (`--split P`, `--gpus N`): each part is a CUDA engine of its
//! own over its slab plus [`HALO`] planes from each neighbour (none beyond the domain's own
//! faces), stepped one RK4 step at a time with the halos refreshed in between. Results are
//! bit-identical to the run in one part.
//!
//! Why four planes: the kernels hold a slab's outer planes fixed, as faces, and give every
//! stage 0 there. The four stages of an RK4 step each apply the Laplacian once (k1..k4 for
//! `naive`/`reuse`, the powers Lu..L⁴u of the Laplacian L for `fused`/`tiled`/`single`), so a wrong value at
//! the slab's edge reaches one plane further per stage: after one step the first four planes
//! are wrong and the fifth is right. Every variant needs the same four planes per side.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream};

use super::{HeatEngine, HeatSetup, HeatVariant, cuda::CudaHeat};
use crate::{
    cuda::Gpu,
    decomposition::{self, Band},
    error::{CudaContext as _, Result},
    memory,
};

/// Planes of halo per side per RK4 step: one per stage.
pub const HALO: u32 = 4;

/// One slab, its halos and the engine that steps it.
struct Part {
    band: Band,
    below: u32,
    above: u32,
    engine: CudaHeat,
}

/// Heat in slabs along z, each on a GPU of this process.
pub struct PartedHeat {
    variant: HeatVariant,
    n: [u32; 3],
    parts: Vec<Part>,
    streams: Vec<Arc<CudaStream>>,
}

impl PartedHeat {
    /// Splits the field `u` of `setup` into `split` slabs spread over `gpus`. Refuses slabs
    /// thinner than the halo.
    pub fn new(
        gpus: &[Arc<Gpu>],
        variant: HeatVariant,
        setup: &HeatSetup,
        split: u32,
        u: &[f32],
    ) -> Result<Self> {
        let bands = decomposition::bands(setup.n[2], split)?;
        decomposition::check_halo(&bands, HALO, "z planes")?;
        let placement = decomposition::placement(bands.len(), gpus.len());
        let plane = setup.n[0] as usize * setup.n[1] as usize;
        let last = bands.len() - 1;
        // The memory check is per GPU: the planes of every slab it holds, halos included.
        for (g, gpu) in gpus.iter().enumerate() {
            let planes: u32 = (0..bands.len())
                .filter(|&p| placement[p] == g)
                .map(|p| bands[p].len + if p > 0 { HALO } else { 0 } + if p < last { HALO } else { 0 })
                .sum();
            let cells = plane as u64 * u64::from(planes);
            let (free, _) = gpu.memory()?;
            memory::require(
                setup.n[0],
                setup.n[1] * planes,
                variant.bytes_per_cell() * cells + (64 << 20),
                free,
                "GPU",
            )?;
        }
        let mut parts = Vec::with_capacity(bands.len());
        for (p, (band, &g)) in bands.iter().zip(&placement).enumerate() {
            let below = if p > 0 { HALO } else { 0 };
            let above = if p < last { HALO } else { 0 };
            let (z0, z1) = ((band.start - below) as usize, (band.end() + above) as usize);
            let local = HeatSetup { n: [setup.n[0], setup.n[1], (z1 - z0) as u32], ..setup.clone() };
            let engine = CudaHeat::new(gpus[g].clone(), variant, &local, &u[z0 * plane..z1 * plane])?;
            parts.push(Part { band: *band, below, above, engine });
        }
        let used = placement.last().map_or(1, |g| g + 1);
        let streams = gpus.iter().take(used).map(|g| g.stream().clone()).collect();
        Ok(Self { variant, n: setup.n, parts, streams })
    }

    fn plane(&self) -> usize {
        self.n[0] as usize * self.n[1] as usize
    }

    /// Refreshes every slab's halos from its neighbours' slabs (the same-process transport):
    /// 2 copies of [`HALO`] planes per inner boundary.
    pub fn exchange(&mut self) -> Result<()> {
        crate::cuda::join_streams(&self.streams)?;
        let (plane, h) = (self.plane(), HALO as usize);
        for p in 0..self.parts.len().saturating_sub(1) {
            let (a, b) = self.parts.split_at_mut(p + 1);
            let (lower, upper) = (&mut a[p], &mut b[0]);
            // The upper slab's halo below ← the lower slab's last interior planes.
            let from = (lower.below + lower.band.len) as usize - h;
            copy_planes(&lower.engine, from, &mut upper.engine, 0, h, plane)?;
            // The lower slab's halo above ← the upper slab's first interior planes.
            let to = (lower.below + lower.band.len) as usize;
            copy_planes(&upper.engine, upper.below as usize, &mut lower.engine, to, h, plane)?;
        }
        crate::cuda::join_streams(&self.streams)
    }

    /// Bytes one exchange copies (each inner boundary: both directions).
    pub fn exchange_bytes(&self) -> u64 {
        (self.parts.len() as u64).saturating_sub(1) * 2 * u64::from(HALO) * self.plane() as u64 * 4
    }
}

/// Copies `count` planes of `src` (from plane `from`) into `dst` (at plane `to`), on the
/// receiving engine's stream.
fn copy_planes(
    src: &CudaHeat,
    from: usize,
    dst: &mut CudaHeat,
    to: usize,
    count: usize,
    plane: usize,
) -> Result<()> {
    let stream = dst.stream().clone();
    let source = src.state().slice(from * plane..(from + count) * plane);
    let target: &mut CudaSlice<f32> = dst.state_mut();
    let mut target = target.slice_mut(to * plane..(to + count) * plane);
    stream.memcpy_dtod(&source, &mut target).context(|| "exchanging halo planes".into())
}

impl HeatEngine for PartedHeat {
    fn step(&mut self, steps: u32) -> Result<()> {
        for _ in 0..steps {
            for part in &mut self.parts {
                part.engine.step(1)?;
            }
            self.exchange()?;
        }
        Ok(())
    }

    fn field(&mut self) -> Result<Vec<f32>> {
        let plane = self.plane();
        let mut u = vec![0.0; plane * self.n[2] as usize];
        for part in &mut self.parts {
            let local = part.engine.field()?;
            let (start, len) = (part.band.start as usize * plane, part.band.len as usize * plane);
            let skip = part.below as usize * plane;
            u[start..start + len].copy_from_slice(&local[skip..skip + len]);
        }
        Ok(u)
    }

    fn slice(&mut self, z: u32) -> Result<Vec<f32>> {
        let part = self
            .parts
            .iter_mut()
            .find(|p| (p.band.start..p.band.end()).contains(&z))
            .expect("z inside the grid");
        part.engine.slice(z - part.band.start + part.below)
    }

    fn set_field(&mut self, u: &[f32]) -> Result<()> {
        let plane = self.plane();
        for part in &mut self.parts {
            let (z0, z1) = ((part.band.start - part.below) as usize, (part.band.end() + part.above) as usize);
            part.engine.set_field(&u[z0 * plane..z1 * plane])?;
        }
        Ok(())
    }

    fn synchronize(&mut self) -> Result<()> {
        for part in &mut self.parts {
            part.engine.synchronize()?;
        }
        Ok(())
    }

    fn describe(&self) -> String {
        let gpus = self.streams.len();
        format!(
            "cuda {} in {} z slabs of {}-{} planes (halo {HALO}) on {gpus} GPU{}",
            self.variant.name(),
            self.parts.len(),
            self.parts.iter().map(|p| p.band.len).min().unwrap_or(0),
            self.parts.iter().map(|p| p.band.len).max().unwrap_or(0),
            if gpus == 1 { "" } else { "s" }
        )
    }
}
