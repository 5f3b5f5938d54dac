//! `barkley serve` on a loopback port (CPU backend), driven through the page's WebSocket
//! protocol as host/tests/it/serve_protocol.rs drives `rust-gpu-sim serve`: Barkley is listed and
//! runs, a parameter change goes on from the running fields (the frames are those of a CPU
//! run through the library that changed the model at the same step, bit for bit) while a grid
//! change starts again, hostile messages are refused without a crash, and the built-in
//! simulations run beside it. In CI.

use std::{
    io::{BufRead, BufReader, Read},
    net::TcpStream,
    process::{Child, Command, Stdio},
    sync::mpsc,
    time::{Duration, Instant},
};

use barkley::{Field, Model, driven::BarkleyRun};
use serde_json::Value;
use simulations::driver::DrivenSimulation;
use tungstenite::{Message, WebSocket};

const LIMIT: Duration = Duration::from_secs(60);

type Socket = WebSocket<TcpStream>;

/// A running `barkley serve --backend cpu --port 0`, killed when stopped or dropped.
struct Server {
    child: Child,
    address: String,
    stderr: Option<std::thread::JoinHandle<String>>,
}

impl Server {
    fn start() -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_barkley"))
            .args(["serve", "--backend", "cpu", "--port", "0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start barkley serve");
        let stdout = child.stdout.take().unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            if let Some(Ok(line)) = lines.next() {
                let _ = tx.send(line);
            }
            for _ in lines {}
        });
        let line = rx.recv_timeout(LIMIT).expect("barkley serve printed its address");
        let url = line.split_whitespace().find(|w| w.starts_with("http://")).expect("a URL");
        let address = url.trim_start_matches("http://").trim_end_matches('/').to_owned();
        Server { child, address, stderr: Some(stderr) }
    }

    fn connect(&self) -> Socket {
        let stream = TcpStream::connect(&self.address).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let (socket, _) =
            tungstenite::client(format!("ws://{}/ws", self.address), stream).expect("handshake");
        socket
    }

    /// Stops the server; fails if it had exited on its own or printed a panic.
    fn stop(mut self) {
        assert!(self.child.try_wait().unwrap().is_none(), "barkley serve exited early");
        self.child.kill().unwrap();
        self.child.wait().unwrap();
        let stderr = self.stderr.take().unwrap().join().unwrap();
        assert!(!stderr.contains("panicked"), "barkley serve panicked:\n{stderr}");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

enum Received {
    Json(Value),
    Frame { width: u32, height: u32, steps: u64, version: u32, levels: Vec<u8> },
    Binary,
}

fn receive(socket: &mut Socket) -> Received {
    loop {
        // A signal to the test process (a child's end, say) interrupts a blocking read: read
        // again (tungstenite keeps what it had read).
        let message = match socket.read() {
            Err(tungstenite::Error::Io(e)) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            read => read.expect("a message from the server"),
        };
        match message {
            Message::Text(text) => return Received::Json(serde_json::from_str(text.as_str()).unwrap()),
            Message::Binary(bytes) if bytes.starts_with(b"FRM1") => {
                let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap());
                return Received::Frame {
                    width: u32_at(4),
                    height: u32_at(8),
                    steps: u64::from_le_bytes(bytes[12..20].try_into().unwrap()),
                    version: u32_at(20),
                    levels: bytes[24..].to_vec(),
                };
            }
            Message::Binary(_) => return Received::Binary,
            _ => {}
        }
    }
}

/// Reads until `wanted` returns `Some` (at most [`LIMIT`]).
fn until<T>(socket: &mut Socket, mut wanted: impl FnMut(&Received) -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        assert!(start.elapsed() < LIMIT, "nothing wanted arrived within {LIMIT:?}");
        if let Some(found) = wanted(&receive(socket)) {
            return found;
        }
    }
}

fn send(socket: &mut Socket, json: &str) {
    socket.send(Message::text(json)).expect("send");
}

fn next_error(socket: &mut Socket) -> String {
    until(socket, |m| match m {
        Received::Json(v) if v["type"] == "error" => Some(v["message"].as_str().unwrap().to_owned()),
        _ => None,
    })
}

