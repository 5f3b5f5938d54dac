//! One session: a thread that owns one simulation, steps it, and publishes its frames.
//!
//! Frames go out through a watch channel, which holds only the newest: the thread never waits
//! for a client, and a slow client skips frames. Replies (state, errors, snapshots, the map)
//! go through a small bounded channel and are dropped, never waited for, when it is full.
//! The thread ends (dropping the simulation and with it its GPU memory) when the connection
//! drops its [`Session`].

use std::{
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
        mpsc::{Receiver, RecvTimeoutError, SyncSender, TryRecvError, TrySendError},
    },
    time::{Duration, Instant},
};

use axum::body::Bytes;
use serde_json::{Map, Value};
use simulations::{
    Device, driver,
    grayscott::{
        GrayScott, Variant,
        map::{DEFAULT_FEED, DEFAULT_KILL, MapSetup, ParameterMap},
    },
    heat::{Heat, HeatVariant},
    physarum::{Physarum, PhysarumVariant},
    render::colormap,
};
use tokio::sync::{mpsc, watch};

use super::{
    protocol::{self, MAP_TAG, PNG_TAG, Reply, Request},
    settings::{Checked, Limits, Model, Settings},
};

/// Requests queued for the simulation thread; beyond this the page is told to slow down.
pub const REQUEST_QUEUE: usize = 64;
/// Frames produced per second at most (a small grid would otherwise spin for nothing).
pub const MAX_FRAMES_PER_SECOND: f64 = 240.0;
/// Work done between two looks at the requests and the stop flag, on the CPU.
const CPU_SLICE: Duration = Duration::from_millis(50);
/// The largest brush, in cells.
pub const MAX_BRUSH_RADIUS: f32 = 512.0;

/// The GPU's one stream is shared by all sessions: one session at a time queues work on it
/// (a step graph captured by one session must not record another's launches).
static GPU_TURN: Mutex<()> = Mutex::new(());

/// What goes to the page besides frames.
#[derive(Debug)]
pub enum Outgoing {
    Text(String),
    Binary(Bytes),
}

/// The connection's handle on its simulation thread: dropping it ends the thread.
pub struct Session {
    requests: SyncSender<Request>,
    stop: Arc<AtomicBool>,
}

impl Session {
    /// Starts the thread with the default Gray-Scott simulation. `on_exit` runs on the thread
    /// once the simulation is dropped.
    pub fn spawn(
        device: Device,
        limits: Limits,
        frames: watch::Sender<Option<Bytes>>,
        replies: mpsc::Sender<Outgoing>,
        on_exit: impl FnOnce() + Send + 'static,
    ) -> std::io::Result<Session> {
        let (requests, inbox) = std::sync::mpsc::sync_channel(REQUEST_QUEUE);
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        std::thread::Builder::new().name("serve-session".into()).spawn(move || {
            let mut runner = Runner::new(device, limits, frames, replies, flag);
            runner.run(inbox);
            drop(runner);
            on_exit();
        })?;
        Ok(Session { requests, stop })
    }

    /// Queues a request; `Err` with a message when the queue is full (the page sends faster
    /// than the simulation takes them) or the thread has ended.
    pub fn send(&self, request: Request) -> Result<(), &'static str> {
        self.requests.try_send(request).map_err(|e| match e {
            TrySendError::Full(_) => "too many requests at once; this one was dropped",
            TrySendError::Disconnected(_) => "the simulation has stopped",
        })
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// A simulation of any kind.
enum Sim {
    GrayScott(GrayScott),
    Physarum(Physarum),
    Heat(Heat),
}

impl Sim {
    fn build(model: &Model, device: &Device) -> simulations::Result<Sim> {
        let gpu = matches!(device, Device::Cuda(_));
        Ok(match model {
            Model::GrayScott(setup) => {
                let variant = if gpu { Variant::Fused } else { Variant::Cpu };
                Sim::GrayScott(GrayScott::new_tuned(setup, device, variant, true)?)
            }
            Model::Physarum(setup) => {
                let variant = if gpu { PhysarumVariant::Optimized } else { PhysarumVariant::Cpu };
                Sim::Physarum(Physarum::new(setup, device, variant)?)
            }
            Model::Heat(setup) => {
                let variant = if gpu { HeatVariant::Fused } else { HeatVariant::Cpu };
                Sim::Heat(Heat::new(setup, device, variant)?)
            }
        })
    }

