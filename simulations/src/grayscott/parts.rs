//! Gray-Scott split into bands of rows (`--split P`, `--gpus N`), a model adaptor on the one
//! split engine ([`crate::split`]): each part (`Piece`) is a CUDA engine of its own over its
//! band plus `halo` rows on each side, stepped `halo` steps at a time (the steps per exchange,
//! chosen per variant: [`LaunchSettings::halo`]), with the halos refreshed from the
//! neighbouring bands after each round (the first and last bands are neighbours: the plane is
//! periodic). The kernels are the unsplit run's, unchanged; the results are bit-identical to
//! it (see [`crate::split::decomposition`] for why).
//!
//! The transport ([`Transport`]): in one process, the split's peer copies
//! ([`LocalHalos`]); between processes (one band each), its NCCL exchange and gather
//! ([`RankHalos`]). Between processes the exchange can be overlapped with computation
//! (`--overlap`, this file's hook): a rank steps the first and last `halo` rows of its band as
//! pieces of their own, starts the exchange on a stream of its own, and steps the middle
//! meanwhile ([`pieces`]). In one process it is not.

use std::sync::Arc;

use cudarc::driver::CudaStream;

pub use super::launch::{HALO_ROWS_VAR, LaunchSettings, MULTI_STEP_HALO, SINGLE_STEP_HALO, multi_step_halo};
use super::{Engine, Rates, Variant, cuda::CudaGrayScott};
use crate::{
    cuda::Gpu,
    error::{CudaContext as _, Error, Result},
    render::colormap,
    split::{
        self, DeviceRows, Layout, LocalHalos, PartRows, PeerCopy, RankHalos,
        decomposition::{self, Band},
        nccl::Communicator,
        peer,
        transport::Transport,
    },
};

/// One band (or, for an NCCL rank with `--overlap`, one piece of its band: [`pieces`]) and the
/// engine that steps it with `halo` rows on each side: a part of the split ([`split::Part`]).
struct Piece {
    rows: PartRows,
    width: u32,
    engine: CudaGrayScott,
}

impl split::Part for Piece {
    fn step(&mut self, steps: u32) -> Result<()> {
        self.engine.step(steps)
    }

    fn rows(&mut self, field: usize, first: u32, count: u32) -> Result<Vec<f32>> {
        Ok(self.rows_of(&[field], first, count)?.pop().expect("one field"))
    }

    /// U and V come down together.
    fn rows_of(&mut self, fields: &[usize], first: u32, count: u32) -> Result<Vec<Vec<f32>>> {
        let (u, v) = self.engine.fields()?;
        let at = first as usize * self.width as usize..(first + count) as usize * self.width as usize;
        Ok(fields.iter().map(|&f| if f == 0 { &u } else { &v }[at.clone()].to_vec()).collect())
    }

    fn set_rows(&mut self, field: usize, first: u32, values: &[f32]) -> Result<()> {
        let (mut u, mut v) = self.engine.fields()?;
        let at = first as usize * self.width as usize;
        let target = if field == 0 { &mut u } else { &mut v };
        target[at..at + values.len()].copy_from_slice(values);
        self.engine.set_fields(&u, &v)
    }

    fn device_rows(&mut self, field: usize) -> Option<DeviceRows<'_>> {
        Some(self.engine.device_rows(field))
    }

    fn gpu(&self) -> Option<&Arc<Gpu>> {
        Some(self.engine.gpu())
    }
}

/// The pieces a rank steps its band in. With `overlap` (and a band of at least 3 halos): its
/// first and last `halo` rows apart from the middle, so that their steps go first and the
/// exchange with the neighbouring ranks runs while the middle is stepped; else the band whole.
pub fn pieces(band: Band, halo: u32, overlap: bool) -> Vec<Band> {
    if !overlap || band.len < 3 * halo {
        return vec![band];
    }
    vec![
        Band { start: band.start, len: halo },
        Band { start: band.start + halo, len: band.len - 2 * halo },
        Band { start: band.end() - halo, len: halo },
    ]
}

/// Gray-Scott in bands of rows, on GPUs of this process or one band per process.
pub struct PartedGrayScott {
    variant: Variant,
    width: u32,
    height: u32,
    halo: u32,
    /// How many parts the whole run has (more than `parts` when the parts are processes).
    total: usize,
    parts: Vec<Piece>,
    transport: Transport,
    /// NCCL ranks stepping their band in [`pieces`]: the stream the exchange runs on while
    /// the middle piece is stepped.
    overlap: Option<Arc<CudaStream>>,
    ready: Vec<Vec<u8>>,
}

