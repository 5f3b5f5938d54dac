//! A `serve` process on a loopback port for the tests, with a WebSocket client (tungstenite)
//! and plain HTTP requests over a TCP stream. Every wait is bounded.

#![allow(dead_code)]

use std::{
    io::{BufRead, BufReader, Read, Write},
    net::TcpStream,
    process::{Child, Command, Stdio},
    sync::mpsc,
    time::{Duration, Instant},
};

use serde_json::Value;
use tungstenite::{Message, WebSocket};

pub type Socket = WebSocket<TcpStream>;

/// A running `serve --backend cpu --port 0`, killed when dropped (a test that fails while
/// it runs leaves no server behind).
pub struct Server {
    child: Child,
    /// `127.0.0.1:PORT`.
    pub address: String,
    pub token: Option<String>,
    stderr: Option<std::thread::JoinHandle<String>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Starts the server on the CPU with `extra` options and waits (at most 60 s) for its
    /// address line.
    pub fn start(extra: &[&str]) -> Server {
        Self::start_on("cpu", extra)
    }

    /// [`Server::start`] on `backend`.
    pub fn start_on(backend: &str, extra: &[&str]) -> Server {
        // SERVE_BIN: the staged binary on the GPU machine (scripts/gpu-check.sh).
        let program =
            std::env::var_os("SERVE_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_rust-gpu-sim").into());
        let mut child = Command::new(program)
            .args(["serve", "--backend", backend, "--port", "0"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start serve");
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
        let line = rx.recv_timeout(Duration::from_secs(60)).expect("serve printed its address");
        let url = line.split_whitespace().find(|w| w.starts_with("http://")).expect("a URL").to_owned();
        let rest = url.strip_prefix("http://").unwrap();
        let (address, query) = rest.split_once('/').unwrap();
        let token = query.strip_prefix("?token=").map(str::to_owned);
        Server { child, address: address.to_owned(), token, stderr: Some(stderr) }
    }

    /// The server's open file descriptors (its sockets among them).
    pub fn descriptors(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.child.id())).map_or(0, |dir| dir.count())
    }

    /// A WebSocket session (with the token if there is one); reads time out after 20 s.
    pub fn connect(&self) -> Socket {
        self.try_connect(self.token.as_deref()).expect("WebSocket handshake")
    }

    pub fn try_connect(&self, token: Option<&str>) -> Result<Socket, tungstenite::Error> {
        let stream = TcpStream::connect(&self.address).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let url = match token {
            Some(token) => format!("ws://{}/ws?token={token}", self.address),
            None => format!("ws://{}/ws", self.address),
        };
        tungstenite::client(url, stream).map(|(socket, _)| socket).map_err(|e| match e {
            tungstenite::HandshakeError::Failure(e) => e,
            tungstenite::HandshakeError::Interrupted(_) => panic!("blocking handshake interrupted"),
        })
    }

    /// A GET of `path` with `headers`: the status code, the headers and the body.
    pub fn get(&self, path: &str, headers: &[(&str, &str)]) -> (u16, String, String) {
        let mut stream = TcpStream::connect(&self.address).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut request = format!("GET {path} HTTP/1.1\r\nConnection: close\r\n");
        if !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("host")) {
            request += &format!("Host: {}\r\n", self.address);
        }
        for (name, value) in headers {
            request += &format!("{name}: {value}\r\n");
        }
        stream.write_all(format!("{request}\r\n").as_bytes()).unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
        let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
        (status, head.to_owned(), body.to_owned())
    }

    /// `/status`: sessions open.
    pub fn sessions(&self) -> u64 {
        let path = match &self.token {
            Some(token) => format!("/status?token={token}"),
            None => "/status".into(),
        };
        let (status, _, body) = self.get(&path, &[]);
        assert_eq!(status, 200, "{body}");
        let json: Value = serde_json::from_str(body.trim()).unwrap();
        json["sessions"].as_u64().unwrap()
    }

    /// Waits (at most `limit`) until `sessions()` is `count`.
    pub fn wait_sessions(&self, count: u64, limit: Duration) {
        let start = Instant::now();
        loop {
            let now = self.sessions();
            if now == count {
                return;
            }
            assert!(start.elapsed() < limit, "still {now} sessions open after {limit:?}, expected {count}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Stops the server and returns its stderr; fails the test if it exited on its own or
    /// printed a panic.
    pub fn stop(mut self) -> String {
        assert!(self.child.try_wait().unwrap().is_none(), "serve exited early");
        self.child.kill().unwrap();
        self.child.wait().unwrap();
        let stderr = self.stderr.take().expect("stderr is read once").join().unwrap();
        assert!(!stderr.contains("panicked"), "serve panicked:\n{stderr}");
        stderr
    }
}

/// What the server sent.
#[derive(Debug)]
pub enum Received {
    Json(Value),
    Frame { width: u32, height: u32, steps: u64, version: u32, levels: Vec<u8> },
    Binary(Vec<u8>),
}

/// The next message (pings answered by tungstenite); panics on a closed socket.
pub fn receive(socket: &mut Socket) -> Received {
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
            Message::Binary(bytes) => return Received::Binary(bytes.to_vec()),
            _ => {}
        }
    }
}

/// Reads until `wanted` returns `Some` (at most `limit`).
pub fn until<T>(socket: &mut Socket, limit: Duration, mut wanted: impl FnMut(&Received) -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        assert!(start.elapsed() < limit, "nothing wanted arrived within {limit:?}");
        let message = receive(socket);
        if let Some(found) = wanted(&message) {
            return found;
        }
    }
}

pub fn send(socket: &mut Socket, json: &str) {
    socket.send(Message::text(json)).expect("send");
}

/// The next `error` message's text.
pub fn next_error(socket: &mut Socket) -> String {
    until(socket, Duration::from_secs(20), |m| match m {
        Received::Json(v) if v["type"] == "error" => Some(v["message"].as_str().unwrap().to_owned()),
        _ => None,
    })
}

/// The next frame's levels.
pub fn next_frame(socket: &mut Socket) -> (u32, Vec<u8>) {
    until(socket, Duration::from_secs(30), |m| match m {
        Received::Frame { version, levels, .. } => Some((*version, levels.clone())),
        _ => None,
    })
}
