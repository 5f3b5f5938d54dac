//! `serve` over its WebSocket protocol, against a real server on a loopback port (CPU
//! backend): frames arrive and change, changes are applied, hostile messages are refused
//! without a panic or a leaked session, the token and the limits hold.

use std::{
    io::Write,
    net::TcpStream,
    time::{Duration, Instant},
};

use crate::serve_server::{Received, Server, next_error, next_frame, send, until};
use tungstenite::Message;

const LIMIT: Duration = Duration::from_secs(30);

#[test]
fn frames_arrive_and_change() {
    let server = Server::start(&[]);
    let mut socket = server.connect();
    let hello = until(&mut socket, LIMIT, |m| match m {
        Received::Json(v) => Some(v.clone()),
        _ => None,
    });
    assert_eq!(hello["type"], "hello", "{hello}");
    assert!(hello["palettes"].as_array().unwrap().iter().any(|p| p["name"] == "cyberpunk"));
    let (width, height, first) = until(&mut socket, LIMIT, |m| match m {
        Received::Frame { width, height, levels, .. } => Some((*width, *height, levels.clone())),
        _ => None,
    });
    assert_eq!((width, height), (256, 256));
    assert_eq!(first.len(), 256 * 256);
    let start = Instant::now();
    loop {
        let (_, next) = next_frame(&mut socket);
        if next != first {
            break;
        }
        assert!(start.elapsed() < LIMIT, "the frames never changed");
    }
    drop(socket);
    server.wait_sessions(0, LIMIT);
    server.stop();
}

