//! Gray-Scott split into bands of rows (`--split P`, `--gpus N`): each part is a CUDA engine
//! of its own over its band plus `halo` rows on each side, stepped `halo` steps at a time,
//! with the halos refreshed from the neighbouring bands in between (the first and last bands
//! are neighbours: the plane is periodic). The kernels are the unsplit run's, unchanged; the
//! results are bit-identical to it (see [`crate::decomposition`] for why).
//!
//! The exchange is the same-process transport: device-to-device copies on the receiving
//! part's stream (peer copies where the parts sit on different GPUs), after every part's
//! steps; the GPUs' streams are joined with events around it. Exchange and computation are
//! not overlapped: on one GPU every part shares one stream.

use std::sync::Arc;

use cudarc::driver::CudaSlice;

use super::{
    Engine, Rates, Variant,
    cuda::{
        CudaGrayScott, FusedShape, StreamShape, fused_shape_for, streaming_shape_for, temporal_steps_for,
    },
};
use crate::{
    cuda::Gpu,
    decomposition::{self, Band},
    error::{CudaContext as _, Error, Result},
    render::colormap,
};

/// The launch settings every part runs with (tuned for a part's size).
#[derive(Clone, Copy, Debug, Default)]
pub struct LaunchSettings {
    pub fused: FusedShape,
    pub temporal_steps: u32,
    pub stream: StreamShape,
}

impl LaunchSettings {
    /// Settings for `split` bands of a `width × height` grid on `gpu`: each tuned (or taken
    /// from the cache, or the defaults without `autotune`) for one part with the largest
    /// halo, the size the parts really step.
    pub fn for_parts(
        gpu: &Gpu,
        variant: Variant,
        width: u32,
        height: u32,
        split: u32,
        autotune: bool,
    ) -> Result<Self> {
        let part_rows = height.div_ceil(split.max(1));
        let mut settings = Self { temporal_steps: kernels::grayscott::TEMPORAL_MAX_STEPS, ..Self::default() };
        match variant {
            Variant::Fused => settings.fused = fused_shape_for(gpu, width, part_rows + 2, autotune)?.0,
            Variant::Temporal => {
                let rows = part_rows + 2 * kernels::grayscott::TEMPORAL_MAX_STEPS;
                settings.temporal_steps = temporal_steps_for(gpu, width, rows, autotune)?.0;
            }
            Variant::Streaming => {
                let rows = part_rows + 2 * kernels::grayscott::STREAM_MAX_STEPS;
                settings.stream = streaming_shape_for(gpu, width, rows, autotune)?.0;
            }
            _ => {}
        }
        Ok(settings)
    }

    /// Rows of halo a part needs on each side: the steps one kernel launch advances.
    pub fn halo(&self, variant: Variant) -> u32 {
        match variant {
            Variant::Temporal => self.temporal_steps,
            Variant::Streaming => self.stream.steps,
            _ => 1,
        }
    }
}

/// One band and the engine that steps it with its halos.
struct Part {
    band: Band,
    engine: CudaGrayScott,
}

/// Gray-Scott in bands of rows, each on a GPU of this process.
pub struct PartedGrayScott {
    variant: Variant,
    width: u32,
    height: u32,
    halo: u32,
    parts: Vec<Part>,
    /// One stream per GPU used, to join around exchanges (one GPU: nothing to join).
    streams: Vec<Arc<cudarc::driver::CudaStream>>,
    ready: Vec<Vec<u8>>,
}

impl PartedGrayScott {
    /// Splits the `width × height` fields `u`, `v` into `split` bands spread over `gpus`.
    /// Refuses v0 (its state lives on the host) and parts thinner than their halo.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        gpus: &[Arc<Gpu>],
        variant: Variant,
        width: u32,
        height: u32,
        rates: Rates,
        split: u32,
        settings: LaunchSettings,
        u: &[f32],
        v: &[f32],
    ) -> Result<Self> {
        if matches!(variant, Variant::V0 | Variant::Cpu) {
            return Err(Error::InvalidInput(format!(
                "--split and --gpus take a GPU variant whose fields live on the GPU, not {}",
                variant.name()
            )));
        }
        let bands = decomposition::bands(height, split)?;
        let halo = settings.halo(variant);
        decomposition::check_halo(&bands, halo, "rows")?;
        let placement = decomposition::placement(bands.len(), gpus.len());
        let mut parts = Vec::with_capacity(bands.len());
        for (band, &g) in bands.iter().zip(&placement) {
            let (lu, lv) = (local(u, *band, halo, width, height), local(v, *band, halo, width, height));
            let mut engine =
                CudaGrayScott::new(gpus[g].clone(), variant, width, band.len + 2 * halo, rates, &lu, &lv)?;
            engine.set_fused_shape(settings.fused);
            engine.set_temporal_steps(settings.temporal_steps);
            engine.set_stream_shape(settings.stream);
            parts.push(Part { band: *band, engine });
        }
        let mut streams: Vec<Arc<cudarc::driver::CudaStream>> = Vec::new();
        for gpu in gpus.iter().take(placement.last().map_or(1, |g| g + 1)) {
            streams.push(gpu.stream().clone());
        }
        Ok(Self { variant, width, height, halo, parts, streams, ready: Vec::new() })
    }

    /// The halo depth in rows (the steps between exchanges).
    pub fn halo(&self) -> u32 {
        self.halo
    }

    /// The bands, in order.
    pub fn bands(&self) -> Vec<Band> {
        self.parts.iter().map(|p| p.band).collect()
    }

    /// Bytes one exchange copies: two fields, two halos per part.
    pub fn exchange_bytes(&self) -> u64 {
        self.parts.len() as u64 * 2 * 2 * u64::from(self.halo) * u64::from(self.width) * 4
    }

    /// Refreshes every part's halos from its neighbours' bands (the same-process transport).
    pub fn exchange(&mut self) -> Result<()> {
        crate::cuda::join_streams(&self.streams)?;
        let (h, w) = (self.halo as usize, self.width as usize);
        let n = self.parts.len();
        for p in 0..n {
            let (before, after) = decomposition::neighbours(p, n, true);
            let (before, after) = (before.expect("periodic"), after.expect("periodic"));
            // Top halo (rows 0..h) ← the last h rows of the band before.
            let src_rows = self.parts[before].band.len as usize; // rows len .. len + h of `before`
            copy_rows(&mut self.parts, before, src_rows, p, 0, h, w)?;
            // Bottom halo (rows h + len ..) ← the first h rows of the band after.
            let dst_rows = h + self.parts[p].band.len as usize;
            copy_rows(&mut self.parts, after, h, p, dst_rows, h, w)?;
        }
        crate::cuda::join_streams(&self.streams)
    }
}

