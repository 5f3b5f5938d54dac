//! The parameter map (`rust-gpu-sim grayscott --map`): the (F, k) plane as one image, a grid of small
//! tiles, each a Gray-Scott simulation with its own feed and kill rates, all advanced together.
//!
//! Tile `(i, j)` (column `i` along k, row `j` along F, `j = 0` the lowest F) has index
//! `t = j · tiles + i` and the rates at the centre of its cell of the plane. Every field is
//! tile-major: tile `t` holds cells `t·side²..(t+1)·side²`, row-major inside the tile. Every
//! tile is periodic on its own and starts from the same fields (`init`, `seed`) as a single
//! `side × side` simulation, so a tile is bit for bit that simulation with the tile's rates
//! (`simulations/tests/it/map.rs`): the CPU backend steps each tile with the CPU backend's row sweep
//! (rayon over tiles), the GPU one launch of `gray_scott_map` per step for all tiles.
//!
//! ```no_run
//! use simulations::grayscott::map::{MapSetup, ParameterMap};
//! let setup = MapSetup { tiles: 16, side: 64, ..MapSetup::default() };
//! let mut map = ParameterMap::new(&setup, &simulations::Device::Cpu)?;
//! map.step(2000)?;
//! map.render(simulations::render::palette("cyberpunk").unwrap(), std::path::Path::new("map.png"))?;
//! # Ok::<(), simulations::Error>(())
//! ```

use std::{path::Path, sync::Arc};

use cudarc::driver::{CudaSlice, LaunchConfig};
use image::{RgbImage, imageops};
use kernels::grayscott::{Rates, gray_scott_map};
use rayon::prelude::*;

use super::{DEFAULT_DT, DEFAULT_DU, DEFAULT_DV, Init, PRESETS, Setup, cpu, initial_fields};
use crate::{
    Device,
    cuda::Gpu,
    error::{CudaContext as _, Error, Result},
    memory,
    render::{Palette, chart, colormap},
};

/// Feed rates spanned by default: Pearson's phase diagram (J. E. Pearson, "Complex patterns in
/// a simple system", Science 261, 1993) and Munafo's map of it (mrob.com/pub/comp/xmorphia)
/// cover k from 0.03 to 0.07 and F up to about 0.08-0.09; F below 0.01 is the trivial
/// all-U state.
pub const DEFAULT_FEED: (f32, f32) = (0.01, 0.09);
/// Kill rates spanned by default (as [`DEFAULT_FEED`]).
pub const DEFAULT_KILL: (f32, f32) = (0.03, 0.07);
/// The most tiles per side: the GPU launch puts one tile per grid row along z (at most 65535).
pub const MAX_TILES: u32 = 255;
/// Tile sides accepted: large enough for a pattern, small enough to stay a map.
pub const TILE_SIDES: std::ops::RangeInclusive<u32> = 8..=1024;
/// The map's side in the image is at most this many pixels (tiles are shrunk to fit, never
/// enlarged): 64 tiles of 128² become 24 pixels each.
pub const MAP_PIXELS: u32 = 1536;

/// Everything that defines a map.
#[derive(Clone, Debug)]
pub struct MapSetup {
    /// Tiles per side (the map is `tiles × tiles`).
    pub tiles: u32,
    /// Cells per tile side.
    pub side: u32,
    /// Feed rates of the lowest and highest row's cells of the plane (tile centres inside).
    pub feed: (f32, f32),
    /// Kill rates of the leftmost and rightmost column's cells.
    pub kill: (f32, f32),
    pub du: f32,
    pub dv: f32,
    pub dt: f32,
    /// Every tile's start.
    pub init: Init,
    pub seed: u64,
}

impl Default for MapSetup {
    /// 64 × 64 tiles of 128² over [`DEFAULT_FEED`] × [`DEFAULT_KILL`], the presets' diffusion
    /// and time step, scattered spots as the presets start, seed 1.
    fn default() -> Self {
        Self {
            tiles: 64,
            side: 128,
            feed: DEFAULT_FEED,
            kill: DEFAULT_KILL,
            du: DEFAULT_DU,
            dv: DEFAULT_DV,
            dt: DEFAULT_DT,
            init: Init::Spots,
            seed: 1,
        }
    }
}

