//! Gray-Scott split into bands of rows (`--split P`, `--gpus N`): each part is a CUDA engine
//! of its own over its band plus `halo` rows on each side, stepped `halo` steps at a time,
//! with the halos refreshed from the neighbouring bands in between (the first and last bands
//! are neighbours: the plane is periodic). The kernels are the unsplit run's, unchanged; the
//! results are bit-identical to it (see [`crate::split::decomposition`] for why).
//!
//! Two transports ([`Layout`]): in one process, copies on the receiving part's stream (peer
//! to peer where the parts sit on different GPUs), ordered by events between neighbours only
//! ([`crate::split::peer`]); between processes (one part each),
//! NCCL's grouped send/receive on the part's stream, rank 0 gathering the fields for every
//! output. Between processes the exchange can be overlapped with computation (`--overlap`):
//! a rank steps the first and last `halo` rows of its band as pieces of their own, starts the
//! exchange on a stream of its own, and steps the middle meanwhile ([`pieces`]). In one
//! process it is not.

use std::sync::Arc;

use cudarc::driver::CudaSlice;

use super::{
    Engine, Rates, Variant,
    cuda::{CudaGrayScott, FusedShape, StreamShape, schemes::TuneTarget},
};
use crate::{
    cuda::Gpu,
    split::decomposition::{self, Band},
    error::{CudaContext as _, Error, Result},
    split::peer::{self, Neighbourhood, PeerCopy},
    split::nccl::{Communicator, Transfer},
    render::colormap,
    split::Layout,
};

/// The launch settings of the GPU variants that have them, each read and tuned by its
/// variant's scheme alone (`cuda/schemes/`); every part of a split run runs with the same (tuned for a
/// part's size).
#[derive(Clone, Copy, Debug)]
pub struct LaunchSettings {
    /// `fused`'s launch shape.
    pub fused: FusedShape,
    /// `temporal`'s steps per launch (1 to 8).
    pub temporal_steps: u32,
    /// The `streaming` kernels' launch setting.
    pub stream: StreamShape,
    /// NCCL ranks: step the band's edges first and overlap the exchange with the middle.
    pub overlap: bool,
    /// The fewest rows of a multi-step halo ([`MULTI_STEP_HALO`], or [`HALO_ROWS_VAR`]):
    /// agreed with the other settings, since every rank's halos must be alike.
    pub halo_rows: u32,
}

impl Default for LaunchSettings {
    fn default() -> Self {
        Self {
            fused: FusedShape::default(),
            temporal_steps: kernels::grayscott::TEMPORAL_MAX_STEPS,
            stream: StreamShape::default(),
            overlap: false,
            halo_rows: min_multi_step_halo(),
        }
    }
}

impl LaunchSettings {
    /// Settings for the parts of `layout` of a `width × height` grid: [`Self::for_parts`] on
    /// this process's first GPU; rank 0's where the parts are processes (their halos must
    /// agree, and each rank's tuning may choose differently). `overlap` as
    /// [`LaunchSettings::overlap`].
    pub fn for_layout(
        layout: &Layout,
        variant: Variant,
        width: u32,
        height: u32,
        autotune: bool,
        overlap: bool,
    ) -> Result<Self> {
        let settings = Self {
            overlap,
            ..Self::for_parts(layout.first_gpu(), variant, width, height, layout.parts(), autotune)?
        };
        let mut words = settings.to_words();
        layout.agree(&mut words)?;
        Ok(Self::from_words(words))
    }

    fn to_words(self) -> [u32; 11] {
        let (f, s) = (self.fused, self.stream);
        [
            f.block.0,
            f.block.1,
            f.rows,
            f.columns,
            self.temporal_steps,
            s.steps,
            s.warps,
            s.chunk,
            s.cols,
            u32::from(self.overlap),
            self.halo_rows,
        ]
    }

    fn from_words(w: [u32; 11]) -> Self {
        Self {
            fused: FusedShape { block: (w[0], w[1]), rows: w[2], columns: w[3] },
            temporal_steps: w[4],
            stream: StreamShape { steps: w[5], warps: w[6], chunk: w[7], cols: w[8] },
            overlap: w[9] != 0,
            halo_rows: w[10],
        }
    }

