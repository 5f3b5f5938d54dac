//! The server: an axum server on tokio. `/` is the page, `/app.js` its script (both embedded
//! in the binary), `/ws` a WebSocket per simulation session ([`super::protocol`]), `/status`
//! the open sessions as JSON. Every request passes [`guard`]: the token when there is one (a
//! non-loopback address always has one), and checks of the `Host` and `Origin` headers
//! against DNS rebinding and cross-site WebSockets. Each session is a thread of its own
//! ([`super::session`]) that owns its simulation, of any model of the server's [`Registry`].
//!
//! Connections ([`accept`]): a request whose headers have not all come within
//! `--idle-timeout`, and a connection not taken over by a WebSocket after that long, is
//! closed; a client holds at most [`CONNECTIONS_PER_CLIENT`] connections in their request at
//! once and all clients [`CONNECTIONS`] (beyond that a connection is closed at once), so
//! unfinished requests can neither exhaust the descriptors nor keep `/status` from answering.

use std::{
    collections::HashMap,
    net::{IpAddr, SocketAddr},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use anyhow::{Context, Result};
use axum::{
    Router,
    body::Bytes,
    extract::{
        ConnectInfo, Request, State,
        ws::{Message, WebSocket, WebSocketUpgrade},
    },
    http::{HeaderMap, HeaderValue, StatusCode, header},
    middleware::{self, Next},
    response::{IntoResponse, Response},
    routing::get,
};
use serde_json::json;
use simulations::Device;
use tokio::sync::{mpsc, watch};

use super::{
    Registry,
    protocol::{self, MAX_MESSAGE_BYTES, Reply, Request as PageRequest},
    session::{Outgoing, Session},
    settings::{Checked, Limits, MAX_STEPS_PER_FRAME, Settings},
};
use crate::{
    cli::serve::{ServeArgs, ServeOptions},
    say,
};

const INDEX_HTML: &str = include_str!("page/index.html");
const APP_JS: &str = include_str!("page/app.js");

/// Messages a page may send per second before they are dropped (a drag of the brush sends
/// about 60), and the count at which the connection is closed.
const MESSAGES_PER_SECOND: u32 = 200;
const FLOOD: u32 = 2_000;

/// Connections one client address may hold in their request phase at once (a browser opens
/// about 6), and all clients together, well under a default descriptor limit of 1,024.
pub const CONNECTIONS_PER_CLIENT: u32 = 32;
pub const CONNECTIONS: u32 = 256;

/// What every request handler shares.
struct Shared {
    options: ServeOptions,
    device: Device,
    limits: Limits,
    registry: Arc<Registry>,
    /// The settings every session starts with.
    start: Checked,
    /// Sessions by client address: counted from the WebSocket's admission until its
    /// simulation thread has dropped the simulation (and its GPU memory).
    sessions: Arc<PerClient>,
    /// The port actually bound (for the Host check and the cookie's name).
    port: u16,
}

/// Places held by client address (sessions, or connections in their request phase), each given
/// back when its [`Place`] is dropped.
#[derive(Default)]
struct PerClient {
    counts: Mutex<HashMap<IpAddr, u32>>,
}

/// Why [`PerClient::admit`] found no place.
enum Full {
    /// All clients together hold the most.
    All,
    /// This client holds the most.
    Client,
}

/// One place of a [`PerClient`]; dropping it frees the place.
struct Place {
    of: Arc<PerClient>,
    client: IpAddr,
}

impl PerClient {
    /// A place for `client`, or which limit is reached: `all` places in all, `per_client` each.
    fn admit(self: &Arc<Self>, client: IpAddr, all: u32, per_client: u32) -> Result<Place, Full> {
        let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        if counts.values().sum::<u32>() >= all {
            return Err(Full::All);
        }
        let mine = counts.entry(client).or_insert(0);
        if *mine >= per_client {
            return Err(Full::Client);
        }
        *mine += 1;
        Ok(Place { of: self.clone(), client })
    }

    /// The places held, and by how many clients.
    fn held(&self) -> (u32, usize) {
        let counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        (counts.values().sum(), counts.len())
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        let mut counts = self.of.counts.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(count) = counts.get_mut(&self.client) {
            *count -= 1;
            if *count == 0 {
                counts.remove(&self.client);
            }
        }
    }
}

impl Shared {
    /// A place for a new session of `client`, or the reason there is none.
    fn admit(&self, client: IpAddr) -> Result<Place, String> {
        let (all, mine) = (self.options.max_clients, self.options.max_sessions_per_client);
        self.sessions.admit(client, all, mine).map_err(|full| match full {
            Full::All => format!(
                "this server runs at most {all} sessions at once (serve --max-clients); close another tab or try later"
            ),
            Full::Client => {
                format!("at most {mine} sessions per client (serve --max-sessions-per-client); close another tab")
            }
        })
    }

    fn cookie_name(&self) -> String {
        format!("rust-gpu-sim-token-{}", self.port)
    }
}

/// `serve`: checks the options and the models of `registry`, opens the device, listens,
/// prints the address and serves until interrupted.
pub fn run(args: ServeArgs, registry: Registry) -> Result<()> {
    let options = args.check()?;
    registry.check().map_err(anyhow::Error::msg)?;
    let (device, notice) = Device::select(options.backend)?;
    if let Some(notice) = notice {
        crate::cli::note(&notice);
    }
    let limits = Limits::for_device(&device, options.max_cells, options.max_agents);
    let start = Settings::starting(&registry, &device, &limits).map_err(anyhow::Error::msg)?;
    // Under an address-space limit, room for the runtime's two workers and a blocking thread
    // first: its pool starts them itself (each also maps a signal stack, which a thread that
    // finds no room for it aborts the process for).
    simulations::memory::check_thread_room(3).map_err(|e| {
        anyhow::anyhow!(
            "cannot start the server's runtime: {}",
            simulations::memory::thread_start_failure(&e)
        )
    })?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("serve-io")
        .enable_all()
        .build()
        .context("cannot start the server's runtime")?;
    let registry = Arc::new(registry);
    runtime.block_on(serve(options, device, limits, registry, start))
}

async fn serve(
    options: ServeOptions,
    device: Device,
    limits: Limits,
    registry: Arc<Registry>,
    start: Checked,
) -> Result<()> {
    let address = SocketAddr::new(options.bind, options.port);
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .with_context(|| format!("cannot listen on {address} (--bind, --port)"))?;
    let bound = listener.local_addr().context("reading the bound address")?;
    let url = match &options.token {
        Some(token) => format!("http://{bound}/?token={token}"),
        None => format!("http://{bound}/"),
    };
    let device_name = match &device {
        Device::Cpu => "the CPU".to_owned(),
        Device::Cuda(gpu) => gpu.name().to_owned(),
    };
    say!("serving simulations on {device_name} at {url}");
    if options.generated {
        crate::cli::note(
            "a token was generated because the address is not a loopback one: share the URL above only with \
             people who may use this machine's GPU (or choose one with --token)",
        );
    }
    let shared = Arc::new(Shared {
        options,
        device,
        limits,
        registry,
        start,
        sessions: Arc::default(),
        port: bound.port(),
    });
    let app = Router::new()
        .route("/", get(index))
        .route("/app.js", get(script))
        .route("/ws", get(websocket))
        .route("/status", get(status))
        .layer(middleware::from_fn_with_state(shared.clone(), guard))
        .with_state(shared.clone());
    let idle = shared.options.idle_timeout;
    accept(listener, app, idle).await
}

/// Serves `app` to every connection `listener` accepts (HTTP/1.1): each request's headers
/// within `idle`, and the connection closed `idle` after it was accepted unless a WebSocket
/// took it over (its session is timed by its own pings), within the connection limits
/// (a [`PerClient`] count). A failed accept (descriptors run out) is retried after
/// a pause, never ends the server.
async fn accept(listener: tokio::net::TcpListener, app: Router, idle: Duration) -> Result<()> {
    let connections = Arc::new(PerClient::default());
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Ok(slot) = connections.admit(peer.ip(), CONNECTIONS, CONNECTIONS_PER_CLIENT) else { continue };
        let service = hyper_util::service::TowerToHyperService::new(
            app.clone().layer(axum::Extension(ConnectInfo(peer))),
        );
        tokio::spawn(async move {
            let _slot = slot;
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(idle)
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .with_upgrades();
            let _ = tokio::time::timeout(idle, connection).await;
        });
    }
}