/// The state message whose settings `accept` takes: its version and the steps done when it
/// was sent (the step a change took effect at).
fn state_at(socket: &mut Socket, accept: impl Fn(&Value) -> bool) -> (u32, u64) {
    until(socket, |m| match m {
        Received::Json(v) if v["type"] == "state" && accept(&v["settings"]) => {
            Some((v["version"].as_u64().unwrap() as u32, v["steps"].as_u64().unwrap()))
        }
        Received::Json(v) if v["type"] == "error" => panic!("{v}"),
        _ => None,
    })
}

/// The state message whose settings `accept` takes; its version.
fn state_where(socket: &mut Socket, accept: impl Fn(&Value) -> bool) -> u32 {
    state_at(socket, accept).0
}

/// The next frame of `version` or later, with more than `after` steps: its size, steps and
/// levels.
fn frame_after(socket: &mut Socket, version: u32, after: u64) -> ((u32, u32), u64, Vec<u8>) {
    until(socket, |m| match m {
        Received::Frame { width, height, steps, version: v, levels } if *v >= version && *steps > after => {
            Some(((*width, *height), *steps, levels.clone()))
        }
        _ => None,
    })
}

/// The frame after `steps` steps of a CPU run of `model` on a `width × height` grid, through
/// the library's driver trait as the server takes it.
fn reference_frame(width: u32, height: u32, model: Model, steps: u64) -> Vec<u8> {
    changed_frame(width, height, Model::default(), 0, model, steps)
}

/// The frame after `steps` steps of a CPU run that starts with `before` (its broken wave
/// too) and runs with `after` from step `change` on.
fn changed_frame(width: u32, height: u32, before: Model, change: u64, after: Model, steps: u64) -> Vec<u8> {
    let start = if change == 0 { after } else { before };
    let mut run = BarkleyRun::new(Field::broken_wave(width, height, &start), before, None);
    run.step(u32::try_from(change).unwrap()).unwrap();
    assert!(run.set_model(after), "a run in one piece takes a new model");
    run.step(u32::try_from(steps - change).unwrap()).unwrap();
    run.frame().unwrap()
}

