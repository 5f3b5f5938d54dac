//! One session: a thread that owns one simulation, steps it, and publishes its frames.
//!
//! The steps go through the library's one step loop
//! ([`simulations::driver::StepLoop`], as the commands' driver's do): each frame is a loop
//! to `steps_per_frame` more steps whose frame is due at its end, taken now. The session says
//! only what happens between chunks (`SessionHooks`): the stop flag is looked at, the
//! GPU's turn is taken (and given back after the chunk), and on the CPU a chunk is limited to
//! about `CPU_SLICE` of work so that a stop is seen soon. Between frames it reads the
//! requests (a pause, a change), keeps to [`MAX_FRAMES_PER_SECOND`] and sends the stats.
//!
//! Frames go out through a watch channel, which holds only the newest: the thread never waits
//! for a client, and a slow client skips frames. Replies (state, errors, snapshots, the map)
//! go through a small bounded channel and are dropped, never waited for, when it is full.
//! The thread ends (dropping the simulation and with it its GPU memory) when the connection
//! drops its [`Session`].

use std::{
    sync::{
        Arc, Mutex, MutexGuard,
        atomic::{AtomicBool, Ordering},
        mpsc::{Receiver, RecvTimeoutError, SyncSender, TryRecvError, TrySendError},
    },
    time::{Duration, Instant},
};

use axum::body::Bytes;
use serde_json::{Map, Value};
use simulations::{
    Device,
    driver::{FramesDue, LoopHooks, StepLoop},
};
use tokio::sync::{mpsc, watch};

