//! `serve` with the CUDA backend (run by scripts/gpu-check.sh, part `serve`): live changes on
//! the GPU match the CPU bit for bit, and a frame-timestamping client measures the frames per
//! second delivered and the latency of a parameter change, printed as a table.

use crate::serve_server;

use std::time::{Duration, Instant};

use crate::serve_server::{Received, Server, Socket, send, until};
use simulations::{
    Device,
    grayscott::{self, GrayScott, Rates, Variant},
};

const LIMIT: Duration = Duration::from_secs(120);

#[test]
#[ignore = "needs a CUDA GPU"]
fn new_rates_on_the_gpu_match_the_cpu() {
    let gpu = simulations::cuda::open().unwrap();
    let setup = grayscott::preset("coral").unwrap().setup(128, 128);
    let other = Rates { feed: 0.03, kill: 0.055, ..setup.rates };
    let run = |device: &Device, variant| {
        let mut sim = GrayScott::new(&setup, device, variant).unwrap();
        // The first 50 steps are captured into a graph, which must not keep the old rates.
        sim.step(50).unwrap();
        sim.set_rates(other).unwrap();
        sim.step(50).unwrap();
        sim.paint(64.0, 64.0, 5.0).unwrap();
        sim.step(50).unwrap();
        sim.fields().unwrap()
    };
    let cpu = run(&Device::Cpu, Variant::Cpu);
    assert_eq!(run(&Device::Cuda(gpu), Variant::Fused), cpu, "the GPU differs from the CPU after set_rates");
}

/// Frames per second delivered over `seconds`, and frames' byte size.
fn delivered(socket: &mut Socket, seconds: f64) -> (f64, usize) {
    // Skip what was queued before.
    let start = Instant::now();
    let mut frames = 0;
    let mut bytes = 0;
    while start.elapsed().as_secs_f64() < seconds {
        if let Received::Frame { levels, .. } = serve_server::receive(socket) {
            frames += 1;
            bytes = levels.len();
        }
    }
    (f64::from(frames) / start.elapsed().as_secs_f64(), bytes)
}

/// Milliseconds from sending `change` to the first frame computed with it (median, max of
/// `repeats`).
fn latency(socket: &mut Socket, changes: &[String]) -> (f64, f64) {
    let mut times = Vec::new();
    for change in changes {
        let sent = Instant::now();
        send(socket, change);
        let version = until(socket, LIMIT, |m| match m {
            Received::Json(v) if v["type"] == "state" => Some(v["version"].as_u64().unwrap() as u32),
            Received::Json(v) if v["type"] == "error" => panic!("{v}"),
            _ => None,
        });
        until(socket, LIMIT, |m| match m {
            Received::Frame { version: v, .. } if *v >= version => Some(()),
            _ => None,
        });
        times.push(sent.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    (times[times.len() / 2], times[times.len() - 1])
}

fn started(socket: &mut Socket, start: &str) {
    send(socket, start);
    until(socket, LIMIT, |m| match m {
        Received::Json(v) if v["type"] == "state" && v["version"].as_u64() > Some(0) => Some(()),
        Received::Json(v) if v["type"] == "error" => panic!("{v}"),
        _ => None,
    });
    // Warm up: tuning, graph capture, the first frames.
    delivered(socket, 2.0);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn frame_rate_and_latency_on_the_gpu() {
    let server = Server::start_on("cuda", &[]);
    let mut socket = server.connect();
    let mut rows = Vec::new();

    started(
        &mut socket,
        r#"{"type":"start","simulation":"grayscott","settings":{"width":1024,"height":1024,"steps_per_frame":100}}"#,
    );
    let (fps, bytes) = delivered(&mut socket, 5.0);
    let changes: Vec<String> = (0..20)
        .map(|i| format!(r#"{{"type":"set","settings":{{"feed":{}}}}}"#, 0.050 + 0.0002 * f64::from(i)))
        .collect();
    let (median, max) = latency(&mut socket, &changes);
    rows.push(("grayscott 1024^2, 100 steps/frame", fps, bytes, median, max, 60.0));

    started(
        &mut socket,
        r#"{"type":"start","simulation":"physarum","settings":{"width":2048,"height":2048,"agents":1048576,"steps_per_frame":1}}"#,
    );
    let (fps, bytes) = delivered(&mut socket, 5.0);
    let changes: Vec<String> = (0..20)
        .map(|i| format!(r#"{{"type":"set","settings":{{"decay":{}}}}}"#, 0.05 + 0.005 * f64::from(i)))
        .collect();
    let (median, max) = latency(&mut socket, &changes);
    rows.push(("physarum 2048^2, 1M agents, 1 step/frame", fps, bytes, median, max, 30.0));

    println!(
        "serve on {}, client on the same host (loopback WebSocket)",
        simulations::cuda::open().unwrap().name()
    );
    println!(
        "{:<42} {:>10} {:>11} {:>16} {:>14} {:>8}",
        "case", "frames/s", "frame MiB", "change ms (med)", "change ms (max)", "target"
    );
    for (case, fps, bytes, median, max, target) in rows {
        let met = if fps >= target { "met" } else { "NOT met" };
        println!(
            "{case:<42} {fps:>10.1} {:>11.2} {median:>16.1} {max:>14.1} {:>8}",
            bytes as f64 / (1 << 20) as f64,
            format!(">={target:.0} {met}")
        );
    }
    drop(socket);
    server.wait_sessions(0, LIMIT);
    server.stop();
}