    /// Settings for `split` bands of a `width × height` grid on `gpu`: the defaults, with
    /// `variant`'s own setting tuned (or taken from the cache, or the default without
    /// `autotune`) for one part with the largest halo its launches take, the size the parts
    /// really step.
    pub fn for_parts(
        gpu: &Gpu,
        variant: Variant,
        width: u32,
        height: u32,
        split: u32,
        autotune: bool,
    ) -> Result<Self> {
        let mut settings = Self::default();
        if let Some(scheme) = variant.scheme() {
            let part_rows = height.div_ceil(split.max(1));
            let rows = part_rows + 2 * settings.halo_depth(scheme.max_steps_per_launch());
            scheme.tune(&TuneTarget { gpu, width, height: rows, autotune }, &mut settings)?;
        }
        Ok(settings)
    }

    /// Rows of halo a part needs on each side, which are also the steps between exchanges:
    /// for the variants of several steps per launch, whole launches' steps up to
    /// [`LaunchSettings::halo_rows`] or more; for those of one step per launch,
    /// [`SINGLE_STEP_HALO`]. At most `rows` (the thinnest part's rows), but never under one
    /// launch's steps.
    pub fn halo(&self, variant: Variant, rows: u32) -> u32 {
        let steps = variant.scheme().map_or(1, |scheme| scheme.steps_per_launch(self)).max(1);
        self.halo_depth(steps).min(rows).max(steps)
    }

    /// The halo of a variant of `steps` steps per launch on parts of any size.
    fn halo_depth(&self, steps: u32) -> u32 {
        match steps {
            0 | 1 => SINGLE_STEP_HALO,
            steps => self.halo_rows.div_ceil(steps) * steps,
        }
    }
}

/// Halo rows of the variants that advance one step per launch (`fused`, `tiled`, `v1`, `v2`)
/// in a split run: with `h` rows a part steps `h` times between exchanges (each step spoils
/// one more row from each edge of its halos, never its band), so the exchange's fixed cost,
/// 8 copies or an NCCL group, is paid every `h` steps; the price is `2h` extra rows stepped,
/// 0.4% of a 4096-row band at 8.
pub const SINGLE_STEP_HALO: u32 = 8;

/// The fewest halo rows of the variants that advance several steps per launch (`temporal`,
/// `streaming`: T steps each) in a split run: their halo is the smallest whole number of
/// launches' steps that reaches it (28 rows at T = 7, 24 at T = 8), and lasts as many
/// launches, so the exchange's fixed cost is paid once per so many launches. Measured on 4
/// H200s, Gray-Scott 16384² `streaming` (T = 7), strong scaling on 4 GPUs: 1 launch per
/// exchange 89.2%, 2 launches 91.0% (one process); at least 16 rows (3 launches) 91.9% in one
/// process and over NCCL, 22 (4 launches) 92.2% and 92.2%, 36 (6 launches) 91.6% and 91.5%
/// (`scripts/gpu-check.sh multi-sweep`; docs/multi-gpu.md).
pub const MULTI_STEP_HALO: u32 = 22;

/// Sets the fewest rows of a multi-step halo instead of [`MULTI_STEP_HALO`] (1 to 256), to
/// measure other depths; every rank of a job must be given the same (`mpirun -x`).
pub const HALO_ROWS_VAR: &str = "RUST_GPU_SIM_HALO_ROWS";

/// The fewest rows of a multi-step halo: [`MULTI_STEP_HALO`], or [`HALO_ROWS_VAR`] where it
/// is set (a value outside 1 to 256 is refused with a warning and the default kept).
fn min_multi_step_halo() -> u32 {
    static ROWS: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *ROWS.get_or_init(|| {
        let Ok(text) = std::env::var(HALO_ROWS_VAR) else { return MULTI_STEP_HALO };
        match text.parse::<u32>() {
            Ok(rows @ 1..=256) => rows,
            _ => {
                eprintln!(
                    "warning: {HALO_ROWS_VAR}={text} is not 1 to 256 rows: halos of {MULTI_STEP_HALO} rows"
                );
                MULTI_STEP_HALO
            }
        }
    })
}

/// The halo of a variant of `steps` (2 or more) steps per launch with the default
/// [`LaunchSettings::halo_rows`]: the smallest multiple of `steps` that is
/// at least [`MULTI_STEP_HALO`] (or [`HALO_ROWS_VAR`]).
pub fn multi_step_halo(steps: u32) -> u32 {
    let steps = steps.max(1);
    min_multi_step_halo().div_ceil(steps) * steps
}

/// One band and the engine that steps it with its halos.
struct Part {
    band: Band,
    engine: CudaGrayScott,
}