/// A plain-text refusal.
fn refuse(status: StatusCode, message: &str) -> Response {
    (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], format!("{message}\n")).into_response()
}

/// Every request: the `Host` header must name this server as a loopback address when there
/// is no token (a DNS-rebinding page cannot then reach it), an `Origin`, when sent, must be
/// this server (no other site's page may open a WebSocket here), and the token, when there is
/// one, must come with the request: in the query (`?token=`, which sets a cookie so the
/// page's own requests carry it), an `Authorization: Bearer` header or that cookie.
async fn guard(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
    if shared.options.token.is_none() && !is_loopback_host(host, shared.port) {
        return refuse(StatusCode::FORBIDDEN, "this server answers only to a loopback address (Host header)");
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let same = origin.to_str().ok().and_then(|o| o.strip_prefix("http://")).is_some_and(|o| o == host);
        if !same {
            return refuse(
                StatusCode::FORBIDDEN,
                "requests from another site's pages are refused (Origin header)",
            );
        }
    }
    let Some(expected) = shared.options.token.clone() else { return next.run(request).await };
    let from_query = request
        .uri()
        .query()
        .and_then(|q| q.split('&').find_map(|pair| pair.strip_prefix("token=")).map(str::to_owned));
    let from_header = headers
        .get(header::AUTHORIZATION)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.strip_prefix("Bearer "))
        .map(str::to_owned);
    let cookie_name = shared.cookie_name();
    let from_cookie = cookie(headers, &cookie_name);
    let given = [&from_query, &from_header, &from_cookie];
    if !given.iter().any(|t| t.as_deref().is_some_and(|t| same_token(t, &expected))) {
        return refuse(
            StatusCode::UNAUTHORIZED,
            "this server needs its token: open the URL it printed at start-up (…/?token=…)",
        );
    }
    let mut response = next.run(request).await;
    if from_query.is_some()
        && let Ok(value) =
            HeaderValue::from_str(&format!("{cookie_name}={expected}; HttpOnly; SameSite=Strict; Path=/"))
    {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

/// Whether `host` (a Host header) names a loopback address at `port`.
fn is_loopback_host(host: &str, port: u16) -> bool {
    let Some((name, given_port)) = host.rsplit_once(':') else { return false };
    if given_port != port.to_string() {
        return false;
    }
    let name = name.trim_start_matches('[').trim_end_matches(']');
    name == "localhost" || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers.get_all(header::COOKIE).iter().filter_map(|v| v.to_str().ok()).find_map(|line| {
        line.split(';')
            .map(str::trim)
            .find_map(|pair| pair.strip_prefix(name)?.strip_prefix('=').map(str::to_owned))
    })
}

/// Compares tokens in time independent of where they differ.
fn same_token(given: &str, expected: &str) -> bool {
    given.len() == expected.len() && given.bytes().zip(expected.bytes()).fold(0, |d, (a, b)| d | (a ^ b)) == 0
}

async fn index() -> Response {
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8"), (header::CACHE_CONTROL, "no-store")], INDEX_HTML)
        .into_response()
}

async fn script() -> Response {
    ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8"), (header::CACHE_CONTROL, "no-store")], APP_JS)
        .into_response()
}

/// The sessions open, all clients together.
async fn status(State(shared): State<Arc<Shared>>) -> Response {
    let (sessions, clients) = shared.sessions.held();
    let body = json!({ "sessions": sessions, "clients": clients }).to_string();
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

async fn websocket(
    State(shared): State<Arc<Shared>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    upgrade: WebSocketUpgrade,
) -> Response {
    let ticket = match shared.admit(peer.ip()) {
        Ok(ticket) => ticket,
        Err(message) => return refuse(StatusCode::TOO_MANY_REQUESTS, &message),
    };
    upgrade
        .max_message_size(MAX_MESSAGE_BYTES)
        .max_frame_size(MAX_MESSAGE_BYTES)
        .on_upgrade(move |socket| connection(socket, shared, ticket))
}

/// One session's connection: forwards the page's requests to the simulation thread, and the
/// thread's frames (newest only) and replies to the page, until either side goes.
async fn connection(mut socket: WebSocket, shared: Arc<Shared>, ticket: Place) {
    let idle = shared.options.idle_timeout;
    let (frames_tx, mut frames) = watch::channel::<Option<Bytes>>(None);
    let (replies_tx, mut replies) = mpsc::channel::<Outgoing>(32);
    let hello = hello(&shared);
    if !send(&mut socket, Message::Text(hello.into()), idle).await {
        return;
    }
    let session = match Session::spawn(
        shared.device.clone(),
        shared.limits,
        shared.registry.clone(),
        shared.start.clone(),
        frames_tx,
        replies_tx,
        move || drop(ticket),
    ) {
        Ok(session) => session,
        Err(e) => {
            let message = Reply::error(format!("cannot start a simulation thread: {e}")).to_json();
            let _ = send(&mut socket, Message::Text(message.into()), idle).await;
            return;
        }
    };
    let mut ping = tokio::time::interval(idle / 3);
    let mut last_heard = Instant::now();
    let mut window = (Instant::now(), 0u32);
    loop {
        let outgoing = tokio::select! {
            incoming = socket.recv() => {
                let Some(Ok(message)) = incoming else { break };
                last_heard = Instant::now();
                if window.0.elapsed() >= Duration::from_secs(1) {
                    window = (Instant::now(), 0);
                }
                window.1 += 1;
                if window.1 > FLOOD {
                    break;
                }
                match message {
                    Message::Text(text) if window.1 <= MESSAGES_PER_SECOND => {
                        match serde_json::from_str::<PageRequest>(text.as_str()) {
                            Ok(request) => session.send(request).err().map(|e| Reply::error(e).to_json()),
                            Err(e) => Some(Reply::error(format!("not a request this server knows: {e}")).to_json()),
                        }
                    }
                    Message::Text(_) => (window.1 == MESSAGES_PER_SECOND + 1).then(|| {
                        Reply::error(format!("more than {MESSAGES_PER_SECOND} messages a second; the rest are dropped")).to_json()
                    }),
                    Message::Binary(_) => Some(Reply::error("binary messages are not requests; send JSON text").to_json()),
                    Message::Close(_) => break,
                    Message::Ping(_) | Message::Pong(_) => None,
                }
                .map(|text| Message::Text(text.into()))
            }
            changed = frames.changed() => {
                if changed.is_err() {
                    break;
                }
                frames.borrow_and_update().clone().map(Message::Binary)
            }
            reply = replies.recv() => match reply {
                None => break,
                Some(Outgoing::Text(text)) => Some(Message::Text(text.into())),
                Some(Outgoing::Binary(bytes)) => Some(Message::Binary(bytes)),
            },
            _ = ping.tick() => {
                if last_heard.elapsed() > idle {
                    break;
                }
                Some(Message::Ping(Bytes::new()))
            }
        };
        if let Some(message) = outgoing
            && !send(&mut socket, message, idle).await
        {
            break;
        }
    }
    drop(session);
}

/// Sends within `idle`; `false` when the client is gone or does not take it in time.
async fn send(socket: &mut WebSocket, message: Message, idle: Duration) -> bool {
    matches!(tokio::time::timeout(idle, socket.send(message)).await, Ok(Ok(())))
}

/// What the page offers: the models (controls, presets), palettes, limits, the device.
fn hello(shared: &Shared) -> String {
    let device = match &shared.device {
        Device::Cpu => format!("cpu ({} threads)", rayon::current_num_threads()),
        Device::Cuda(gpu) => gpu.name().to_owned(),
    };
    Reply::Hello {
        device,
        models: shared.registry.describe(),
        palettes: protocol::palettes(),
        max_cells: shared.limits.max_cells,
        max_agents: shared.limits.max_agents,
        max_steps_per_frame: MAX_STEPS_PER_FRAME,
    }
    .to_json()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts_only() {
        assert!(is_loopback_host("127.0.0.1:8080", 8080));
        assert!(is_loopback_host("localhost:8080", 8080));
        assert!(is_loopback_host("[::1]:8080", 8080));
        assert!(!is_loopback_host("127.0.0.1:8081", 8080));
        assert!(!is_loopback_host("evil.example:8080", 8080));
        assert!(!is_loopback_host("127.0.0.1", 8080));
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(same_token("abcdefghijklmnop", "abcdefghijklmnop"));
        assert!(!same_token("abcdefghijklmnoq", "abcdefghijklmnop"));
        assert!(!same_token("abcdefghijklmno", "abcdefghijklmnop"));
        assert!(!same_token("", "abcdefghijklmnop"));
    }
}