impl PartedGrayScott {
    /// Splits the `width × height` fields `u`, `v` as `layout` says (every process passes
    /// the whole fields and keeps its band). Refuses v0 (its state lives on the host) and
    /// parts thinner than their halo.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        layout: Layout,
        variant: Variant,
        width: u32,
        height: u32,
        rates: Rates,
        settings: LaunchSettings,
        u: &[f32],
        v: &[f32],
    ) -> Result<Self> {
        if !variant.splits() {
            return Err(Error::InvalidInput(format!(
                "--split and --gpus take a GPU variant whose fields live on the GPU, not {}",
                variant.name()
            )));
        }
        let bands = decomposition::bands(height, layout.parts())?;
        let thinnest = bands.iter().map(|b| b.len).min().unwrap_or(1);
        let halo = settings.halo(variant, thinnest.min(height));
        decomposition::check_halo(&bands, halo, "rows")?;
        // One NCCL rank is its own neighbour: its band must hold the rows its halos take.
        if matches!(layout, Layout::Ranks(_)) && height < halo {
            return Err(Error::InvalidInput(format!(
                "the grid's {height} rows are fewer than the {halo}-row halo {} exchanges through NCCL; use a \
                 taller grid or --variant fused (a 1-row halo)",
                variant.name()
            )));
        }
        let total = bands.len();
        // Every band and piece has `halo` rows on each side (the plane is periodic).
        let rows_of = |band: Band| PartRows { band, halo_before: halo, halo_after: halo, grid_rows: height };
        let part = |band: Band, gpu: &Arc<Gpu>| -> Result<Piece> {
            let (lu, lv) = (local(u, band, halo, width, height), local(v, band, halo, width, height));
            let mut engine =
                CudaGrayScott::new(gpu.clone(), variant, width, band.len + 2 * halo, rates, &lu, &lv)?;
            engine.set_launch_settings(&settings);
            Ok(Piece { rows: rows_of(band), width, engine })
        };
        let (parts, transport, overlap) = match layout {
            Layout::Local { gpus, .. } => {
                let placement = decomposition::placement(total, gpus.len());
                let parts = bands
                    .iter()
                    .zip(&placement)
                    .map(|(band, &g)| part(*band, &gpus[g]))
                    .collect::<Result<Vec<_>>>()?;
                let streams = parts.iter().map(|p: &Piece| Some(p.engine.stream().clone())).collect();
                let rows: Vec<PartRows> = parts.iter().map(|p| p.rows).collect();
                let halos = LocalHalos::new(streams, split::halos(&rows, true), PeerCopy::Read, true)?;
                (parts, Transport::Peer(halos), None)
            }
            Layout::Ranks(comm) => {
                let cut =
                    |band: &Band| pieces(*band, halo, settings.overlap).into_iter().map(rows_of).collect();
                let every: Vec<Vec<PartRows>> = bands.iter().map(cut).collect();
                let mine = &every[comm.rank()];
                let parts = mine.iter().map(|r| part(r.band, comm.gpu())).collect::<Result<Vec<_>>>()?;
                // The pieces' halos among themselves, on the rank's stream (not periodic: the
                // band's own edges are NCCL's).
                let (pieces, overlap) = if parts.len() > 1 {
                    let stream =
                        comm.gpu().stream().fork().context(|| "creating the exchange stream".into())?;
                    let halos = split::halos(mine, false);
                    (Some(LocalHalos::unordered(parts[0].engine.stream(), parts.len(), halos)), Some(stream))
                } else {
                    (None, None)
                };
                let all = bands.iter().map(|band| rows_of(*band)).collect();
                let ranks = RankHalos::new(comm, all, Some(every), true);
                (parts, Transport::Ranks { ranks: Box::new(ranks), pieces }, overlap)
            }
        };
        Ok(Self { variant, width, height, halo, total, parts, transport, overlap, ready: Vec::new() })
    }

    /// Steps every part `steps` times with no exchange in between: the computation alone, for
    /// the bench (the halos go stale, so the fields are no longer the simulation's).
    pub fn compute_only(&mut self, steps: u32) -> Result<()> {
        let mut left = steps;
        while left > 0 {
            let k = left.min(self.halo);
            for part in &mut self.parts {
                part.engine.step(k)?;
            }
            left -= k;
        }
        Ok(())
    }

    /// Gives up the parts, keeping this rank's communicator (for another run on it).
    pub fn into_communicator(self) -> Option<Communicator> {
        self.transport.into_communicator()
    }

    /// This rank's communicator, where the parts are NCCL ranks.
    pub fn communicator(&self) -> Option<&Communicator> {
        self.transport.comm()
    }

    /// The halo depth in rows (the steps between exchanges).
    pub fn halo(&self) -> u32 {
        self.halo
    }

    /// The bands, in order.
    pub fn bands(&self) -> Vec<Band> {
        self.parts.iter().map(|p| p.rows.band).collect()
    }

    /// Bytes one exchange copies: two fields, two halos per part (this process's parts).
    pub fn exchange_bytes(&self) -> u64 {
        self.parts.len() as u64 * 2 * 2 * u64::from(self.halo) * u64::from(self.width) * 4
    }

    /// Whether this process writes the outputs (rank 0, or the only process).
    pub fn is_root(&self) -> bool {
        self.transport.is_root()
    }

    /// Refreshes every part's halos from its neighbours' bands ([`Transport::exchange`]).
    pub fn exchange(&mut self) -> Result<()> {
        let stream = self.parts[0].engine.stream().clone();
        self.transport.exchange(&mut self.parts, Some(&stream), 2, self.width)
    }

    /// One round of `k` steps through NCCL with the exchange overlapped: the boundary pieces
    /// are stepped, the exchange with the neighbouring ranks starts on its own stream, the
    /// middle piece is stepped meanwhile, then the pieces exchange among themselves and the
    /// streams are joined.
    fn step_overlapped(&mut self, k: u32, exchange: &Arc<CudaStream>) -> Result<()> {
        let Transport::Ranks { ranks, pieces: Some(pieces) } = &mut self.transport else {
            unreachable!("overlap is for NCCL ranks in pieces")
        };
        let last = self.parts.len() - 1;
        self.parts[0].engine.step(k)?;
        self.parts[last].engine.step(k)?;
        let main = self.parts[0].engine.stream().clone();
        exchange.join(&main).context(|| "ordering the exchange after the boundary steps".into())?;
        ranks.exchange(&mut self.parts, exchange, 2, self.width)?;
        for part in &mut self.parts[1..last] {
            part.engine.step(k)?;
        }
        pieces.exchange(&mut self.parts, self.width, 2)?;
        main.join(exchange).context(|| "joining the exchange".into())
    }
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
        // A rank that stopped stalls the exchanges, and with them this loop once the launch
        // queue is full: watched, with the clock restarted after each exchange queued.
        let (watch, overlap) = (self.transport.watch("the halo exchange"), self.overlap.clone());
        let mut left = steps;
        while left > 0 {
            let k = left.min(self.halo);
            if let Some(exchange) = &overlap {
                self.step_overlapped(k, exchange)?;
            } else {
                for part in &mut self.parts {
                    part.engine.step(k)?;
                }
                self.exchange()?;
            }
            if let Some(watch) = &watch {
                watch.progress();
            }
            left -= k;
        }
        Ok(())
    }

    /// Frames are gathered to the host and coloured there (the same levels as the GPU's);
    /// NCCL ranks other than 0 only send their band.
    fn snapshot(&mut self) -> Result<()> {
        let (u, v) = self.fields()?;
        if !self.is_root() {
            return Ok(());
        }
        let mut levels = vec![0u8; u.len()];
        colormap::levels_cpu(&u, &v, &mut levels);
        self.ready.push(levels);
        Ok(())
    }

    fn collect(&mut self, _wait: bool) -> Result<Vec<Vec<u8>>> {
        Ok(std::mem::take(&mut self.ready))
    }

    /// Every band's, assembled in this process or gathered to rank 0 ([`Transport::gather`]).
    fn fields(&mut self) -> Result<(Vec<f32>, Vec<f32>)> {
        let stream = self.parts[0].engine.stream().clone();
        let rows: Vec<PartRows> = self.parts.iter().map(|p| p.rows).collect();
        let [u, v]: [Vec<f32>; 2] =
            (self.transport.gather(&mut self.parts, &rows, Some(&stream), &[0, 1], self.width)?)
                .try_into()
                .expect("two fields");
        Ok((u, v))
    }

    fn set_fields(&mut self, u: &[f32], v: &[f32]) -> Result<()> {
        let (width, height, halo) = (self.width, self.height, self.halo);
        for part in &mut self.parts {
            let band = part.rows.band;
            let (lu, lv) = (local(u, band, halo, width, height), local(v, band, halo, width, height));
            part.engine.set_fields(&lu, &lv)?;
        }
        Ok(())
    }

    fn synchronize(&mut self) -> Result<()> {
        let _watch = self.transport.watch("the halo exchange");
        for part in &mut self.parts {
            part.engine.synchronize()?;
        }
        Ok(())
    }

    fn is_root(&self) -> bool {
        PartedGrayScott::is_root(self)
    }

    fn set_rates(&mut self, rates: Rates) {
        for part in &mut self.parts {
            part.engine.set_rates(rates);
        }
    }

    fn describe(&self) -> String {
        let bands = decomposition::bands(self.height, self.total as u32).unwrap_or_default();
        let (thinnest, thickest) =
            (bands.iter().map(|b| b.len).min().unwrap_or(0), bands.iter().map(|b| b.len).max().unwrap_or(0));
        let place = match &self.transport {
            Transport::Peer(halos) => {
                peer::describe(self.parts.iter().map(|p| p.engine.gpu_ordinal()), halos.how())
            }
            Transport::Ranks { ranks, .. } => format!(
                "one per process over NCCL, {} processes{}",
                ranks.comm().size(),
                if self.overlap.is_some() { ", exchange overlapped with the middle rows" } else { "" }
            ),
        };
        format!(
            "cuda {} in {} parts of {thinnest}-{thickest} rows (halo {}) {place}",
            self.variant.name(),
            self.total,
            self.halo,
        )
    }
}