impl MapSetup {
    /// Number of tiles.
    pub fn tile_count(&self) -> usize {
        self.tiles as usize * self.tiles as usize
    }

    /// Cells per tile.
    pub fn tile_cells(&self) -> usize {
        self.side as usize * self.side as usize
    }

    /// The index of the tile in column `i` (k) and row `j` (F, from the lowest).
    pub fn tile(&self, i: u32, j: u32) -> usize {
        j as usize * self.tiles as usize + i as usize
    }

    /// Where tile `t` goes in the picture of the map, in tiles: its column from the left (k
    /// grows to the right) and its row from the top (F grows upwards, so its lowest row of
    /// tiles is the picture's last). The inverse of [`MapSetup::tile`] with the rows turned.
    pub fn tile_place(&self, t: usize) -> (u32, u32) {
        let (i, j) = (t as u32 % self.tiles, t as u32 / self.tiles);
        (i, self.tiles - 1 - j)
    }

    /// The rates of tile `t`: F and k at the centre of its cell of the plane.
    pub fn rates(&self, t: usize) -> Rates {
        let n = self.tiles as usize;
        let at = |(lo, hi): (f32, f32), index: usize| {
            (f64::from(lo) + (index as f64 + 0.5) * (f64::from(hi) - f64::from(lo)) / n as f64) as f32
        };
        Rates {
            du: self.du,
            dv: self.dv,
            feed: at(self.feed, t / n),
            kill: at(self.kill, t % n),
            dt: self.dt,
        }
    }

    /// The single simulation that tile `t` is.
    pub fn tile_setup(&self, t: usize) -> Setup {
        Setup { init: self.init, seed: self.seed, ..Setup::new(self.side, self.side, self.rates(t)) }
    }

    /// Checks sizes and ranges; the error names the option and its valid values.
    pub fn validate(&self) -> Result<()> {
        let bad = |message: String| Err(Error::InvalidInput(message));
        if !(1..=MAX_TILES).contains(&self.tiles) {
            return bad(format!("--map-tiles must be between 1 and {MAX_TILES}, got {}", self.tiles));
        }
        if !TILE_SIDES.contains(&self.side) {
            return bad(format!(
                "--map-tile-size must be between {} and {}, got {}",
                TILE_SIDES.start(),
                TILE_SIDES.end(),
                self.side
            ));
        }
        for (option, (lo, hi)) in [("--feed-range", self.feed), ("--kill-range", self.kill)] {
            if !(lo.is_finite() && hi.is_finite() && lo >= 0.0 && lo < hi) {
                return bad(format!(
                    "{option} must be two finite, non-negative numbers LO,HI with LO < HI, got {lo},{hi}"
                ));
            }
        }
        // The extreme tiles' rates (diffusion, dt, stability) as single simulations.
        let corner = |feed: f32, kill: f32| Rates { du: self.du, dv: self.dv, feed, kill, dt: self.dt };
        for rates in [corner(self.feed.0, self.kill.0), corner(self.feed.1, self.kill.1)] {
            Setup::new(self.side, self.side, rates).validate()?;
        }
        Ok(())
    }

    /// The map's side in the image, in pixels per tile: the tile side, shrunk so that the
    /// map is at most [`MAP_PIXELS`] wide.
    pub fn tile_pixels(&self) -> u32 {
        (MAP_PIXELS / self.tiles).clamp(1, self.side)
    }
}

/// A running parameter map on some backend.
pub struct ParameterMap {
    setup: MapSetup,
    engine: Engine,
    steps_done: u64,
}

enum Engine {
    Cpu(CpuMap),
    Cuda(Box<CudaMap>),
}