/// Copies `count` rows of both fields from part `src` (from row `src_row`) to part `dst` (to
/// row `dst_row`), on the receiving part's stream.
fn copy_rows(
    parts: &mut [Part],
    src: usize,
    src_row: usize,
    dst: usize,
    dst_row: usize,
    count: usize,
    width: usize,
) -> Result<()> {
    assert_ne!(src, dst, "a part never serves its own halo (one part is not split)");
    let (s, d) = if src < dst {
        let (a, b) = parts.split_at_mut(dst);
        (&a[src], &mut b[0])
    } else {
        let (a, b) = parts.split_at_mut(src);
        (&b[0], &mut a[dst])
    };
    let stream = d.engine.stream().clone();
    let (su, sv) = s.engine.state();
    let (du, dv) = d.engine.state_mut();
    let copy = |from: &CudaSlice<f32>, to: &mut CudaSlice<f32>| {
        let source = from.slice(src_row * width..(src_row + count) * width);
        let mut target = to.slice_mut(dst_row * width..(dst_row + count) * width);
        stream.memcpy_dtod(&source, &mut target).context(|| "exchanging halo rows".into())
    };
    copy(su, du)?;
    copy(sv, dv)
}

/// A band's rows with `halo` rows on each side, wrapped around the periodic plane.
fn local(field: &[f32], band: Band, halo: u32, width: u32, height: u32) -> Vec<f32> {
    let w = width as usize;
    let start = i64::from(band.start) - i64::from(halo);
    let mut out = Vec::with_capacity((band.len + 2 * halo) as usize * w);
    for row in decomposition::wrapped_rows(start, band.len + 2 * halo, height) {
        out.extend_from_slice(&field[row as usize * w..(row as usize + 1) * w]);
    }
    out
}

impl Engine for PartedGrayScott {
    fn step(&mut self, steps: u32) -> Result<()> {
        let mut left = steps;
        while left > 0 {
            let k = left.min(self.halo);
            for part in &mut self.parts {
                part.engine.step(k)?;
            }
            self.exchange()?;
            left -= k;
        }
        Ok(())
    }

    /// Frames are gathered to the host and coloured there (the same levels as the GPU's).
    fn snapshot(&mut self) -> Result<()> {
        let (u, v) = self.fields()?;
        let mut levels = vec![0u8; u.len()];
        colormap::levels_cpu(&u, &v, &mut levels);
        self.ready.push(levels);
        Ok(())
    }

    fn collect(&mut self, _wait: bool) -> Result<Vec<Vec<u8>>> {
        Ok(std::mem::take(&mut self.ready))
    }

    fn fields(&mut self) -> Result<(Vec<f32>, Vec<f32>)> {
        let (w, h) = (self.width as usize, self.halo as usize);
        let cells = w * self.height as usize;
        let (mut u, mut v) = (vec![0.0; cells], vec![0.0; cells]);
        for part in &mut self.parts {
            let (lu, lv) = part.engine.fields()?;
            let (start, len) = (part.band.start as usize * w, part.band.len as usize * w);
            u[start..start + len].copy_from_slice(&lu[h * w..h * w + len]);
            v[start..start + len].copy_from_slice(&lv[h * w..h * w + len]);
        }
        Ok((u, v))
    }

    fn set_fields(&mut self, u: &[f32], v: &[f32]) -> Result<()> {
        let (width, height, halo) = (self.width, self.height, self.halo);
        for part in &mut self.parts {
            let (lu, lv) =
                (local(u, part.band, halo, width, height), local(v, part.band, halo, width, height));
            part.engine.set_fields(&lu, &lv)?;
        }
        Ok(())
    }

    fn synchronize(&mut self) -> Result<()> {
        for part in &mut self.parts {
            part.engine.synchronize()?;
        }
        Ok(())
    }

    fn set_rates(&mut self, rates: Rates) {
        for part in &mut self.parts {
            part.engine.set_rates(rates);
        }
    }

    fn describe(&self) -> String {
        let gpus = self.streams.len();
        format!(
            "cuda {} in {} parts of {}-{} rows (halo {}) on {gpus} GPU{}",
            self.variant.name(),
            self.parts.len(),
            self.parts.iter().map(|p| p.band.len).min().unwrap_or(0),
            self.parts.iter().map(|p| p.band.len).max().unwrap_or(0),
            self.halo,
            if gpus == 1 { "" } else { "s" }
        )
    }
}