    fn step(&mut self, steps: u32) -> simulations::Result<()> {
        match self {
            Sim::GrayScott(sim) => sim.step(steps),
            Sim::Physarum(sim) => sim.step(steps),
            Sim::Heat(sim) => sim.step(steps),
        }
    }

    /// The current frame: one palette level per cell, as the driver takes it for the CLI's
    /// outputs (heat: the middle slice over the initial field's range).
    fn levels(&mut self) -> simulations::Result<Vec<u8>> {
        match self {
            Sim::GrayScott(sim) => driver::Simulation::frame(sim),
            Sim::Physarum(sim) => Ok(simulations::physarum::trail_levels(&sim.trail()?)),
            Sim::Heat(sim) => driver::Simulation::frame(sim),
        }
    }

    fn size(&self) -> (u32, u32) {
        match self {
            Sim::GrayScott(sim) => (sim.width(), sim.height()),
            Sim::Physarum(sim) => (sim.setup().width, sim.setup().height),
            Sim::Heat(sim) => (sim.setup().n[0], sim.setup().n[1]),
        }
    }

    fn steps_done(&self) -> u64 {
        match self {
            Sim::GrayScott(sim) => sim.steps_done(),
            Sim::Physarum(sim) => sim.steps_done(),
            Sim::Heat(sim) => sim.steps_done(),
        }
    }

    fn describe(&self) -> String {
        match self {
            Sim::GrayScott(sim) => sim.describe(),
            Sim::Physarum(sim) => sim.describe(),
            Sim::Heat(sim) => sim.describe(),
        }
    }
}

/// The simulation thread's state.
struct Runner {
    device: Device,
    limits: Limits,
    frames: watch::Sender<Option<Bytes>>,
    replies: mpsc::Sender<Outgoing>,
    stop: Arc<AtomicBool>,
    checked: Checked,
    sim: Option<Sim>,
    version: u32,
    paused: bool,
    /// Steps still to run for a `step` request while paused.
    single_step: bool,
    last_levels: Option<Vec<u8>>,
    /// The parameter map, once computed: the reply and the levels message.
    map: Option<(String, Bytes)>,
    /// For the steps/s and frames/s of the last second.
    window: (Instant, u64, u32),
    /// Time per step on the CPU (for slicing a frame's steps), seconds.
    step_seconds: f64,
}

impl Runner {
    fn new(
        device: Device,
        limits: Limits,
        frames: watch::Sender<Option<Bytes>>,
        replies: mpsc::Sender<Outgoing>,
        stop: Arc<AtomicBool>,
    ) -> Self {
        let settings = Settings::default_for("grayscott", &device).expect("Gray-Scott defaults");
        // The defaults are sized for the device; a smaller --max-cells shrinks them.
        let checked = match settings.check(&limits) {
            Ok(checked) => checked,
            Err(_) => small_default(&settings, &limits),
        };
        let mut runner = Runner {
            device,
            limits,
            frames,
            replies,
            stop,
            checked,
            sim: None,
            version: 0,
            paused: false,
            single_step: false,
            last_levels: None,
            map: None,
            window: (Instant::now(), 0, 0),
            step_seconds: 0.0,
        };
        if let Err(e) = runner.rebuild() {
            runner.error(e);
        }
        runner.send_state();
        runner
    }