/// Host bytes per cell on the CPU: two pairs of f32 fields; on the GPU, the initial fields.
const CPU_BYTES_PER_CELL: u64 = 16;
const GPU_HOST_BYTES_PER_CELL: u64 = 8;
/// Device bytes per cell: two pairs of f32 fields.
pub const GPU_BYTES_PER_CELL: u64 = 16;

impl ParameterMap {
    /// Builds every tile's initial fields and rates on `device`. Checks the setup first, and
    /// refuses a map that would not fit in host or GPU memory.
    pub fn new(setup: &MapSetup, device: &Device) -> Result<Self> {
        setup.validate()?;
        let cells = (setup.tile_count() * setup.tile_cells()) as u64;
        let side = setup.tiles * setup.side;
        let host_bytes = match device {
            Device::Cpu => CPU_BYTES_PER_CELL,
            Device::Cuda(_) => GPU_HOST_BYTES_PER_CELL,
        };
        memory::check_host(side, side, host_bytes * cells)?;
        let (tile_u, tile_v) = initial_fields(setup.init, setup.side, setup.side, setup.seed);
        let repeat = |tile: &[f32]| -> Vec<f32> {
            let mut field = Vec::with_capacity(cells as usize);
            for _ in 0..setup.tile_count() {
                field.extend_from_slice(tile);
            }
            field
        };
        let (u, v) = (repeat(&tile_u), repeat(&tile_v));
        let rates: Vec<Rates> = (0..setup.tile_count()).map(|t| setup.rates(t)).collect();
        let engine = match device {
            Device::Cpu => Engine::Cpu(CpuMap::new(rates, setup.side, u, v)),
            Device::Cuda(gpu) => Engine::Cuda(Box::new(CudaMap::new(gpu.clone(), setup, &rates, &u, &v)?)),
        };
        Ok(Self { setup: setup.clone(), engine, steps_done: 0 })
    }

    /// Advances every tile by `steps` steps.
    pub fn step(&mut self, steps: u32) -> Result<()> {
        match &mut self.engine {
            Engine::Cpu(map) => (0..steps).for_each(|_| map.step_once()),
            Engine::Cuda(map) => {
                for _ in 0..steps {
                    map.step_once(&self.setup)?;
                }
            }
        }
        self.steps_done += u64::from(steps);
        Ok(())
    }

    /// Waits for queued work (for timing).
    pub fn synchronize(&mut self) -> Result<()> {
        match &self.engine {
            Engine::Cpu(_) => Ok(()),
            Engine::Cuda(map) => Ok(map.gpu.synchronize()?),
        }
    }

    /// The current U and V of every tile, tile-major.
    pub fn fields(&mut self) -> Result<(Vec<f32>, Vec<f32>)> {
        match &self.engine {
            Engine::Cpu(map) => Ok((map.u.clone(), map.v.clone())),
            Engine::Cuda(map) => map.fields(),
        }
    }

    /// The current U and V of tile `t` (copies the whole map out first).
    pub fn tile_fields(&mut self, t: usize) -> Result<(Vec<f32>, Vec<f32>)> {
        let cells = self.setup.tile_cells();
        let (u, v) = self.fields()?;
        Ok((u[t * cells..(t + 1) * cells].to_vec(), v[t * cells..(t + 1) * cells].to_vec()))
    }

    pub fn setup(&self) -> &MapSetup {
        &self.setup
    }

    /// Steps taken so far.
    pub fn steps_done(&self) -> u64 {
        self.steps_done
    }

    /// "cpu (2 threads)", "cuda gray_scott_map (NVIDIA H200)".
    pub fn describe(&self) -> String {
        match &self.engine {
            Engine::Cpu(_) => format!("cpu ({} threads)", rayon::current_num_threads()),
            Engine::Cuda(map) => format!("cuda gray_scott_map ({})", map.gpu.name()),
        }
    }

    /// Draws the map as a PNG at `path` (written under a temporary name until complete): the
    /// tiles colour-mapped with `palette` (V normalised over the whole map, so tiles compare),
    /// k along x and F up, ticks and labels, and the presets in range marked.
    pub fn render(&mut self, palette: &Palette, path: &Path) -> Result<()> {
        let map = self.picture(palette)?;
        draw(&self.setup, self.steps_done, &map, path)
    }

