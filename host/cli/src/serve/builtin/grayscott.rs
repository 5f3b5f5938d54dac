//! Gray-Scott in the live view: the library's [`GrayScott`], its settings the library's
//! [`Choices`] checked by the library's rules, its rates changed live, the brush painting V,
//! the (F, k) map.

use simulations::{
    Choice as _, Device,
    choice::VariantChoice as _,
    grayscott::{
        self, Choices, GrayScott, Init, Setup, Variant,
        map::{DEFAULT_FEED, DEFAULT_KILL, MapSetup, ParameterMap},
    },
    render::colormap,
    settings::{DEFAULT_SEED, Seed},
};

use super::batch;
use crate::{
    cli::grayscott::GrayScottSim,
    serve::model::{Control, Demand, LiveModel, ParameterMapImage, PresetInfo, Recorded, Start},
    settings_document::{Document, RunTable},
};

/// Gray-Scott, as the live view runs it.
#[derive(Debug)]
pub struct GrayScottLive;

/// The command line's options (name, value) of the page's settings, in the order the batch
/// command lists them.
fn options(c: &Choices) -> Vec<(&'static str, String)> {
    let words = [
        ("width", c.width.map(|v| v.to_string())),
        ("height", c.height.map(|v| v.to_string())),
        ("preset", c.preset.clone()),
        ("feed", c.feed.map(|v| v.to_string())),
        ("kill", c.kill.map(|v| v.to_string())),
        ("du", c.du.map(|v| v.to_string())),
        ("dv", c.dv.map(|v| v.to_string())),
        ("dt", c.dt.map(|v| v.to_string())),
        ("init", c.init.map(|v| v.name().to_owned())),
        ("seed", c.seed.map(|v| v.0.to_string())),
    ];
    words.into_iter().filter_map(|(name, value)| Some((name, value?))).collect()
}

impl LiveModel for GrayScottLive {
    /// The library's choices, every one given but `steps` and `init_image` (which the page
    /// has no setting for).
    type Settings = Choices;
    type Setup = Setup;
    type Run = GrayScott;

    const RANGES_ARE_LIMITS: bool = false;
    const BRUSH: bool = true;
    const PARAMETER_MAP: bool = true;