    fn gpu_turn(&self) -> Option<std::sync::MutexGuard<'static, ()>> {
        match self.device {
            Device::Cuda(_) => Some(GPU_TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner())),
            Device::Cpu => None,
        }
    }

    fn run(&mut self, inbox: Receiver<Request>) {
        let mut last_frame = Instant::now() - Duration::from_secs(1);
        loop {
            if self.stop.load(Ordering::Relaxed) {
                return;
            }
            loop {
                match inbox.try_recv() {
                    Ok(request) => self.handle(request),
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => return,
                }
            }
            let idle = self.sim.is_none() || (self.paused && !self.single_step);
            if idle {
                match inbox.recv_timeout(Duration::from_millis(100)) {
                    Ok(request) => self.handle(request),
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => return,
                }
                self.stats();
                continue;
            }
            self.single_step = false;
            // At most MAX_FRAMES_PER_SECOND.
            let pace = Duration::from_secs_f64(1.0 / MAX_FRAMES_PER_SECOND);
            if let Some(wait) = pace.checked_sub(last_frame.elapsed()) {
                std::thread::sleep(wait);
            }
            last_frame = Instant::now();
            if let Err(e) = self.advance() {
                self.error(format!("the simulation failed and is paused: {e}"));
                self.paused = true;
                self.send_state();
            }
            self.stats();
        }
    }

    /// Runs one frame's steps and publishes the frame.
    fn advance(&mut self) -> simulations::Result<()> {
        let mut left = self.checked.settings.steps_per_frame();
        let cpu = matches!(self.device, Device::Cpu);
        while left > 0 {
            if self.stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            // On the CPU, slices of about CPU_SLICE so that a stop or a pause is seen soon.
            let chunk = if cpu && self.step_seconds > 0.0 {
                ((CPU_SLICE.as_secs_f64() / self.step_seconds) as u32).clamp(1, left)
            } else {
                left
            };
            let started = Instant::now();
            let _turn = self.gpu_turn();
            let Some(sim) = self.sim.as_mut() else { return Ok(()) };
            sim.step(chunk)?;
            if cpu {
                self.step_seconds = started.elapsed().as_secs_f64() / f64::from(chunk);
            }
            left -= chunk;
            self.window.1 += u64::from(chunk);
        }
        self.publish()
    }

    /// Takes the current frame and makes it the newest.
    fn publish(&mut self) -> simulations::Result<()> {
        let _turn = self.gpu_turn();
        let Some(sim) = self.sim.as_mut() else { return Ok(()) };
        let levels = sim.levels()?;
        let (w, h) = sim.size();
        let message = protocol::frame_message(w, h, sim.steps_done(), self.version, &levels);
        self.frames.send_replace(Some(Bytes::from(message)));
        self.last_levels = Some(levels);
        self.window.2 += 1;
        Ok(())
    }

    fn stats(&mut self) {
        let (since, steps, frames) = self.window;
        let seconds = since.elapsed().as_secs_f64();
        if seconds < 1.0 {
            return;
        }
        let reply = Reply::Stats {
            steps_per_second: steps as f64 / seconds,
            frames_per_second: f64::from(frames) / seconds,
            steps: self.sim.as_ref().map_or(0, Sim::steps_done),
        };
        self.reply(Outgoing::Text(reply.to_json()));
        self.window = (Instant::now(), 0, 0);
    }

    fn reply(&self, message: Outgoing) {
        // Full: the page is not reading; dropped (the next state supersedes it).
        let _ = self.replies.try_send(message);
    }

    fn error(&self, message: impl Into<String>) {
        self.reply(Outgoing::Text(Reply::error(message).to_json()));
    }

    fn send_state(&self) {
        let settings = &self.checked.settings;
        let steps = self.sim.as_ref().map_or(0, Sim::steps_done);
        let steps = u32::try_from(steps).unwrap_or(u32::MAX).max(1);
        let reply = Reply::State {
            settings: serde_json::to_value(settings).expect("settings serialise"),
            version: self.version,
            paused: self.paused,
            backend: self.sim.as_ref().map_or_else(|| "none".into(), Sim::describe),
            steps: self.sim.as_ref().map_or(0, Sim::steps_done),
            command: settings.command(steps),
            toml: settings.toml(steps, &self.device).unwrap_or_else(|e| format!("# {e}")),
        };
        self.reply(Outgoing::Text(reply.to_json()));
    }

    fn handle(&mut self, request: Request) {
        let result = match request {
            Request::Start { simulation, settings } => match Settings::default_for(&simulation, &self.device)
            {
                Some(base) => self.change(base, &settings, true),
                None => Err(format!("unknown simulation '{simulation}'; valid: grayscott, physarum, heat")),
            },
            Request::Set { settings } => self.change(self.checked.settings.clone(), &settings, false),
            Request::Pause {} => {
                self.paused = true;
                self.send_state();
                Ok(())
            }
            Request::Run {} => {
                self.paused = false;
                self.send_state();
                Ok(())
            }
            Request::Step {} => {
                self.single_step = self.paused;
                Ok(())
            }
            Request::Reset {} => self.rebuild().map(|()| self.applied()),
            Request::Seed {} => {
                let mut bytes = [0u8; 4];
                match getrandom::fill(&mut bytes) {
                    Ok(()) => {
                        let seed = Value::from(u32::from_le_bytes(bytes));
                        let changes = Map::from_iter([("seed".to_owned(), seed)]);
                        self.change(self.checked.settings.clone(), &changes, true)
                    }
                    Err(e) => Err(format!("no random seed: {e}")),
                }
            }
            Request::Brush { x, y, radius } => self.brush(x, y, radius),
            Request::Snapshot {} => self.snapshot(),
            Request::Map {} => self.map(),
        };
        if let Err(message) = result {
            self.error(message);
        }
    }

    /// A version more, a new state for the page, and a frame of the new state when paused.
    fn applied(&mut self) {
        self.version = self.version.wrapping_add(1);
        if self.paused
            && let Err(e) = self.publish()
        {
            self.error(e.to_string());
        }
        self.send_state();
    }

    /// Applies `changes` to `base`: live where the simulation allows it (rates, model
    /// parameters, palette, steps per frame), else (or with `restart`) by a new simulation.
    fn change(&mut self, base: Settings, changes: &Map<String, Value>, restart: bool) -> Result<(), String> {
        let result = base.updated(changes).and_then(|s| s.check(&self.limits));
        let checked = match result {
            Ok(checked) => checked,
            Err(e) => {
                // The page shows the refusal, and the settings still in force.
                self.send_state();
                return Err(e);
            }
        };
        let live = !restart && self.sim.is_some() && self.apply_live(&checked)?;
        let old = std::mem::replace(&mut self.checked, checked);
        if !live && let Err(e) = self.rebuild() {
            self.checked = old;
            let again = self.rebuild();
            self.applied();
            return Err(match again {
                Ok(()) => format!("{e}; the previous settings are kept"),
                Err(again) => format!("{e}; and the previous settings failed too: {again}"),
            });
        }
        if !live {
            self.map = None;
        }
        self.applied();
        Ok(())
    }

    /// Changes the running simulation in place if `checked` differs from the current
    /// settings only in what it can change live; `Ok(false)` when it needs a new one.
    fn apply_live(&mut self, checked: &Checked) -> Result<bool, String> {
        let _turn = self.gpu_turn();
        let Some(sim) = self.sim.as_mut() else { return Ok(false) };
        match (&self.checked.model, &checked.model, sim) {
            (Model::GrayScott(old), Model::GrayScott(new), Sim::GrayScott(sim)) => {
                let same_start = (old.width, old.height, old.init, old.seed)
                    == (new.width, new.height, new.init, new.seed);
                if !same_start {
                    return Ok(false);
                }
                sim.set_rates(new.rates).map_err(|e| e.to_string())?;
                Ok(true)
            }
            (Model::Physarum(old), Model::Physarum(new), Sim::Physarum(sim)) => {
                let key =
                    |s: &simulations::physarum::PhysarumSetup| (s.width, s.height, s.agents, s.seed, s.init);
                if key(old) != key(new) {
                    return Ok(false);
                }
                sim.set_model(new).map_err(|e| e.to_string())?;
                Ok(true)
            }
            (Model::Heat(old), Model::Heat(new), Sim::Heat(_)) => {
                Ok(format!("{old:?}") == format!("{new:?}"))
            }
            _ => Ok(false),
        }
    }

    /// A new simulation from the current settings (the old one and its memory go first).
    fn rebuild(&mut self) -> Result<(), String> {
        let _turn = self.gpu_turn();
        self.sim = None;
        self.last_levels = None;
        self.step_seconds = 0.0;
        let sim = Sim::build(&self.checked.model, &self.device).map_err(|e| e.to_string())?;
        self.sim = Some(sim);
        drop(_turn);
        self.publish().map_err(|e| e.to_string())
    }

    fn brush(&mut self, x: f32, y: f32, radius: f32) -> Result<(), String> {
        let _turn = self.gpu_turn();
        let Some(sim) = self.sim.as_mut() else { return Err("no simulation is running".into()) };
        let (w, h) = sim.size();
        if !(x.is_finite() && y.is_finite() && (0.0..=w as f32).contains(&x) && (0.0..=h as f32).contains(&y))
        {
            return Err(format!("brush: the centre ({x}, {y}) is outside the {w}x{h} grid"));
        }
        if !(radius.is_finite() && radius > 0.0 && radius <= MAX_BRUSH_RADIUS) {
            return Err(format!(
                "brush: the radius must be above 0 and at most {MAX_BRUSH_RADIUS} cells, got {radius}"
            ));
        }
        match sim {
            Sim::GrayScott(sim) => sim.paint(x, y, radius).map_err(|e| e.to_string())?,
            Sim::Physarum(sim) => {
                // About two agents per cell of the brush, and never more than a tenth of them.
                let area = std::f32::consts::PI * radius * radius;
                let count = ((2.0 * area) as u32).clamp(1, (sim.setup().agents / 10).max(1));
                sim.drop_agents(x, y, radius, count).map_err(|e| e.to_string())?;
            }
            Sim::Heat(_) => {
                return Err(
                    "the brush paints Gray-Scott's V or drops Physarum's agents; heat has no brush".into()
                );
            }
        }
        drop(_turn);
        if self.paused {
            self.publish().map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    fn snapshot(&mut self) -> Result<(), String> {
        let Some(sim) = self.sim.as_ref() else { return Err("no simulation is running".into()) };
        let Some(levels) = &self.last_levels else { return Err("no frame yet".into()) };
        let (w, h) = sim.size();
        let steps = u32::try_from(sim.steps_done()).unwrap_or(u32::MAX).max(1);
        let text = self.checked.settings.toml(steps, &self.device)?;
        let png = simulations::render::png_bytes(levels, w, h, self.checked.palette, Some(&text))
            .map_err(|e| e.to_string())?;
        self.reply(Outgoing::Binary(Bytes::from(protocol::tagged(PNG_TAG, &png))));
        Ok(())
    }

    /// The (F, k) map around the session's diffusion rates: computed on the session's device
    /// the first time it is asked for, then sent again from memory.
    fn map(&mut self) -> Result<(), String> {
        let Settings::Grayscott(gs) = &self.checked.settings else {
            return Err("the parameter map is Gray-Scott's".into());
        };
        if self.map.is_none() {
            // Smaller than the CLI's --map defaults: the page waits for it.
            let (tiles, side, steps) = match self.device {
                Device::Cuda(_) => (32, 64, 5_000),
                Device::Cpu => (12, 32, 2_000),
            };
            let setup = MapSetup {
                tiles,
                side,
                feed: DEFAULT_FEED,
                kill: DEFAULT_KILL,
                du: gs.du,
                dv: gs.dv,
                dt: gs.dt,
                init: simulations::grayscott::Init::Spots,
                seed: gs.seed,
            };
            let _turn = self.gpu_turn();
            let mut map = ParameterMap::new(&setup, &self.device).map_err(|e| e.to_string())?;
            map.step(steps).map_err(|e| e.to_string())?;
            let (u, v) = map.fields().map_err(|e| e.to_string())?;
            drop(_turn);
            let mut levels = vec![0u8; u.len()];
            colormap::levels_cpu(&u, &v, &mut levels);
            // Tiles side by side, k along x, F increasing upwards.
            let n = (tiles * side) as usize;
            let mut image = vec![0u8; n * n];
            let cells = setup.tile_cells();
            for (t, tile) in levels.chunks(cells).enumerate() {
                let (i, j) = (t % tiles as usize, t / tiles as usize);
                let (x0, y0) = (i * side as usize, (tiles as usize - 1 - j) * side as usize);
                for (row, line) in tile.chunks(side as usize).enumerate() {
                    let start = (y0 + row) * n + x0;
                    image[start..start + side as usize].copy_from_slice(line);
                }
            }
            let mut body = Vec::with_capacity(8 + image.len());
            body.extend_from_slice(&(n as u32).to_le_bytes());
            body.extend_from_slice(&(n as u32).to_le_bytes());
            body.extend_from_slice(&image);
            let reply = Reply::Map { tiles, side, feed: setup.feed, kill: setup.kill }.to_json();
            self.map = Some((reply, Bytes::from(protocol::tagged(MAP_TAG, &body))));
        }
        let (reply, levels) = self.map.clone().expect("computed above");
        self.reply(Outgoing::Text(reply));
        self.reply(Outgoing::Binary(levels));
        Ok(())
    }
}

/// The default settings shrunk to fit `limits` (a server started with a small --max-cells).
fn small_default(settings: &Settings, limits: &Limits) -> Checked {
    let side = (limits.max_cells as f64).sqrt().floor().clamp(1.0, 256.0) as u32;
    let changes =
        Map::from_iter([("width".to_owned(), Value::from(side)), ("height".to_owned(), Value::from(side))]);
    settings
        .updated(&changes)
        .and_then(|s| s.check(limits))
        .expect("a grid within --max-cells with the default model passes the checks")
}