    /// The tiles as one RGB image, as [`ParameterMap::render`] draws them inside its axes: k
    /// growing to the right, F upwards (the lowest F's tiles are the bottom row).
    pub fn picture(&mut self, palette: &Palette) -> Result<RgbImage> {
        let (u, v) = self.fields()?;
        Ok(compose(&self.setup, &u, &v, palette))
    }
}

/// The tiles as one RGB image, `tiles · tile_pixels` a side, F increasing upwards.
fn compose(setup: &MapSetup, u: &[f32], v: &[f32], palette: &Palette) -> RgbImage {
    let mut levels = vec![0u8; u.len()];
    colormap::levels_cpu(u, v, &mut levels);
    let lut = palette.lut();
    let (side, px, cells) = (setup.side, setup.tile_pixels(), setup.tile_cells());
    let tiles: Vec<RgbImage> = levels
        .par_chunks(cells)
        .map(|tile| {
            let image =
                RgbImage::from_fn(side, side, |x, y| image::Rgb(lut[tile[(y * side + x) as usize] as usize]));
            if px == side { image } else { imageops::resize(&image, px, px, imageops::FilterType::Triangle) }
        })
        .collect();
    let mut map = RgbImage::new(setup.tiles * px, setup.tiles * px);
    for (t, tile) in tiles.iter().enumerate() {
        let (column, row) = setup.tile_place(t);
        imageops::replace(&mut map, tile, i64::from(column * px), i64::from(row * px));
    }
    map
}