/// How this process's parts exchange halos.
enum Link {
    /// Every part is here, on the streams of its GPU, with its neighbours; halos between
    /// GPUs travel as `PeerCopy` says.
    Local(Neighbourhood, PeerCopy),
    /// This rank's band here, as [`pieces`] (in order); NCCL to the other ranks. With
    /// `overlap`, the stream the exchange runs on while the middle piece is stepped.
    Nccl { comm: Communicator, overlap: Option<Arc<cudarc::driver::CudaStream>> },
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
    /// Whether NCCL ranks step their bands in [`pieces`] to overlap the exchange.
    overlap: bool,
    parts: Vec<Part>,
    link: Link,
    ready: Vec<Vec<u8>>,
    /// Rank 0's buffer for the bands it gathers (allocated at the first gather).
    gathered: Option<CudaSlice<f32>>,
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
        let part = |band: Band, gpu: &Arc<Gpu>| -> Result<Part> {
            let (lu, lv) = (local(u, band, halo, width, height), local(v, band, halo, width, height));
            let mut engine =
                CudaGrayScott::new(gpu.clone(), variant, width, band.len + 2 * halo, rates, &lu, &lv)?;
            engine.set_launch_settings(&settings);
            Ok(Part { band, engine })
        };
        let (parts, link) = match layout {
            Layout::Local { gpus, .. } => {
                let placement = decomposition::placement(total, gpus.len());
                let parts = bands
                    .iter()
                    .zip(&placement)
                    .map(|(band, &g)| part(*band, &gpus[g]))
                    .collect::<Result<Vec<_>>>()?;
                let used = placement.last().map_or(1, |g| g + 1);
                let how = peer::enable_peer_access_all(&gpus[..used], PeerCopy::Read)?;
                let streams = parts.iter().map(|p: &Part| p.engine.stream().clone()).collect();
                (parts, Link::Local(Neighbourhood::new(streams, true)?, how))
            }
            Layout::Ranks(comm) => {
                let mine = pieces(bands[comm.rank()], halo, settings.overlap);
                let parts = mine.iter().map(|band| part(*band, comm.gpu())).collect::<Result<Vec<_>>>()?;
                let overlap = if parts.len() > 1 {
                    Some(comm.gpu().stream().fork().context(|| "creating the exchange stream".into())?)
                } else {
                    None
                };
                (parts, Link::Nccl { comm, overlap })
            }
        };
        let overlap = settings.overlap;
        Ok(Self {
            variant,
            width,
            height,
            halo,
            total,
            overlap,
            parts,
            link,
            ready: Vec::new(),
            gathered: None,
        })
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
        match self.link {
            Link::Nccl { comm, .. } => Some(comm),
            Link::Local(..) => None,
        }
    }

    /// This rank's communicator, where the parts are NCCL ranks.
    pub fn communicator(&self) -> Option<&Communicator> {
        match &self.link {
            Link::Nccl { comm, .. } => Some(comm),
            Link::Local(..) => None,
        }
    }

    /// The halo depth in rows (the steps between exchanges).
    pub fn halo(&self) -> u32 {
        self.halo
    }

    /// The bands, in order.
    pub fn bands(&self) -> Vec<Band> {
        self.parts.iter().map(|p| p.band).collect()
    }

    /// Bytes one exchange copies: two fields, two halos per part (this process's parts).
    pub fn exchange_bytes(&self) -> u64 {
        self.parts.len() as u64 * 2 * 2 * u64::from(self.halo) * u64::from(self.width) * 4
    }

    /// Whether this process writes the outputs (rank 0, or the only process).
    pub fn is_root(&self) -> bool {
        match &self.link {
            Link::Local(..) => true,
            Link::Nccl { comm, .. } => comm.is_root(),
        }
    }

    /// Refreshes every part's halos from its neighbours' bands.
    pub fn exchange(&mut self) -> Result<()> {
        let (hood, how) = match &self.link {
            Link::Local(hood, how) => (hood, *how),
            Link::Nccl { comm, .. } => {
                let stream = self.parts[0].engine.stream().clone();
                exchange_nccl(comm, &stream, &self.parts, self.total, self.halo, self.width)?;
                return exchange_pieces(&mut self.parts, self.halo, self.width);
            }
        };
        hood.before_pulls()?;
        let (h, w) = (self.halo as usize, self.width as usize);
        let n = self.parts.len();
        for p in 0..n {
            let (before, after) = decomposition::neighbours(p, n, true);
            let (before, after) = (before.expect("periodic"), after.expect("periodic"));
            // Top halo (rows 0..h) ← the last h rows of the band before.
            let src_rows = self.parts[before].band.len as usize; // rows len .. len + h of `before`
            copy_rows(how, &mut self.parts, before, src_rows, p, 0, h, w)?;
            // Bottom halo (rows h + len ..) ← the first h rows of the band after.
            let dst_rows = h + self.parts[p].band.len as usize;
            copy_rows(how, &mut self.parts, after, h, p, dst_rows, h, w)?;
        }
        hood.after_pulls()
    }

    /// One round of `k` steps through NCCL with the exchange overlapped: the boundary pieces
    /// are stepped, the exchange with the neighbouring ranks starts on its own stream, the
    /// middle piece is stepped meanwhile, then the pieces exchange among themselves and the
    /// streams are joined.
    fn step_overlapped(&mut self, k: u32, exchange: &Arc<cudarc::driver::CudaStream>) -> Result<()> {
        let Link::Nccl { comm, .. } = &self.link else { unreachable!("overlap is for NCCL ranks") };
        let last = self.parts.len() - 1;
        self.parts[0].engine.step(k)?;
        self.parts[last].engine.step(k)?;
        let main = self.parts[0].engine.stream().clone();
        exchange.join(&main).context(|| "ordering the exchange after the boundary steps".into())?;
        exchange_nccl(comm, exchange, &self.parts, self.total, self.halo, self.width)?;
        for part in &mut self.parts[1..last] {
            part.engine.step(k)?;
        }
        exchange_pieces(&mut self.parts, self.halo, self.width)?;
        main.join(exchange).context(|| "joining the exchange".into())
    }

    /// Rank 0: the whole fields, its band and every other rank's gathered; other ranks send
    /// their band (piece by piece) and get empty fields.
    fn gather(&mut self) -> Result<(Vec<f32>, Vec<f32>)> {
        let Link::Nccl { comm, .. } = &self.link else { unreachable!("gathering is for NCCL ranks") };
        let _watch = comm.watch("gathering the fields on rank 0");
        let (w, h) = (self.width as usize, self.halo as usize);
        let stream = self.parts[0].engine.stream().clone();
        if !comm.is_root() {
            let mut sends = Vec::new();
            for field in 0..2 {
                for part in &self.parts {
                    let (u, v) = part.engine.state();
                    let f = if field == 0 { u } else { v };
                    sends.push(Transfer::rows(f, &stream, h, part.band.len as usize, w, 0, true));
                }
            }
            comm.exchange(&stream, &sends)?;
            stream.synchronize().context(|| "sending this rank's band to rank 0".into())?;
            return Ok((Vec::new(), Vec::new()));
        }
        let (mut u, mut v) = own_bands(&mut self.parts, self.width, self.height, self.halo)?;
        let bands = decomposition::bands(self.height, self.total as u32)?;
        let most = bands.iter().map(|b| b.len as usize).max().unwrap_or(0) * w;
        if self.gathered.is_none() {
            self.gathered =
                Some(stream.alloc_zeros::<f32>(2 * most).context(|| "allocating the gather buffer".into())?);
        }
        let buffer = self.gathered.as_mut().expect("allocated above");
        for (r, band) in bands.iter().enumerate().skip(1) {
            // Rank r's pieces, as it sends them: U's, then V's.
            let mut recvs = Vec::new();
            for field in 0..2 {
                for piece in pieces(*band, self.halo, self.overlap) {
                    let row = field * most / w + (piece.start - band.start) as usize;
                    recvs.push(Transfer::rows(buffer, &stream, row, piece.len as usize, w, r, false));
                }
            }
            comm.exchange(&stream, &recvs)?;
            let (start, len) = (band.start as usize * w, band.len as usize * w);
            stream
                .memcpy_dtoh(&buffer.slice(0..len), &mut u[start..start + len])
                .context(|| "gathering U".into())?;
            stream
                .memcpy_dtoh(&buffer.slice(most..most + len), &mut v[start..start + len])
                .context(|| "gathering V".into())?;
            stream.synchronize().context(|| "gathering the fields".into())?;
        }
        Ok((u, v))
    }
}

