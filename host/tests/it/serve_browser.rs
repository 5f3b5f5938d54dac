//! `serve` in a real headless browser: Debian's chromium driven over WebDriver (chromedriver,
//! through fantoccini). The page must draw frames that change, a moved slider must change the
//! server's setting (as the server's own state message reports it), and a screenshot is taken
//! (kept in the test's temporary directory; `SERVE_SCREENSHOT=path` copies it, which is how
//! docs/serve.png is made). Needs `chromium` and `chromedriver` (scripts/setup.sh installs
//! them).

use std::{
    net::{TcpListener, TcpStream},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use crate::serve_server::Server;
use fantoccini::{ClientBuilder, Locator, key::Key};
use serde_json::{Value, json};

const LIMIT: Duration = Duration::from_secs(60);

/// chromedriver on a free loopback port, killed when dropped.
struct Driver(Child, u16);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_driver() -> Driver {
    let found = |name: &str| {
        Command::new("sh")
            .args(["-c", &format!("command -v {name}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    assert!(
        found("chromium") && found("chromedriver"),
        "chromium and chromedriver are needed for this test: run scripts/setup.sh (Debian's chromium and chromium-driver)"
    );
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = Command::new("chromedriver")
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromedriver");
    let driver = Driver(child, port);
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(start.elapsed() < LIMIT, "chromedriver did not listen");
        std::thread::sleep(Duration::from_millis(100));
    }
    driver
}

/// Polls `script` (returning a JSON value) until `done` accepts it.
async fn wait_for(
    client: &fantoccini::Client,
    script: &str,
    what: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let start = Instant::now();
    loop {
        let value = client.execute(script, vec![]).await.expect("script");
        if done(&value) {
            return value;
        }
        assert!(start.elapsed() < LIMIT, "{what}: still {value} after {LIMIT:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

const CANVAS_HASH: &str = "const c = document.getElementById('field');
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let h = 0;
    for (let i = 0; i < d.length; i += 4) h = (h * 31 + d[i] + 7 * d[i + 1] + 13 * d[i + 2]) | 0;
    return h;";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_shows_live_frames_and_steers_the_server() {
    let server = Server::start(&[]);
    let driver = start_driver();
    let capabilities = json!({
        "goog:chromeOptions": {
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1200,800"]
        }
    });
    let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(capabilities.as_object().unwrap().clone())
        .connect(&format!("http://127.0.0.1:{}", driver.1))
        .await
        .expect("a chromium session");
    client.goto(&format!("http://{}/", server.address)).await.unwrap();

    // Frames arrive and the canvas changes between them.
    wait_for(&client, "return window.simState.frames;", "frames", |v| v.as_u64().unwrap_or(0) >= 2).await;
    let first = client.execute(CANVAS_HASH, vec![]).await.unwrap();
    wait_for(&client, CANVAS_HASH, "the canvas changing", |v| *v != first).await;

    // Move the F slider with the keyboard: the server applies it and says so.
    let before = client.execute("return window.simState.settings.feed;", vec![]).await.unwrap();
    let slider = client.find(Locator::Id("feed")).await.unwrap();
    slider.send_keys(&format!("{}{}{}", Key::Left, Key::Left, Key::Left)).await.unwrap();
    let moved =
        client.execute("return Number(document.getElementById('feed').value);", vec![]).await.unwrap();
    assert_ne!(moved, before, "the slider did not move");
    let applied = wait_for(&client, "return window.simState.settings.feed;", "the server's F", |v| {
        v.as_f64().zip(moved.as_f64()).is_some_and(|(a, b)| (a - b).abs() < 1e-6)
    })
    .await;
    assert_ne!(applied, before);
    assert!(
        client
            .execute("return window.simState.command;", vec![])
            .await
            .unwrap()
            .as_str()
            .unwrap()
            .contains("--feed"),
    );

    // Let the pattern grow, then the screenshot.
    let steps = |v: &Value| v.as_u64().unwrap_or(0);
    wait_for(&client, "return window.simState.frameSteps;", "steps", |v| steps(v) >= 3000).await;
    let png = client.screenshot().await.unwrap();
    let image = image::load_from_memory(&png).expect("a PNG").to_rgb8();
    // The field fills the left part of the window: many colours there.
    let mut colours = std::collections::HashSet::new();
    for y in (0..image.height()).step_by(7) {
        for x in (0..image.width() / 2).step_by(7) {
            colours.insert(image.get_pixel(x, y).0);
        }
    }
    assert!(colours.len() > 20, "the screenshot shows {} colours", colours.len());
    let kept = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("serve.png");
    std::fs::write(&kept, &png).unwrap();
    if let Some(path) = std::env::var_os("SERVE_SCREENSHOT") {
        std::fs::write(path, &png).unwrap();
    }
    client.close().await.unwrap();
    drop(driver);
    server.wait_sessions(0, LIMIT);
    server.stop();
}