/// The chart around the composed map: caption, axes with ticks, preset markers.
fn draw(setup: &MapSetup, steps: u64, map: &RgbImage, path: &Path) -> Result<()> {
    use plotters::{element::BitMapElement, prelude::*};

    let fail = |e: &dyn std::fmt::Display| Error::Output { path: path.to_owned(), reason: e.to_string() };
    // Text and margins grow with the map, so labels stay legible when the image is scaled
    // down for display (1 up to an 800-pixel map, 2 at 1600).
    let scale = (f64::from(map.width()) / 800.0).max(1.0);
    let sized = |size: f64| (size * scale).round() as u32;
    let (margin, left, bottom, top) = (sized(16.0), sized(78.0), sized(56.0), sized(44.0));
    // Room on the right for half of the last x label.
    let right = margin + sized(24.0);
    let (width, height) = (map.width() + left + margin + right, map.height() + bottom + top + margin);
    let mut pixels = vec![0u8; (width * height * 3) as usize];
    {
        let root = chart::drawing_area(&mut pixels, (width, height));
        root.fill(&WHITE).map_err(|e| fail(&e))?;
        let caption = format!(
            "Gray-Scott (F, k): {n}x{n} tiles of {s}², {steps} steps",
            n = setup.tiles,
            s = setup.side,
        );
        let (k, f) = (setup.kill, setup.feed);
        let mut plot = ChartBuilder::on(&root)
            .caption(caption, (chart::FONT, sized(18.0)))
            .margin(margin)
            .margin_right(right)
            .x_label_area_size(bottom - margin)
            .y_label_area_size(left)
            .build_cartesian_2d(f64::from(k.0)..f64::from(k.1), f64::from(f.0)..f64::from(f.1))
            .map_err(|e| fail(&e))?;
        plot.configure_mesh()
            .disable_mesh()
            .x_labels(5)
            .y_labels(9)
            .x_desc("kill rate k")
            .y_desc("feed rate F")
            .x_label_formatter(&|x| format!("{x:.3}"))
            .y_label_formatter(&|y| format!("{y:.3}"))
            .label_style((chart::FONT, sized(14.0)))
            .axis_desc_style((chart::FONT, sized(16.0)))
            .draw()
            .map_err(|e| fail(&e))?;
        // The tiles fill the plotting area exactly (resampled if the layout is a pixel off).
        let (xs, ys) = plot.plotting_area().get_pixel_range();
        let (w, h) = ((xs.end - xs.start) as u32, (ys.end - ys.start) as u32);
        let tiles = if (w, h) == map.dimensions() {
            map.clone()
        } else {
            imageops::resize(map, w, h, imageops::FilterType::Nearest)
        };
        let bitmap = BitMapElement::with_owned_buffer((xs.start, ys.start), (w, h), tiles.into_raw())
            .expect("an RGB buffer of the element's size");
        root.draw(&bitmap).map_err(|e| fail(&e))?;
        // The presets in range, each labelled on the first side where its label does not
        // cover an earlier one (the spot presets crowd together near k = 0.065).
        let mut placed: Vec<(i32, i32, i32, i32)> = Vec::new();
        let in_range = |p: &&super::Preset| (k.0..=k.1).contains(&p.kill) && (f.0..=f.1).contains(&p.feed);
        for preset in PRESETS.iter().filter(in_range) {
            let at = (f64::from(preset.kill), f64::from(preset.feed));
            let (px, py) = plot.backend_coord(&at);
            let (w, h) = (sized(7.5) as i32 * preset.name.len() as i32 + 2, sized(14.0) as i32);
            let (gap, r) = (sized(9.0) as i32, sized(5.0) as i32);
            let offsets =
                [(gap, -h / 2), (-gap - w, -h / 2), (-w / 2, gap), (-w / 2, -gap - h), (gap, -h), (gap, 0)];
            let boxes = offsets.map(|(dx, dy)| (px + dx, py + dy, px + dx + w, py + dy + h));
            let clear = |b: &(i32, i32, i32, i32)| {
                placed.iter().all(|p| b.2 <= p.0 || p.2 <= b.0 || b.3 <= p.1 || p.3 <= b.1)
            };
            let choice = boxes.iter().position(clear).unwrap_or(0);
            placed.push(boxes[choice]);
            let (dx, dy) = offsets[choice];
            let marker = |colour: RGBColor, shadow: i32| {
                EmptyElement::at(at)
                    + Circle::new((shadow, shadow), r, colour.stroke_width(sized(2.0)))
                    + Text::new(
                        preset.name,
                        (dx + shadow, dy + shadow),
                        (chart::FONT, sized(13.0)).into_font().color(&colour),
                    )
            };
            // A dark shadow under a white mark: legible on every palette.
            plot.draw_series([marker(BLACK, 1), marker(WHITE, 0)]).map_err(|e| fail(&e))?;
        }
        root.present().map_err(|e| fail(&e))?;
    }
    chart::save_chart(&pixels, width, height, path)
}

/// The CPU backend: every tile stepped by the CPU backend's row sweep, tiles in parallel.
struct CpuMap {
    rates: Vec<Rates>,
    side: u32,
    u: Vec<f32>,
    v: Vec<f32>,
    u_next: Vec<f32>,
    v_next: Vec<f32>,
}

impl CpuMap {
    fn new(rates: Vec<Rates>, side: u32, u: Vec<f32>, v: Vec<f32>) -> Self {
        let cells = u.len();
        Self { rates, side, u, v, u_next: vec![0.0; cells], v_next: vec![0.0; cells] }
    }

    fn step_once(&mut self) {
        let (side, cells) = (self.side, self.side as usize * self.side as usize);
        let (u, v, rates) = (&self.u, &self.v, &self.rates);
        self.u_next.par_chunks_mut(cells).zip(self.v_next.par_chunks_mut(cells)).enumerate().for_each(
            |(t, (u_out, v_out))| {
                let tile = t * cells..(t + 1) * cells;
                cpu::step_grid(&rates[t], side, side, &u[tile.clone()], &v[tile], u_out, v_out);
            },
        );
        std::mem::swap(&mut self.u, &mut self.u_next);
        std::mem::swap(&mut self.v, &mut self.v_next);
    }
}