/// One NCCL exchange of a rank's halos on `stream`: the last `halo` rows of its band (its
/// last piece's) go down to the next rank's top halo, its first (its first piece's) go up to
/// the previous rank's bottom halo, both fields, in one group. The order of the transfers
/// makes the n-th send from one rank to another meet the n-th receive there also when both
/// neighbours are one rank (2 ranks) or this rank itself (1 rank).
fn exchange_nccl(
    comm: &Communicator,
    stream: &Arc<cudarc::driver::CudaStream>,
    parts: &[Part],
    total: usize,
    halo: u32,
    width: u32,
) -> Result<()> {
    let (before, after) = decomposition::neighbours(comm.rank(), total, true);
    let (before, after) = (before.expect("periodic"), after.expect("periodic"));
    let (h, w) = (halo as usize, width as usize);
    let (first, last) = (&parts[0], &parts[parts.len() - 1]);
    let (fu, fv) = first.engine.state();
    let (lu, lv) = last.engine.state();
    let len = last.band.len as usize;
    let rows = |f, row, peer, send| Transfer::rows(f, stream, row, h, w, peer, send);
    let transfers = [
        // Down: the band's last rows to the next rank; the top halo from the previous.
        rows(lu, len, after, true),
        rows(fu, 0, before, false),
        rows(lv, len, after, true),
        rows(fv, 0, before, false),
        // Up: the band's first rows to the previous rank; the bottom halo from the next.
        rows(fu, h, before, true),
        rows(lu, h + len, after, false),
        rows(fv, h, before, true),
        rows(lv, h + len, after, false),
    ];
    comm.exchange(stream, &transfers)
}

