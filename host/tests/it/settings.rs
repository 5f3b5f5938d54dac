//! Settings in every output (CPU backend): the GIF comment and the PNG text chunks hold the
//! settings `--print-config` prints; `--config` reads them back (from the printed TOML or from
//! the output itself) and reproduces the output bit for bit, apart from the recorded command
//! line; options on the command line override the file.

use crate::common;

use std::path::Path;

use crate::common::{host, scratch_dir};
use gif::streaming_decoder::{Decoded, OutputBuffer, StreamingDecoder};

/// Runs `host` in `dir`, asserting success; returns stdout.
fn ok(dir: &Path, args: &[&str]) -> String {
    let out = host(dir, args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Every comment extension of a GIF, read with the gif crate's decoder.
fn gif_comments(bytes: &[u8]) -> Vec<String> {
    let mut decoder = StreamingDecoder::new();
    let (mut rest, mut comments, mut text) = (bytes, Vec::new(), Vec::new());
    while !rest.is_empty() {
        let (used, decoded) = decoder.update(rest, &mut OutputBuffer::None).unwrap();
        rest = &rest[used..];
        if let Decoded::SubBlock { ext, is_last } = decoded
            && ext == gif::AnyExtension(0xFE)
        {
            text.extend_from_slice(decoder.last_ext_sub_block());
            if is_last {
                comments.push(String::from_utf8(std::mem::take(&mut text)).unwrap());
            }
        }
    }
    comments
}

/// The GIF's bytes without its comment extensions.
fn without_comments(bytes: &[u8]) -> Vec<u8> {
    let mut bytes = bytes.to_vec();
    for comment in gif_comments(&bytes) {
        let mut block = vec![0x21, 0xFE];
        for chunk in comment.as_bytes().chunks(255) {
            block.push(chunk.len() as u8);
            block.extend_from_slice(chunk);
        }
        block.push(0);
        let at = bytes.windows(block.len()).position(|w| w == block).expect("the comment block");
        bytes.drain(at..at + block.len());
    }
    bytes
}

/// A PNG's text chunks (keyword, text) and its pixels, read with the png crate.
fn png_text_and_pixels(path: &Path) -> (Vec<(String, String)>, Vec<u8>) {
    let mut decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    decoder.set_ignore_text_chunk(false);
    let mut reader = decoder.read_info().unwrap();
    let mut text: Vec<(String, String)> =
        reader.info().uncompressed_latin1_text.iter().map(|c| (c.keyword.clone(), c.text.clone())).collect();
    text.extend(reader.info().utf8_text.iter().map(|c| (c.keyword.clone(), c.get_text().unwrap())));
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    reader.next_frame(&mut pixels).unwrap();
    (text, pixels)
}

/// The PNG's `Comment` text.
fn png_comment(path: &Path) -> String {
    let (text, _) = png_text_and_pixels(path);
    text.into_iter().find(|(k, _)| k == "Comment").expect("a Comment chunk").1
}

/// A settings document, parsed as plain TOML, without the command line it records.
fn settings(text: &str) -> toml::Table {
    let mut table: toml::Table = text.parse().unwrap_or_else(|e| panic!("{e}\n{text}"));
    let provenance = table["provenance"].as_table_mut().unwrap();
    assert!(provenance.remove("command").is_some(), "the command line is recorded: {text}");
    assert_eq!(provenance["version"].as_str(), Some(env!("CARGO_PKG_VERSION")));
    table
}

const GRAYSCOTT: &[&str] = &[
    "grayscott",
    "--backend",
    "cpu",
    "--preset",
    "worms",
    "--size",
    "24",
    "--steps",
    "60",
    "--frame-every",
    "20",
    "--seed",
    "7",
];
const HEAT: &[&str] =
    &["heat", "--backend", "cpu", "--size", "9", "--steps", "6", "--frame-every", "2", "--alpha", "0.5"];
const PHYSARUM: &[&str] = &[
    "physarum",
    "--backend",
    "cpu",
    "--size",
    "24",
    "--agents",
    "200",
    "--steps",
    "12",
    "--preset",
    "jones",
];

fn with<'a>(base: &[&'a str], more: &[&'a str]) -> Vec<&'a str> {
    base.iter().chain(more).copied().collect()
}

#[test]
fn outputs_record_the_settings_print_config_prints() {
    let dir = scratch_dir("settings-recorded");
    for base in [GRAYSCOTT, HEAT, PHYSARUM] {
        let printed = settings(&ok(&dir, &with(base, &["--print-config"])));
        let name = base[0];
        assert_eq!(
            printed[name]["steps"].as_integer(),
            Some(base[base.iter().position(|a| *a == "--steps").unwrap() + 1].parse().unwrap())
        );
        let gif = dir.join(format!("{name}.gif"));
        let frames = dir.join(format!("{name}-frames"));
        ok(&dir, &with(base, &["--gif", gif.to_str().unwrap(), "--png-dir", frames.to_str().unwrap()]));
        let comments = gif_comments(&std::fs::read(&gif).unwrap());
        assert_eq!(comments.len(), 1, "{name}: one comment");
        assert_eq!(settings(&comments[0]), printed, "{name}: the GIF's comment");
        let mut pngs: Vec<_> = std::fs::read_dir(&frames).unwrap().map(|e| e.unwrap().path()).collect();
        pngs.sort();
        assert!(!pngs.is_empty());
        for png in &pngs {
            let (text, _) = png_text_and_pixels(png);
            assert!(
                text.contains(&("Software".into(), format!("rust-gpu-sim {}", env!("CARGO_PKG_VERSION"))))
            );
            assert_eq!(settings(&png_comment(png)), printed, "{}", png.display());
        }
    }
    // Heat's --png too.
    let png = dir.join("slice.png");
    ok(&dir, &with(HEAT, &["--png", png.to_str().unwrap()]));
    assert_eq!(settings(&png_comment(&png)), settings(&ok(&dir, &with(HEAT, &["--print-config"]))));
}

#[test]
fn the_printed_or_recorded_settings_reproduce_the_output() {
    let dir = scratch_dir("settings-round-trip");
    for base in [GRAYSCOTT, HEAT, PHYSARUM] {
        let name = base[0];
        let config = dir.join(format!("{name}.toml"));
        std::fs::write(&config, ok(&dir, &with(base, &["--print-config"]))).unwrap();
        let first = dir.join(format!("{name}-1.gif"));
        let first_frames = dir.join(format!("{name}-1"));
        ok(
            &dir,
            &with(base, &["--gif", first.to_str().unwrap(), "--png-dir", first_frames.to_str().unwrap()]),
        );
        // From the printed TOML, and from the GIF itself: nothing but the file and the outputs.
        for (k, source) in [config, first.clone()].iter().enumerate() {
            let again = dir.join(format!("{name}-again{k}.gif"));
            let again_frames = dir.join(format!("{name}-again{k}"));
            let args = [
                name,
                "--config",
                source.to_str().unwrap(),
                "--gif",
                again.to_str().unwrap(),
                "--png-dir",
                again_frames.to_str().unwrap(),
            ];
            ok(&dir, &args);
            let (a, b) = (std::fs::read(&first).unwrap(), std::fs::read(&again).unwrap());
            assert_eq!(without_comments(&a), without_comments(&b), "{name} from {}", source.display());
            assert_eq!(settings(&gif_comments(&a)[0]), settings(&gif_comments(&b)[0]));
            let names = |d: &Path| {
                let mut n: Vec<_> = std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name()).collect();
                n.sort();
                n
            };
            assert_eq!(names(&first_frames), names(&again_frames));
            for frame in names(&first_frames) {
                let (_, p) = png_text_and_pixels(&first_frames.join(&frame));
                let (_, q) = png_text_and_pixels(&again_frames.join(&frame));
                assert!(p == q, "{name}: {frame:?} differs");
            }
        }
    }
}

/// `--print-config` of `args` (run in `dir`), parsed.
fn resolved(dir: &Path, args: &[&str]) -> toml::Table {
    settings(&ok(dir, &with(args, &["--print-config"])))
}

#[test]
fn the_command_line_overrides_the_file() {
    let dir = scratch_dir("settings-precedence");
    std::fs::write(
        dir.join("g.toml"),
        "[grayscott]\npreset = \"worms\"\nfeed = 0.03\nseed = 5\nwidth = 40\nheight = 30\n\
         [run]\nbackend = \"cpu\"\nvariant = \"cpu\"\n[frames]\nfps = 10\npalette = \"viridis\"\n",
    )
    .unwrap();
    let g = |more: &[&str]| resolved(&dir, &with(&["grayscott", "--config", "g.toml"], more));
    let worms = g(&[]);
    let table = &worms["grayscott"];
    assert_eq!(table["feed"].as_float(), Some(0.03), "the file's value over the preset's");
    assert_eq!(table["kill"].as_float(), Some(0.065), "the file's preset fills the rest");
    assert_eq!((table["seed"].as_integer(), table["width"].as_integer()), (Some(5), Some(40)));
    assert_eq!(worms["frames"]["fps"].as_integer(), Some(10));
    assert_eq!(worms["frames"]["frame_every"].as_integer(), Some(50), "the default where neither sets it");

    let over = g(&["--seed", "9", "--kill", "0.06", "--fps", "12", "--height", "16"]);
    let table = &over["grayscott"];
    assert_eq!((table["seed"].as_integer(), table["kill"].as_float()), (Some(9), Some(0.06)));
    assert_eq!((table["width"].as_integer(), table["height"].as_integer()), (Some(40), Some(16)));
    assert_eq!(table["feed"].as_float(), Some(0.03));
    assert_eq!(over["frames"]["fps"].as_integer(), Some(12));
    assert_eq!(over["frames"]["palette"].as_str(), Some("viridis"));

    // A preset on the command line brings its own values; --size its width and height.
    let coral = g(&["--preset", "coral", "--size", "20"]);
    let plain = resolved(&dir, &["grayscott", "--preset", "coral", "--size", "20"]);
    for key in ["preset", "feed", "kill", "du", "dv", "dt", "init", "steps", "width", "height"] {
        assert_eq!(coral["grayscott"][key], plain["grayscott"][key], "{key}");
    }
    assert_eq!(coral["grayscott"]["seed"].as_integer(), Some(5));
    // --backend on the command line replaces the file's backend and variant.
    let auto = g(&["--backend", "auto"]);
    assert_eq!(auto["run"].get("backend").and_then(|v| v.as_str()), Some("auto"));
    assert!(auto["run"].get("variant").is_none(), "{auto:?}");

    // Heat: --alpha on the command line recomputes the default dt; the file's dt otherwise.
    std::fs::write(dir.join("h.toml"), "[heat]\nalpha = 0.5\ndt = 0.01\nnx = 5\n").unwrap();
    let h = |more: &[&str]| {
        resolved(&dir, &with(&["heat", "--config", "h.toml", "--size", "8"], more))["heat"].clone()
    };
    let file = h(&[]);
    assert_eq!((file["dt"].as_float(), file["nx"].as_integer()), (Some(0.01), Some(8)));
    let alpha = h(&["--alpha", "0.25"]);
    let plain = resolved(&dir, &["heat", "--alpha", "0.25", "--size", "8"])["heat"].clone();
    assert_eq!(alpha["dt"], plain["dt"]);
    // A file's cube side, as --size: nx, ny, nz override it; --size on the command line replaces it.
    std::fs::write(dir.join("s.toml"), "[heat]\nsize = 6\nnx = 5\n").unwrap();
    let sized = |more: &[&str]| resolved(&dir, &with(&["heat", "--config", "s.toml"], more))["heat"].clone();
    let n = |table: &toml::Value| ["nx", "ny", "nz"].map(|key| table[key].as_integer());
    assert_eq!(n(&sized(&[])), [Some(5), Some(6), Some(6)]);
    assert_eq!(n(&sized(&["--size", "7"])), [Some(7); 3]);

    // Physarum: the file's parameters over the preset's, a command-line preset over both.
    std::fs::write(dir.join("p.toml"), "[physarum]\npreset = \"jones\"\ndecay = 0.25\nagents = 77\n")
        .unwrap();
    let p =
        |more: &[&str]| resolved(&dir, &with(&["physarum", "--config", "p.toml"], more))["physarum"].clone();
    let file = p(&[]);
    let jones = resolved(&dir, &["physarum", "--preset", "jones"])["physarum"].clone();
    assert_eq!((file["decay"].as_float(), file["agents"].as_integer()), (Some(0.25), Some(77)));
    assert_eq!(file["sensor_dist"], jones["sensor_dist"]);
    let network = p(&["--preset", "network"]);
    let plain = resolved(&dir, &["physarum", "--preset", "network"])["physarum"].clone();
    assert_eq!(
        (network["decay"].clone(), network["agents"].as_integer()),
        (plain["decay"].clone(), Some(77))
    );
}

#[test]
fn print_config_runs_nothing_and_another_version_gets_a_note() {
    let dir = scratch_dir("settings-print-only");
    let text = ok(&dir, &with(GRAYSCOTT, &["--print-config", "--gif", "never.gif", "--png-dir", "never"]));
    assert!(common::files_in(&dir).is_empty(), "--print-config wrote {:?}", common::files_in(&dir));
    std::fs::write(dir.join("old.toml"), text.replace(env!("CARGO_PKG_VERSION"), "0.0.1-old")).unwrap();
    let out = host(&dir, &["grayscott", "--config", "old.toml", "--print-config"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stderr.contains("written by rust-gpu-sim 0.0.1-old"), "{stderr}");
    let out = host(&dir, &["grayscott", "--config", "old.toml", "--steps", "3", "--size", "8"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Text a settings file gives (a preset, a version) is printed with its control characters as
/// escapes: a newline cannot forge a second `error:` line, nor an escape sequence reach the
/// terminal; the forged-version case still runs, with one note line.
#[test]
fn text_from_a_settings_file_cannot_forge_lines_or_drive_the_terminal() {
    let dir = scratch_dir("settings-forged");
    let text = ok(&dir, &with(GRAYSCOTT, &["--print-config"]));
    let preset = text.lines().find(|l| l.starts_with("preset")).expect("a preset line").to_owned();
    let forged = text.replace(&preset, "preset = \"coral\\nerror: forged \\u001b[31m\"");
    std::fs::write(dir.join("forged.toml"), forged).unwrap();
    let out = host(&dir, &["grayscott", "--config", "forged.toml", "--steps", "3", "--size", "8"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("coral\\nerror: forged \\u{1b}[31m") && !stderr.contains('\u{1b}'), "{stderr}");
    let version = text.replace(env!("CARGO_PKG_VERSION"), "9.9\\nerror: forged");
    std::fs::write(dir.join("version.toml"), version).unwrap();
    let out = host(&dir, &["grayscott", "--config", "version.toml", "--print-config"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stderr.lines().count() == 1 && stderr.starts_with("note: "), "{stderr}");
    assert!(stderr.contains("9.9\\nerror: forged"), "{stderr}");
}

/// A settings text past 1 MiB is refused in one line before it is parsed (parsing takes
/// several times its size: a 100 MiB file aborted under a 500 MB memory limit).
#[test]
fn an_oversized_settings_file_is_refused_before_parsing() {
    let dir = scratch_dir("settings-huge");
    let mut text = ok(&dir, &with(GRAYSCOTT, &["--print-config"]));
    text.push_str(&format!("# {}\n", "x".repeat(2 << 20)));
    std::fs::write(dir.join("huge.toml"), text).unwrap();
    let out = host(&dir, &["grayscott", "--config", "huge.toml", "--steps", "3", "--size", "8"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("more than a settings file holds") && stderr.lines().count() == 1, "{stderr}");
}

// Golden texts: what must stay byte-identical while the code that writes it changes (the
// settings documents `serve` records, `--print-config`, `--help`). Each is compared with its
// file in tests/it/golden/; with RUST_GPU_SIM_BLESS set, the file is written instead, to capture
// it from the code before a change, or after a change meant to show (then review its diff):
// `RUST_GPU_SIM_BLESS=1 cargo test -p host --test it -- settings::`. The program's version reads
// `{version}` in the files.

/// Compares `actual` with the golden file `name` (or writes it, with RUST_GPU_SIM_BLESS set).
fn golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/golden").join(name);
    let version = format!("version = \"{}\"", env!("CARGO_PKG_VERSION"));
    let actual = actual.replace(&version, "version = \"{version}\"");
    if std::env::var_os("RUST_GPU_SIM_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if actual != expected {
        let line = actual.lines().zip(expected.lines()).position(|(a, e)| a != e);
        panic!("{name} differs from {} (first differing line: {line:?}); actual:\n{actual}", path.display());
    }
}

/// `model`'s settings document and batch command line, as `serve` records them on the CPU, for
/// its defaults changed by each of `changes` (JSON objects of the page's values), with each
/// palette, steps per frame and step count of `runs`.
fn serve_records<M: host_cli::serve::LiveModel>(
    model: &M,
    changes: &[&str],
    runs: &[(&str, u32, u32)],
) -> String
where
    M::Settings: serde::Serialize + serde::de::DeserializeOwned,
{
    use simulations::Device;
    let start = model.defaults(&Device::Cpu);
    let mut out = String::new();
    for change in changes {
        let mut values = serde_json::to_value(&start.settings).unwrap();
        let parsed: serde_json::Map<String, serde_json::Value> = serde_json::from_str(change).unwrap();
        values.as_object_mut().unwrap().extend(parsed);
        let settings: M::Settings = serde_json::from_value(values).unwrap();
        for &(palette, steps_per_frame, steps) in runs {
            let recorded = host_cli::serve::Recorded { model: &settings, palette, steps_per_frame };
            let document = model.record(&recorded, steps, &Device::Cpu);
            let command = model.command(&recorded, steps);
            out += &format!(
                "==== {} {change} palette {palette}, {steps_per_frame} steps per frame, {steps} steps\n",
                model.name()
            );
            out += &format!("command: {command:?}\n");
            match document {
                Ok(text) => out += &text,
                Err(e) => out += &format!("error: {e}\n"),
            }
        }
    }
    out
}

#[test]
fn serve_records_the_documents_it_recorded_before() {
    use host_cli::serve::builtin::{GrayScottLive, HeatLive, PhysarumLive};
    let runs = [("cyberpunk", 20, 0), ("magma", 1, 1), ("slime", 37, 123_456)];
    let mut out = serve_records(
        &GrayScottLive,
        &[
            "{}",
            r#"{"preset": "worms", "width": 300, "height": 200, "feed": 0.0367, "kill": 0.0611}"#,
            r#"{"du": 0.2097, "dv": 0.105, "dt": 0.9, "init": "spots", "seed": 18446744073709551615}"#,
            r#"{"feed": 0.1, "kill": 0.030000001, "seed": 9223372036854775808}"#,
        ],
        &runs,
    );
    out += &serve_records(
        &HeatLive,
        &[
            "{}",
            r#"{"size": 33, "alpha": 0.35, "boundary_value": 1.5}"#,
            r#"{"init": "blobs", "seed": 12345678901234}"#,
        ],
        &runs,
    );
    out += &serve_records(
        &PhysarumLive,
        &[
            "{}",
            r#"{"preset": "jones", "width": 200, "height": 100, "agents": 5000}"#,
            r#"{"sensor_dist": 11.5, "sensor_angle": 0.7853982, "turn_angle": 0.3, "step_size": 1.25}"#,
            r#"{"deposit": 0.2, "diffuse": 0.6, "decay": 0.05, "init": "disc", "seed": 0}"#,
        ],
        &runs,
    );
    golden("serve_documents.txt", &out);
}

/// `--print-config` of each simulation for a few command lines, without the recorded command
/// line (which names this test's binary).
#[test]
fn print_config_prints_what_it_printed_before() {
    let dir = scratch_dir("settings-golden-print-config");
    let lines: &[&[&str]] = &[
        GRAYSCOTT,
        &["grayscott"],
        &["grayscott", "--preset", "mitosis", "--width", "40", "--feed", "0.031", "--init", "spots"],
        &["grayscott", "--backend", "cuda", "--variant", "tiled", "--seed", "18446744073709551615"],
        &["grayscott", "--fps", "9", "--palette", "magma", "--frame-every", "3", "--dt", "0.5"],
        HEAT,
        &["heat"],
        &[
            "heat",
            "--nx",
            "10",
            "--ny",
            "12",
            "--nz",
            "14",
            "--h",
            "0.5",
            "--init",
            "sine",
            "--variant",
            "cpu",
        ],
        &["heat", "--dt", "0.01", "--boundary-value", "2", "--seed", "3"],
        PHYSARUM,
        &["physarum"],
        &["physarum", "--sensor-angle", "0.5", "--jitter", "0.1", "--sensing", "bilinear", "--init", "disc"],
        &["physarum", "--width", "64", "--height", "32", "--decay", "0.2", "--image-strength", "2"],
    ];
    let mut out = String::new();
    for line in lines {
        let text = ok(&dir, &with(line, &["--print-config"]));
        let kept: Vec<&str> = text.lines().filter(|l| !l.starts_with("command = ")).collect();
        out += &format!("==== {line:?}\n{}\n", kept.join("\n"));
    }
    golden("print_config.txt", &out);
}

/// `--help` of the command and of each simulation and `serve`.
#[test]
fn help_says_what_it_said_before() {
    let dir = scratch_dir("settings-golden-help");
    for command in ["grayscott", "heat", "physarum", "serve"] {
        golden(&format!("help_{command}.txt"), &ok(&dir, &[command, "--help"]));
    }
    golden("help.txt", &ok(&dir, &["--help"]));
}