#[test]
fn barkley_runs_live_and_its_frames_are_the_librarys() {
    let server = Server::start();
    let mut socket = server.connect();
    let hello = until(&mut socket, |m| match m {
        Received::Json(v) if v["type"] == "hello" => Some(v.clone()),
        _ => None,
    });
    let models: Vec<&str> =
        hello["models"].as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap()).collect();
    assert_eq!(models, ["barkley", "grayscott", "physarum", "heat"]);
    let controls: Vec<&str> = hello["models"][0]["controls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(controls, ["a", "b", "epsilon"]);
    // A session starts with the first model registered.
    state_where(&mut socket, |s| s["simulation"] == "barkley");

    // Select and start Barkley on a small grid; its frames are the library's CPU run's.
    send(
        &mut socket,
        r#"{"type":"start","simulation":"barkley","settings":{"width":48,"height":40,"steps_per_frame":25}}"#,
    );
    let version = state_where(&mut socket, |s| s["width"] == 48 && s["height"] == 40);
    let (size, steps, levels) = frame_after(&mut socket, version, 0);
    assert_eq!(size, (48, 40));
    assert!(
        levels == reference_frame(48, 40, Model::default(), steps),
        "the frame after {steps} steps differs"
    );

    // A parameter change goes on from the running fields (checked in detail below).
    send(&mut socket, r#"{"type":"set","settings":{"a":0.6,"epsilon":0.03}}"#);
    let (version, change) = state_at(&mut socket, |s| s["a"].as_f64() == Some(f64::from(0.6f32)));
    assert!(change >= steps, "the change restarted the run at step {change} (it was at {steps})");
    let (_, steps, levels) = frame_after(&mut socket, version, change);
    let model = Model { a: 0.6, epsilon: 0.03, ..Model::default() };
    assert!(levels == changed_frame(48, 40, Model::default(), change, model, steps));

    // Hostile messages: refused, and the session goes on with its settings.
    for (message, expected) in [
        ("not json at all", "not a request"),
        (r#"{"type":"set","settings":{"a":5.0}}"#, "a must be between 0.3 and 1, got 5"),
        (r#"{"type":"set","settings":{"epsilon":-1}}"#, "epsilon must be between"),
        (r#"{"type":"set","settings":{"b":1e39}}"#, "b must be between"),
        (r#"{"type":"set","settings":{"epsilon":"small"}}"#, "epsilon: invalid type"),
        (r#"{"type":"set","settings":{"width":4}}"#, "width must be between 8 and 8192, got 4"),
        (r#"{"type":"set","settings":{"width":8192,"height":8192}}"#, "--max-cells"),
        (r#"{"type":"set","settings":{"diffusion":2}}"#, "diffusion: not a setting of barkley"),
        (r#"{"type":"set","settings":{"palette":"../../etc/passwd"}}"#, "unknown palette"),
        (r#"{"type":"set","settings":{"preset":"spiral"}}"#, "barkley has no presets"),
        (r#"{"type":"start","simulation":"fluid"}"#, "unknown simulation 'fluid'; valid: barkley, grayscott"),
        (r#"{"type":"seed"}"#, "seed: not a setting of barkley"),
        (r#"{"type":"brush","x":10,"y":10,"radius":3}"#, "Barkley has no brush"),
        (r#"{"type":"map"}"#, "the parameter map is Gray-Scott's"),
        (r#"{"type":"launch"}"#, "not a request"),
    ] {
        send(&mut socket, message);
        let error = next_error(&mut socket);
        assert!(error.contains(expected), "{message}: {error}");
    }
    send(&mut socket, r#"{"type":"set","settings":{"steps_per_frame":2}}"#);
    state_where(&mut socket, |s| {
        s["steps_per_frame"] == 2 && s["a"].as_f64() == Some(f64::from(0.6f32)) && s["width"] == 48
    });

    // The built-in simulations run beside it.
    send(&mut socket, r#"{"type":"start","simulation":"grayscott","settings":{"width":64,"height":64}}"#);
    state_where(&mut socket, |s| s["simulation"] == "grayscott");
    until(&mut socket, |m| match m {
        Received::Frame { width: 64, height: 64, .. } => Some(()),
        _ => None,
    });
    drop(socket);
    server.stop();
}

/// Starts Barkley on a `48 × 40` grid with the default model and waits for a frame past
/// step 0: the session, and the steps done by then.
fn running_barkley(server: &Server) -> (Socket, u64) {
    let mut socket = server.connect();
    send(
        &mut socket,
        r#"{"type":"start","simulation":"barkley","settings":{"width":48,"height":40,"steps_per_frame":20}}"#,
    );
    let version = state_where(&mut socket, |s| s["simulation"] == "barkley" && s["width"] == 48);
    let (_, steps, _) = frame_after(&mut socket, version, 60);
    (socket, steps)
}

#[test]
fn a_parameter_change_goes_on_from_the_running_fields() {
    let server = Server::start();
    let (mut socket, running) = running_barkley(&server);
    send(&mut socket, r#"{"type":"set","settings":{"a":0.65,"b":0.03,"epsilon":0.025}}"#);
    let (version, change) =
        state_at(&mut socket, |s| s["b"].as_f64().is_some_and(|b| (b - 0.03).abs() < 1e-6));
    // A restart would be back at step 0.
    assert!(change >= running, "the change restarted the run: step {change}, {running} before it");
    let model = Model { a: 0.65, b: 0.03, epsilon: 0.025, ..Model::default() };
    let mut last = change;
    for _ in 0..3 {
        let (size, steps, levels) = frame_after(&mut socket, version, last);
        assert_eq!(size, (48, 40));
        // Bit for bit the library's run that changed the model at the same step.
        assert!(
            levels == changed_frame(48, 40, Model::default(), change, model, steps),
            "the frame after {steps} steps (the change at {change}) is not the library's"
        );
        // The change shows: going on with the default model gives another frame.
        assert!(levels != reference_frame(48, 40, Model::default(), steps), "the change changed nothing");
        last = steps;
    }
    drop(socket);
    server.stop();
}

#[test]
fn a_grid_change_starts_the_spiral_again() {
    let server = Server::start();
    let (mut socket, running) = running_barkley(&server);
    send(&mut socket, r#"{"type":"set","settings":{"width":56,"a":0.6}}"#);
    let (version, steps) = state_at(&mut socket, |s| s["width"] == 56);
    assert_eq!(steps, 0, "a new grid starts at step 0 (the old run was at {running})");
    let (size, steps, levels) = frame_after(&mut socket, version, 0);
    assert_eq!(size, (56, 40));
    let model = Model { a: 0.6, ..Model::default() };
    assert!(
        levels == reference_frame(56, 40, model, steps),
        "the frame after {steps} steps is not a new run's"
    );
    drop(socket);
    server.stop();
}