/// The halos between consecutive pieces of one rank's band (not periodic: the band's own
/// edges are NCCL's), copied on the receiving piece's stream.
fn exchange_pieces(parts: &mut [Part], halo: u32, width: u32) -> Result<()> {
    let (h, w) = (halo as usize, width as usize);
    for p in 0..parts.len().saturating_sub(1) {
        let len = parts[p].band.len as usize;
        // The lower piece's bottom halo ← the upper piece's first rows, and back.
        copy_rows(PeerCopy::Engine, parts, p + 1, h, p, h + len, h, w)?;
        copy_rows(PeerCopy::Engine, parts, p, len, p + 1, 0, h, w)?;
    }
    Ok(())
}

/// Whole-grid fields (`width × height`) holding the bands of `parts` (zero elsewhere).
fn own_bands(parts: &mut [Part], width: u32, height: u32, halo: u32) -> Result<(Vec<f32>, Vec<f32>)> {
    let (w, h) = (width as usize, halo as usize);
    let cells = w * height as usize;
    let (mut u, mut v) = (vec![0.0; cells], vec![0.0; cells]);
    for part in parts {
        let (lu, lv) = part.engine.fields()?;
        let (start, len) = (part.band.start as usize * w, part.band.len as usize * w);
        u[start..start + len].copy_from_slice(&lu[h * w..h * w + len]);
        v[start..start + len].copy_from_slice(&lv[h * w..h * w + len]);
    }
    Ok((u, v))
}

/// Copies `count` rows of both fields from part `src` (from row `src_row`) to part `dst` (to
/// row `dst_row`), on the receiving part's stream, `how` between GPUs.
#[allow(clippy::too_many_arguments)]
fn copy_rows(
    how: PeerCopy,
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
    let (stream, gpu) = (d.engine.stream().clone(), d.engine.gpu().clone());
    let (su, sv) = s.engine.state();
    let (du, dv) = d.engine.state_mut();
    let (from, to, n) = (src_row * width, dst_row * width, count * width);
    peer::copy(how, Some(&gpu), &stream, su, from, du, to, n)?;
    peer::copy(how, Some(&gpu), &stream, sv, from, dv, to, n)
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
        let (watch, overlap) = match &self.link {
            Link::Nccl { comm, overlap } => (Some(comm.watch("the halo exchange")), overlap.clone()),
            Link::Local(..) => (None, None),
        };
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

    fn fields(&mut self) -> Result<(Vec<f32>, Vec<f32>)> {
        if matches!(self.link, Link::Nccl { .. }) {
            return self.gather();
        }
        own_bands(&mut self.parts, self.width, self.height, self.halo)
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
        let _watch = match &self.link {
            Link::Nccl { comm, .. } => Some(comm.watch("the halo exchange")),
            Link::Local(..) => None,
        };
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
        let place = match &self.link {
            Link::Local(_, how) => {
                peer::describe(self.parts.iter().map(|p| p.engine.gpu_ordinal()), *how)
            }
            Link::Nccl { comm, overlap } => format!(
                "one per process over NCCL, {} processes{}",
                comm.size(),
                if overlap.is_some() { ", exchange overlapped with the middle rows" } else { "" }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Whole launches, at least MULTI_STEP_HALO rows, and no more launches than needed.
    #[test]
    fn multi_step_halos_are_whole_launches_of_at_least_the_fewest_rows() {
        for (steps, halo) in [(1, 22), (3, 24), (5, 25), (7, 28), (8, 24), (0, 22)] {
            assert_eq!(multi_step_halo(steps), halo, "{steps} steps per launch");
        }
        for steps in 1..=8 {
            let halo = multi_step_halo(steps);
            assert!(halo.is_multiple_of(steps) && halo >= MULTI_STEP_HALO && halo - steps < MULTI_STEP_HALO);
        }
    }
}