#[test]
fn a_parameter_change_is_applied_and_shown() {
    let server = Server::start(&[]);
    let mut socket = server.connect();
    next_frame(&mut socket);
    send(&mut socket, r#"{"type":"set","settings":{"feed":0.031,"kill":0.0605}}"#);
    let version = until(&mut socket, LIMIT, |m| match m {
        Received::Json(v)
            if v["type"] == "state" && v["settings"]["feed"].as_f64() == Some(0.031f32 as f64) =>
        {
            assert_eq!(v["settings"]["kill"].as_f64(), Some(0.0605f32 as f64));
            assert!(v["command"].as_str().unwrap().contains("--feed 0.031 "), "{v}");
            assert!(v["toml"].as_str().unwrap().contains("feed = 0.031"), "{v}");
            Some(v["version"].as_u64().unwrap() as u32)
        }
        _ => None,
    });
    // A frame of the new settings follows.
    until(&mut socket, LIMIT, |m| match m {
        Received::Frame { version: v, .. } if *v >= version => Some(()),
        _ => None,
    });
    // Pause: the frames stop advancing; a step advances one frame's steps.
    send(&mut socket, r#"{"type":"pause"}"#);
    until(&mut socket, LIMIT, |m| match m {
        Received::Json(v) if v["type"] == "state" && v["paused"] == true => Some(()),
        _ => None,
    });
    send(&mut socket, r#"{"type":"step"}"#);
    let steps = until(&mut socket, LIMIT, |m| match m {
        Received::Frame { steps, .. } => Some(*steps),
        _ => None,
    });
    assert!(steps > 0);
    // A brush stroke, a snapshot (a PNG recording the settings) and the map.
    send(&mut socket, r#"{"type":"brush","x":128,"y":128,"radius":10}"#);
    send(&mut socket, r#"{"type":"snapshot"}"#);
    let png = until(&mut socket, LIMIT, |m| match m {
        Received::Binary(bytes) if bytes.starts_with(b"PNG1") => Some(bytes[4..].to_vec()),
        Received::Json(v) if v["type"] == "error" => panic!("{v}"),
        _ => None,
    });
    let text = simulations::render::recorded_text(&png).expect("settings in the PNG");
    assert!(text.contains("[grayscott]") && text.contains("feed = 0.031"), "{text}");
    // Another simulation.
    send(&mut socket, r#"{"type":"start","simulation":"physarum","settings":{"agents":5000}}"#);
    until(&mut socket, LIMIT, |m| match m {
        Received::Json(v) if v["type"] == "state" && v["settings"]["simulation"] == "physarum" => {
            assert_eq!(v["settings"]["agents"], 5000);
            Some(())
        }
        Received::Json(v) if v["type"] == "error" => panic!("{v}"),
        _ => None,
    });
    send(&mut socket, r#"{"type":"set","settings":{"decay":0.2}}"#);
    until(&mut socket, LIMIT, |m| match m {
        Received::Json(v)
            if v["type"] == "state" && v["settings"]["decay"].as_f64() == Some(0.2f32 as f64) =>
        {
            Some(())
        }
        Received::Json(v) if v["type"] == "error" => panic!("{v}"),
        _ => None,
    });
    send(&mut socket, r#"{"type":"brush","x":10,"y":10,"radius":4}"#);
    send(&mut socket, r#"{"type":"start","simulation":"heat"}"#);
    until(&mut socket, LIMIT, |m| match m {
        Received::Frame { width: 64, height: 64, .. } => Some(()),
        Received::Json(v) if v["type"] == "error" => panic!("{v}"),
        _ => None,
    });
    drop(socket);
    server.wait_sessions(0, LIMIT);
    server.stop();
}

#[test]
fn the_parameter_map_is_sent_once_computed() {
    let server = Server::start(&[]);
    let mut socket = server.connect();
    send(&mut socket, r#"{"type":"map"}"#);
    let tiles = until(&mut socket, Duration::from_secs(120), |m| match m {
        Received::Json(v) if v["type"] == "map" => {
            Some(v["tiles"].as_u64().unwrap() * v["side"].as_u64().unwrap())
        }
        Received::Json(v) if v["type"] == "error" => panic!("{v}"),
        _ => None,
    });
    let map = until(&mut socket, LIMIT, |m| match m {
        Received::Binary(bytes) if bytes.starts_with(b"MAP1") => Some(bytes.clone()),
        _ => None,
    });
    assert_eq!(u32::from_le_bytes(map[4..8].try_into().unwrap()) as u64, tiles);
    assert_eq!(map.len() as u64, 12 + tiles * tiles);
    // Tiles of different (F, k) differ.
    let levels = &map[12..];
    assert!(levels.iter().any(|&l| l != levels[0]));
    server.stop();
}

#[test]
fn hostile_messages_are_refused_and_the_session_goes_on() {
    let server = Server::start(&[]);
    let mut socket = server.connect();
    next_frame(&mut socket);
    for (message, expected) in [
        (r#"{"type":"set","settings":{"feed":"lots"}}"#, "feed: invalid type"),
        (r#"{"type":"set","settings":{"feed":NaN}}"#, "not a request"),
        (r#"{"type":"set","settings":{"feed":1e999}}"#, "not a request"),
        (r#"{"type":"set","settings":{"feed":1e39}}"#, "--feed"),
        (r#"{"type":"set","settings":{"feed":-0.5}}"#, "--feed"),
        (r#"{"type":"set","settings":{"du":0.3}}"#, "stability"),
        (r#"{"type":"set","settings":{"width":4294967296}}"#, "width: invalid value"),
        (r#"{"type":"set","settings":{"width":100000,"height":100000}}"#, "--width"),
        (r#"{"type":"set","settings":{"width":60000,"height":60000}}"#, "--max-cells"),
        (r#"{"type":"set","settings":{"steps_per_frame":1000000}}"#, "steps_per_frame"),
        (r#"{"type":"set","settings":{"palette":"../../etc/passwd"}}"#, "unknown palette"),
        (r#"{"type":"set","settings":{"init_image":"/etc/passwd"}}"#, "init_image: not a setting"),
        (r#"{"type":"set","settings":{"save":"/tmp/x.npz"}}"#, "save: not a setting"),
        (r#"{"type":"set","settings":{"simulation":"heat"}}"#, "start a new simulation"),
        (r#"{"type":"start","simulation":"fluid"}"#, "unknown simulation"),
        (r#"{"type":"start","simulation":"physarum","settings":{"agents":4000000000}}"#, "--agents"),
        (r#"{"type":"brush","x":1e30,"y":1,"radius":1}"#, "outside"),
        (r#"{"type":"brush","x":-1,"y":1,"radius":1}"#, "outside"),
        (r#"{"type":"brush","x":1,"y":1,"radius":1e9}"#, "radius"),
        (r#"{"type":"brush","x":1,"y":1,"radius":0}"#, "radius"),
        (r#"{"type":"brush","x":"1","y":1,"radius":1}"#, "not a request"),
        (r#"{"type":"launch"}"#, "not a request"),
        (r#"{"type":"pause","now":true}"#, "not a request"),
        (r#"[1,2,3]"#, "not a request"),
        (r#"not json at all"#, "not a request"),
        ("\u{0}\u{1}\u{2}", "not a request"),
    ] {
        eprintln!("sending {message}");
        send(&mut socket, message);
        let error = next_error(&mut socket);
        assert!(error.contains(expected), "{message}: {error}");
    }
    let nested = "[".repeat(10_000);
    send(&mut socket, &nested);
    assert!(next_error(&mut socket).contains("not a request"));
    socket.send(Message::binary(vec![0u8; 100])).unwrap();
    assert!(next_error(&mut socket).contains("binary"));
    // The session still runs, with its settings unchanged.
    send(&mut socket, r#"{"type":"set","settings":{"kill":0.06}}"#);
    until(&mut socket, LIMIT, |m| match m {
        Received::Json(v)
            if v["type"] == "state" && v["settings"]["kill"].as_f64() == Some(0.06f32 as f64) =>
        {
            assert_eq!(v["settings"]["width"], 256);
            Some(())
        }
        _ => None,
    });
    next_frame(&mut socket);
    // A message above the size limit ends the connection (and frees its session).
    let huge = format!(r#"{{"type":"set","settings":{{"preset":"{}"}}}}"#, "x".repeat(1 << 20));
    let _ = socket.send(Message::text(huge));
    let start = Instant::now();
    while socket.read().is_ok() {
        assert!(start.elapsed() < LIMIT, "the connection stayed open");
    }
    server.wait_sessions(0, LIMIT);
    // The server still serves.
    let mut again = server.connect();
    next_frame(&mut again);
    drop(again);
    server.wait_sessions(0, LIMIT);
    server.stop();
}

#[test]
fn floods_are_cut_off_and_leave_no_session() {
    let server = Server::start(&[]);
    let mut socket = server.connect();
    next_frame(&mut socket);
    let mut sent = 0;
    for _ in 0..5_000 {
        if socket.send(Message::text(r#"{"type":"brush","x":5,"y":5,"radius":3}"#)).is_err() {
            break;
        }
        sent += 1;
    }
    assert!(sent > 0);
    // Either refused with a message or closed; in both cases the session ends with the socket.
    drop(socket);
    server.wait_sessions(0, LIMIT);
    let mut again = server.connect();
    next_frame(&mut again);
    server.stop();
}

#[test]
fn half_open_and_silent_connections_are_closed() {
    let server = Server::start(&["--idle-timeout", "2"]);
    // A request that never ends does not block anyone.
    let mut half = TcpStream::connect(&server.address).unwrap();
    half.write_all(b"GET / HTTP/1.1\r\nHost: 127").unwrap();
    // A session whose client vanishes without closing, and one that never reads.
    let vanished = server.connect();
    let mut silent = server.connect();
    send(&mut silent, r#"{"type":"set","settings":{"steps_per_frame":1}}"#);
    assert_eq!(server.sessions(), 2);
    drop(vanished);
    // Both are closed within the idle timeout and a little.
    server.wait_sessions(0, Duration::from_secs(20));
    let mut fine = server.connect();
    next_frame(&mut fine);
    drop(half);
    drop(silent);
    server.stop();
}

/// Whether the server closes `stream` (end of file or a reset, after anything it sends) within
/// `limit`.
fn closed_within(stream: &mut TcpStream, limit: Duration) -> bool {
    use std::io::{ErrorKind, Read};
    let deadline = Instant::now() + limit;
    let mut buffer = [0u8; 512];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        stream.set_read_timeout(Some(left)).unwrap();
        match stream.read(&mut buffer) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => return false,
            Err(_) => return true,
        }
    }
}

#[test]
fn unfinished_requests_are_closed_and_counted_so_others_are_served() {
    let server = Server::start(&["--idle-timeout", "2"]);
    let before = server.descriptors();
    // Three times as many half requests as one client may hold: those beyond its share are
    // closed at once, the server keeps no more than its share open.
    let per_client = host_cli::serve::CONNECTIONS_PER_CLIENT as usize;
    let mut half: Vec<TcpStream> = (0..3 * per_client)
        .map(|_| {
            let mut stream = TcpStream::connect(&server.address).unwrap();
            let _ = stream.write_all(b"GET /status HTTP/1.1\r\nHost: 127.0.0.1");
            stream
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let held = server.descriptors().saturating_sub(before);
    assert!(held <= per_client + 2, "{held} descriptors held for {} half requests", half.len());
    let refused = half[per_client..]
        .iter_mut()
        .map(|s| closed_within(s, Duration::from_secs(1)))
        .filter(|&c| c)
        .count();
    assert_eq!(refused, 2 * per_client, "connections beyond a client's share are closed at once");
    // The ones admitted are closed once the idle timeout has passed without their headers.
    let start = Instant::now();
    for stream in &mut half[..per_client] {
        assert!(closed_within(stream, Duration::from_secs(10)), "a half request still open");
    }
    assert!(start.elapsed() < Duration::from_secs(10));
    // And the server answers again.
    let (status, _, body) = server.get("/status", &[]);
    assert_eq!(status, 200, "{body}");
    assert!(server.descriptors() <= before + 2);
    server.stop();
}

#[test]
fn the_token_is_required_everywhere() {
    let token = "0123456789abcdef_test";
    let server = Server::start(&["--token", token]);
    assert_eq!(server.token.as_deref(), Some(token));
    for path in ["/", "/app.js", "/status", "/ws", "/?token=wrong0123456789abc"] {
        let (status, _, body) = server.get(path, &[]);
        assert_eq!(status, 401, "{path}: {body}");
    }
    assert!(server.try_connect(None).is_err());
    assert!(server.try_connect(Some("0123456789abcdef_tesT")).is_err());
    let (status, head, body) = server.get(&format!("/?token={token}"), &[]);
    assert_eq!(status, 200);
    assert!(body.contains("<canvas") && head.contains(&format!("={token}; HttpOnly")), "{head}");
    let cookie = format!("rust-gpu-sim-token-{}={token}", server.address.rsplit(':').next().unwrap());
    assert_eq!(server.get("/app.js", &[("Cookie", &cookie)]).0, 200);
    let bearer = format!("Bearer {token}");
    assert_eq!(server.get("/status", &[("Authorization", &bearer)]).0, 200);
    let mut socket = server.connect();
    next_frame(&mut socket);
    server.stop();
}

#[test]
fn other_sites_and_other_hosts_are_refused() {
    let server = Server::start(&[]);
    assert_eq!(server.get("/", &[]).0, 200);
    // DNS rebinding: a page of another name that resolves here.
    assert_eq!(server.get("/", &[("Host", "evil.example:8080")]).0, 403);
    // A WebSocket opened by another site's page.
    let (status, _, _) = server.get("/ws", &[("Origin", "http://evil.example")]);
    assert_eq!(status, 403);
    let origin = format!("http://{}", server.address);
    assert_ne!(server.get("/", &[("Origin", &origin)]).0, 403);
    server.stop();
}

#[test]
fn sessions_per_client_are_limited() {
    let server = Server::start(&["--max-sessions-per-client", "1"]);
    let mut first = server.connect();
    next_frame(&mut first);
    let Err(tungstenite::Error::Http(response)) = server.try_connect(None) else {
        panic!("a second session was accepted")
    };
    assert_eq!(response.status(), 429);
    let body = String::from_utf8_lossy(response.body().as_deref().unwrap_or_default()).into_owned();
    assert!(body.contains("--max-sessions-per-client"), "{body}");
    drop(first);
    server.wait_sessions(0, LIMIT);
    let mut second = server.connect();
    next_frame(&mut second);
    server.stop();
}