use super::{
    Registry,
    model::ParameterMapImage,
    protocol::{self, PNG_TAG, Reply, Request},
    registry::LiveRun,
    settings::{Checked, Limits, Settings},
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
    /// Starts the thread with a simulation of `start` (of a model of `registry`). `on_exit`
    /// runs on the thread once the simulation is dropped.
    pub fn spawn(
        device: Device,
        limits: Limits,
        registry: Arc<Registry>,
        start: Checked,
        frames: watch::Sender<Option<Bytes>>,
        replies: mpsc::Sender<Outgoing>,
        on_exit: impl FnOnce() + Send + 'static,
    ) -> std::io::Result<Session> {
        let (requests, inbox) = std::sync::mpsc::sync_channel(REQUEST_QUEUE);
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        simulations::memory::spawn(std::thread::Builder::new().name("serve-session".into()), move || {
            let mut runner = Runner::new(device, limits, registry, start, frames, replies, flag);
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

/// The simulation thread's state.
struct Runner {
    device: Device,
    limits: Limits,
    registry: Arc<Registry>,
    frames: watch::Sender<Option<Bytes>>,
    replies: mpsc::Sender<Outgoing>,
    stop: Arc<AtomicBool>,
    checked: Checked,
    sim: Option<Box<dyn LiveRun>>,
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
        registry: Arc<Registry>,
        checked: Checked,
        frames: watch::Sender<Option<Bytes>>,
        replies: mpsc::Sender<Outgoing>,
        stop: Arc<AtomicBool>,
    ) -> Self {
        let mut runner = Runner {
            device,
            limits,
            registry,
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

    fn gpu_turn(&self) -> Option<MutexGuard<'static, ()>> {
        gpu_turn(&self.device)
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

    /// Runs one frame's steps through the step loop and publishes the frame (none when the
    /// session is stopped first).
    fn advance(&mut self) -> simulations::Result<()> {
        let Some(sim) = self.sim.as_mut() else { return Ok(()) };
        let target = sim.steps_done() + u64::from(self.checked.settings.steps_per_frame());
        let mut hooks = SessionHooks {
            device: &self.device,
            stop: &self.stop,
            step_seconds: &mut self.step_seconds,
            steps: &mut self.window.1,
            started: Instant::now(),
            turn: None,
            frame: None,
        };
        StepLoop::new(target).frames(FramesDue::AtTarget).run(sim.as_mut(), &mut hooks)?;
        let frame = hooks.frame.take();
        drop(hooks);
        match frame {
            Some(levels) => self.show(levels),
            None => Ok(()),
        }
    }

    /// Takes the current frame and makes it the newest.
    fn publish(&mut self) -> simulations::Result<()> {
        let turn = self.gpu_turn();
        let Some(sim) = self.sim.as_mut() else { return Ok(()) };
        let levels = sim.frame()?;
        drop(turn);
        self.show(levels)
    }

    /// Makes `levels`, the current frame, the newest.
    fn show(&mut self, levels: Vec<u8>) -> simulations::Result<()> {
        let Some(sim) = self.sim.as_ref() else { return Ok(()) };
        let (w, h) = sim.frame_size();
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
            steps: self.steps_done(),
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

    /// Steps the simulation has done (0 without one).
    fn steps_done(&self) -> u64 {
        self.sim.as_ref().map_or(0, |sim| sim.steps_done())
    }

    fn send_state(&self) {
        let settings = &self.checked.settings;
        let steps = u32::try_from(self.steps_done()).unwrap_or(u32::MAX).max(1);
        let reply = Reply::State {
            settings: settings.to_json(),
            version: self.version,
            paused: self.paused,
            backend: self.sim.as_ref().map_or_else(|| "none".into(), |sim| sim.describe()),
            steps: self.steps_done(),
            command: settings.command(steps),
            toml: settings.toml(steps, &self.device).unwrap_or_else(|e| format!("# {e}")),
        };
        self.reply(Outgoing::Text(reply.to_json()));
    }

    fn handle(&mut self, request: Request) {
        let result = match request {
            Request::Start { simulation, settings } => {
                match Settings::default_for(&self.registry, &simulation, &self.device) {
                    Some(Ok(base)) => self.change(base, &settings, true),
                    Some(Err(e)) => Err(e),
                    None => Err(format!(
                        "unknown simulation '{simulation}'; valid: {}",
                        self.registry.names().join(", ")
                    )),
                }
            }
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
    /// settings only in what it can change live (the palette and steps per frame always; the
    /// rest as the model says); `Ok(false)` when it needs a new one.
    fn apply_live(&mut self, checked: &Checked) -> Result<bool, String> {
        let (old, new) = (&self.checked.settings, &checked.settings);
        if old.simulation() != new.simulation() {
            return Ok(false);
        }
        if old.same_model_settings(new) {
            return Ok(true);
        }
        let _turn = self.gpu_turn();
        let Some(sim) = self.sim.as_mut() else { return Ok(false) };
        new.entry().change_live(&self.checked.setup, &checked.setup, sim.as_mut())
    }

    /// A new simulation from the current settings (the old one and its memory go first).
    fn rebuild(&mut self) -> Result<(), String> {
        let _turn = self.gpu_turn();
        self.sim = None;
        self.last_levels = None;
        self.step_seconds = 0.0;
        let settings = &self.checked.settings;
        let sim = settings.entry().build(&self.checked.setup, &self.device)?;
        self.sim = Some(sim);
        drop(_turn);
        self.publish().map_err(|e| e.to_string())
    }

    fn brush(&mut self, x: f32, y: f32, radius: f32) -> Result<(), String> {
        let _turn = self.gpu_turn();
        let Some(sim) = self.sim.as_mut() else { return Err("no simulation is running".into()) };
        let (w, h) = sim.frame_size();
        if !(x.is_finite() && y.is_finite() && (0.0..=w as f32).contains(&x) && (0.0..=h as f32).contains(&y))
        {
            return Err(format!("brush: the centre ({x}, {y}) is outside the {w}x{h} grid"));
        }
        if !(radius.is_finite() && radius > 0.0 && radius <= MAX_BRUSH_RADIUS) {
            return Err(format!(
                "brush: the radius must be above 0 and at most {MAX_BRUSH_RADIUS} cells, got {radius}"
            ));
        }
        self.checked.settings.entry().brush(sim.as_mut(), x, y, radius)?;
        drop(_turn);
        if self.paused {
            self.publish().map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    fn snapshot(&mut self) -> Result<(), String> {
        let Some(sim) = self.sim.as_ref() else { return Err("no simulation is running".into()) };
        let Some(levels) = &self.last_levels else { return Err("no frame yet".into()) };
        let (w, h) = sim.frame_size();
        let steps = u32::try_from(sim.steps_done()).unwrap_or(u32::MAX).max(1);
        let text = self.checked.settings.toml(steps, &self.device)?;
        let text = simulations::render::MadeBy { software: simulations::render::SOFTWARE, settings: &text };
        let png = simulations::render::png_bytes(levels, w, h, self.checked.palette, Some(text))
            .map_err(|e| e.to_string())?;
        self.reply(Outgoing::Binary(Bytes::from(protocol::tagged(PNG_TAG, &png))));
        Ok(())
    }

    /// The model's parameter map: computed on the session's device the first time it is
    /// asked for, then sent again from memory.
    fn map(&mut self) -> Result<(), String> {
        if self.map.is_none() {
            let turn = self.gpu_turn();
            let image = self.checked.settings.entry().parameter_map(&self.checked.setup, &self.device)?;
            drop(turn);
            let ParameterMapImage { tiles, side, feed, kill, levels } = image;
            let reply = Reply::Map { tiles, side, feed, kill }.to_json();
            self.map = Some((reply, Bytes::from(protocol::map_message(tiles * side, &levels))));
        }
        let Some((reply, levels)) = self.map.clone() else { return Ok(()) };
        self.reply(Outgoing::Text(reply));
        self.reply(Outgoing::Binary(levels));
        Ok(())
    }
}

/// The GPU's turn on `device` (nothing to take on the CPU).
fn gpu_turn(device: &Device) -> Option<MutexGuard<'static, ()>> {
    match device {
        Device::Cuda(_) => Some(GPU_TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner())),
        Device::Cpu => None,
    }
}

/// What a session does between the step loop's chunks ([`Runner::advance`]).
struct SessionHooks<'a> {
    device: &'a Device,
    stop: &'a AtomicBool,
    /// Time per step on the CPU, measured over each chunk.
    step_seconds: &'a mut f64,
    /// The stats' step count.
    steps: &'a mut u64,
    /// When the current chunk started.
    started: Instant,
    /// The GPU's turn, held for one chunk (its steps and its frame).
    turn: Option<MutexGuard<'static, ()>>,
    /// The frame at the loop's end.
    frame: Option<Vec<u8>>,
}

impl LoopHooks for SessionHooks<'_> {
    /// Stops when the session is stopped; on the CPU, a slice of about `CPU_SLICE`; the
    /// GPU's turn for the chunk (the last chunk's given back first).
    fn limit(&mut self, _done: u64) -> Option<u32> {
        self.turn = None;
        if self.stop.load(Ordering::Relaxed) {
            return None;
        }
        let limit = match self.device {
            Device::Cpu if *self.step_seconds > 0.0 => (CPU_SLICE.as_secs_f64() / *self.step_seconds) as u32,
            _ => u32::MAX,
        };
        self.started = Instant::now();
        self.turn = gpu_turn(self.device);
        Some(limit)
    }

    fn stepped(&mut self, _done: u64, steps: u32) -> simulations::Result<()> {
        if matches!(self.device, Device::Cpu) {
            *self.step_seconds = self.started.elapsed().as_secs_f64() / f64::from(steps);
        }
        *self.steps += u64::from(steps);
        Ok(())
    }

    fn frame(&mut self, levels: Vec<u8>) -> simulations::Result<()> {
        self.frame = Some(levels);
        Ok(())
    }
}
