//! Gray-Scott in the live view: the library's [`GrayScott`], checked by the library's rules
//! ([`grayscott::Choices`]), its rates changed live, the brush painting V, the (F, k) map.

use serde::{Deserialize, Serialize};
use simulations::{
    Device,
    choice::VariantChoice as _,
    grayscott::{
        self, GrayScott, Init, Setup, Variant,
        map::{DEFAULT_FEED, DEFAULT_KILL, MapSetup, ParameterMap},
    },
    render::colormap,
};

use super::batch;
use crate::{
    cli::grayscott::GrayScottSim,
    serve::model::{Control, Demand, LiveModel, ParameterMapImage, PresetInfo, Recorded, Start},
    settings_document::{Document, GrayScottTable, RunTable, name_of, names, parse_name},
};

/// Gray-Scott, as the live view runs it.
#[derive(Debug)]
pub struct GrayScottLive;

/// Gray-Scott's settings in the page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrayScottValues {
    pub width: u32,
    pub height: u32,
    pub preset: String,
    pub feed: f32,
    pub kill: f32,
    pub du: f32,
    pub dv: f32,
    pub dt: f32,
    /// A starting pattern's name (`--init`).
    pub init: String,
    pub seed: u64,
}

impl GrayScottValues {
    fn choices(&self) -> Result<grayscott::Choices, String> {
        let init = parse_name::<Init>(&self.init).ok_or_else(|| {
            format!("init: unknown start '{}'; valid starts: {}", self.init, names::<Init>())
        })?;
        Ok(grayscott::Choices {
            preset: self.preset.clone(),
            width: self.width,
            height: self.height,
            feed: Some(self.feed),
            kill: Some(self.kill),
            du: Some(self.du),
            dv: Some(self.dv),
            dt: Some(self.dt),
            init: Some(init),
            init_image: None,
            seed: self.seed,
        })
    }

    /// The command line's options for these values.
    fn options(&self) -> Vec<(&'static str, String)> {
        vec![
            ("width", self.width.to_string()),
            ("height", self.height.to_string()),
            ("preset", self.preset.clone()),
            ("feed", self.feed.to_string()),
            ("kill", self.kill.to_string()),
            ("du", self.du.to_string()),
            ("dv", self.dv.to_string()),
            ("dt", self.dt.to_string()),
            ("init", self.init.clone()),
            ("seed", self.seed.to_string()),
        ]
    }
}

impl LiveModel for GrayScottLive {
    type Settings = GrayScottValues;
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
    fn defaults(&self, device: &Device) -> Start<GrayScottValues> {
        let gpu = matches!(device, Device::Cuda(_));
        let preset = grayscott::preset("coral").expect("the coral preset");
        let side = if gpu { 1024 } else { 256 };
        Start {
            settings: GrayScottValues {
                width: side,
                height: side,
                preset: preset.name.into(),
                feed: preset.feed,
                kill: preset.kill,
                du: grayscott::DEFAULT_DU,
                dv: grayscott::DEFAULT_DV,
                dt: grayscott::DEFAULT_DT,
                init: name_of(&preset.init),
                seed: 1,
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
    fn take_preset(&self, s: &mut GrayScottValues, name: &str) -> Result<(), String> {
        let preset = grayscott::named_preset(name).map_err(|e| e.to_string())?;
        let rates = preset.rates();
        (s.feed, s.kill, s.du, s.dv, s.dt) = (rates.feed, rates.kill, rates.du, rates.dv, rates.dt);
        s.init = name_of(&preset.init);
        Ok(())
    }

    fn check(&self, settings: &GrayScottValues) -> Result<Setup, String> {
        settings.choices()?.setup().map_err(|e| e.to_string())
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

    fn command(&self, s: &Recorded<GrayScottValues>, steps: u32) -> Option<String> {
        let arguments =
            batch::arguments(self.name(), &s.model.options(), s.palette, s.steps_per_frame, steps);
        Some(batch::command(&arguments))
    }

    /// The `--config` TOML the CLI records for the same run.
    fn record(&self, s: &Recorded<GrayScottValues>, steps: u32, device: &Device) -> Result<String, String> {
        let steps = batch::batch_steps(steps);
        let setup = s.model.choices()?.setup().map_err(batch::message)?;
        let arguments =
            batch::arguments(self.name(), &s.model.options(), s.palette, s.steps_per_frame, steps);
        let document = Document::of_run(
            GrayScottTable::of(&s.model.preset, &setup, steps),
            RunTable::ran(device, Variant::default_on(device)),
            batch::frames::<GrayScottSim>(s.palette, s.steps_per_frame),
            batch::provenance(&arguments, device),
        );
        Ok(document.to_toml(self.name()))
    }
}