/// The GPU backend: the tile-major fields and each tile's F and k in device memory.
struct CudaMap {
    gpu: Arc<Gpu>,
    u: CudaSlice<f32>,
    v: CudaSlice<f32>,
    u_next: CudaSlice<f32>,
    v_next: CudaSlice<f32>,
    feed: CudaSlice<f32>,
    kill: CudaSlice<f32>,
}

impl CudaMap {
    fn new(gpu: Arc<Gpu>, setup: &MapSetup, rates: &[Rates], u: &[f32], v: &[f32]) -> Result<Self> {
        let side = setup.tiles * setup.side;
        let need = GPU_BYTES_PER_CELL * u.len() as u64 + (64 << 20);
        let (free, _) = gpu.memory()?;
        memory::require(side, side, need, free, "GPU")?;
        let stream = gpu.stream().clone();
        let upload = |data: &[f32]| stream.clone_htod(data).context(|| "uploading the map".into());
        let feeds: Vec<f32> = rates.iter().map(|r| r.feed).collect();
        let kills: Vec<f32> = rates.iter().map(|r| r.kill).collect();
        Ok(Self {
            u: upload(u)?,
            v: upload(v)?,
            u_next: upload(u)?,
            v_next: upload(v)?,
            feed: upload(&feeds)?,
            kill: upload(&kills)?,
            gpu,
        })
    }

    fn step_once(&mut self, setup: &MapSetup) -> Result<()> {
        let base = Rates { feed: 0.0, kill: 0.0, ..setup.rates(0) };
        launch_map(
            &self.gpu,
            (&self.u, &self.v),
            (&mut self.u_next, &mut self.v_next),
            (&self.feed, &self.kill),
            setup.side,
            setup.tile_count() as u32,
            base,
        )?;
        std::mem::swap(&mut self.u, &mut self.u_next);
        std::mem::swap(&mut self.v, &mut self.v_next);
        Ok(())
    }

    fn fields(&self) -> Result<(Vec<f32>, Vec<f32>)> {
        let stream = self.gpu.stream();
        let u = stream.clone_dtoh(&self.u).context(|| "downloading the map's U".into())?;
        let v = stream.clone_dtoh(&self.v).context(|| "downloading the map's V".into())?;
        self.gpu.synchronize()?;
        Ok((u, v))
    }
}

/// Rows each thread of [`launch_map`] marches.
pub const MAP_ROWS_PER_THREAD: u32 = 4;

/// `gray_scott_map`: one step of `tiles` tiles of `side²` cells from `from` into `to`, tile
/// `t` with `rates.0[t]`, `rates.1[t]` as F and k and `base`'s diffusion and dt.
pub fn launch_map(
    gpu: &Gpu,
    from: (&CudaSlice<f32>, &CudaSlice<f32>),
    to: (&mut CudaSlice<f32>, &mut CudaSlice<f32>),
    rates: (&CudaSlice<f32>, &CudaSlice<f32>),
    side: u32,
    tiles: u32,
    base: Rates,
) -> Result<()> {
    let cells = tiles as usize * side as usize * side as usize;
    // The kernel indexes `tiles` tiles of `side²` cells in every field and `tiles` rates.
    for len in [from.0.len(), from.1.len(), to.0.len(), to.1.len()] {
        assert_eq!(len, cells, "a map field holds tiles × side² cells");
    }
    assert!(rates.0.len() >= tiles as usize && rates.1.len() >= tiles as usize, "one rate per tile");
    // Warps along a tile's rows; 2 bands of `MAP_ROWS_PER_THREAD` rows per block; z: the tile.
    let block_x = side.next_multiple_of(32).min(128);
    let cfg = LaunchConfig {
        grid_dim: (side.div_ceil(block_x), side.div_ceil(MAP_ROWS_PER_THREAD).div_ceil(2), tiles),
        block_dim: (block_x, 2, 1),
        shared_mem_bytes: 0,
    };
    Ok(gpu.launch(
        gray_scott_map,
        cfg,
        (from.0, from.1, to.0, to.1, rates.0, rates.1, side, tiles, base, MAP_ROWS_PER_THREAD),
    )?)
}