    fn name(&self) -> &'static str {
        "grayscott"
    }

    fn label(&self) -> &'static str {
        "Gray-Scott"
    }

    /// The `coral` preset on a grid the device runs live (smaller on the CPU).
    fn defaults(&self, device: &Device) -> Start<Choices> {
        let gpu = matches!(device, Device::Cuda(_));
        let preset = grayscott::preset("coral").expect("the coral preset");
        let side = if gpu { 1024 } else { 256 };
        Start {
            settings: Choices {
                width: Some(side),
                height: Some(side),
                preset: Some(preset.name.into()),
                feed: Some(preset.feed),
                kill: Some(preset.kill),
                du: Some(grayscott::DEFAULT_DU),
                dv: Some(grayscott::DEFAULT_DV),
                dt: Some(grayscott::DEFAULT_DT),
                init: Some(preset.init),
                seed: Some(Seed(DEFAULT_SEED)),
                steps: None,
                init_image: None,
            },
            palette: "cyberpunk",
            steps_per_frame: if gpu { 100 } else { 20 },
        }
    }

    fn controls(&self) -> Vec<Control> {
        vec![
            Control::slider("feed", "F", 0.0, 0.1, 0.0001),
            Control::slider("kill", "k", 0.03, 0.075, 0.0001),
            Control::slider("du", "Du", 0.01, 0.25, 0.001),
            Control::slider("dv", "Dv", 0.01, 0.25, 0.001),
        ]
    }

    fn presets(&self) -> Vec<PresetInfo> {
        grayscott::PRESETS.iter().map(|p| PresetInfo { name: p.name, description: p.description }).collect()
    }

    /// The preset's rates and start.
    fn take_preset(&self, s: &mut Choices, name: &str) -> Result<(), String> {
        let preset = grayscott::named_preset(name).map_err(|e| e.to_string())?;
        let r = preset.rates();
        (s.feed, s.kill, s.du, s.dv, s.dt) = (Some(r.feed), Some(r.kill), Some(r.du), Some(r.dv), Some(r.dt));
        s.init = Some(preset.init);
        Ok(())
    }

    fn check(&self, settings: &Choices) -> Result<Setup, String> {
        settings.setup().map_err(|e| e.to_string())
    }

    fn demand(&self, setup: &Setup) -> Demand {
        Demand { cells: setup.cells() as u64, agents: 0 }
    }

    fn build(&self, setup: &Setup, device: &Device) -> simulations::Result<GrayScott> {
        GrayScott::new_tuned(setup, device, Variant::default_on(device), true)
    }

    /// New rates apply from the next step; a new grid, start or seed needs a new simulation.
    fn change_live(&self, old: &Setup, new: &Setup, run: &mut GrayScott) -> Result<bool, String> {
        let same_start =
            (old.width, old.height, old.init, old.seed) == (new.width, new.height, new.init, new.seed);
        if !same_start {
            return Ok(false);
        }
        run.set_rates(new.rates).map_err(|e| e.to_string())?;
        Ok(true)
    }

    /// Paints V: the cells of the disc are set to the seed state.
    fn brush(&self, run: &mut GrayScott, x: f32, y: f32, radius: f32) -> Result<(), String> {
        run.paint(x, y, radius).map_err(|e| e.to_string())
    }

    /// The (F, k) map around the session's diffusion rates, smaller than the CLI's `--map`
    /// defaults (the page waits for it).
    fn parameter_map(&self, setup: &Setup, device: &Device) -> Result<ParameterMapImage, String> {
        let (tiles, side, steps) = match device {
            Device::Cuda(_) => (32, 64, 5_000),
            Device::Cpu => (12, 32, 2_000),
        };
        let r = &setup.rates;
        let map_setup = MapSetup {
            tiles,
            side,
            feed: DEFAULT_FEED,
            kill: DEFAULT_KILL,
            du: r.du,
            dv: r.dv,
            dt: r.dt,
            init: Init::Spots,
            seed: setup.seed,
        };
        let mut map = ParameterMap::new(&map_setup, device).map_err(|e| e.to_string())?;
        map.step(steps).map_err(|e| e.to_string())?;
        let (u, v) = map.fields().map_err(|e| e.to_string())?;
        let mut levels = vec![0u8; u.len()];
        colormap::levels_cpu(&u, &v, &mut levels);
        // Tiles side by side where the map's picture has them (k along x, F upwards).
        let n = (tiles * side) as usize;
        let mut image = vec![0u8; n * n];
        for (t, tile) in levels.chunks(map_setup.tile_cells()).enumerate() {
            let (column, row) = map_setup.tile_place(t);
            let (x0, y0) = ((column * side) as usize, (row * side) as usize);
            for (row, line) in tile.chunks(side as usize).enumerate() {
                let start = (y0 + row) * n + x0;
                image[start..start + side as usize].copy_from_slice(line);
            }
        }
        Ok(ParameterMapImage { tiles, side, feed: map_setup.feed, kill: map_setup.kill, levels: image })
    }

    fn command(&self, s: &Recorded<Choices>, steps: u32) -> Option<String> {
        let arguments = batch::arguments(self.name(), &options(s.model), s.palette, s.steps_per_frame, steps);
        Some(batch::command(&arguments))
    }

    /// The `--config` TOML the CLI records for the same run.
    fn record(&self, s: &Recorded<Choices>, steps: u32, device: &Device) -> Result<String, String> {
        let steps = batch::batch_steps(steps);
        let setup = s.model.setup().map_err(batch::message)?;
        let preset = s.model.preset().map_err(batch::message)?;
        let arguments = batch::arguments(self.name(), &options(s.model), s.palette, s.steps_per_frame, steps);
        let document = Document::of_run(
            Choices::resolved(preset.name, &setup, steps),
            RunTable::ran(device, Variant::default_on(device)),
            batch::frames::<GrayScottSim>(s.palette, s.steps_per_frame),
            batch::provenance(&arguments, device),
        );
        Ok(document.to_toml(self.name()))
    }
}
