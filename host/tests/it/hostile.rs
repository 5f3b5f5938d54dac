//! The `host` binary against a hostile user (CPU backend): bad options, bad paths, clashing
//! outputs, special files, signals, closed pipes. Each refusal is one `error:` line, exit
//! status 1, before any work, and the directory is left exactly as it was.

use crate::common;

use std::{
    io::Read,
    os::unix::{fs::FileTypeExt, process::ExitStatusExt},
    path::{Path, PathBuf},
    process::{Command, Output, Stdio},
    time::{Duration, Instant},
};

fn host_command(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_rust-gpu-sim"));
    command.current_dir(dir).args(args);
    command
}

fn host(dir: &Path, args: &[&str]) -> Output {
    host_command(dir, args).output().expect("run host")
}

fn scratch(name: &str) -> PathBuf {
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("hostile-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Every entry under `dir` (recursively, links not followed) with its kind and size.
fn snapshot(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let entry = entry.unwrap();
            let meta = std::fs::symlink_metadata(entry.path()).unwrap();
            let name = entry.path().strip_prefix(dir).unwrap().display().to_string();
            if meta.is_dir() {
                stack.push(entry.path());
            }
            out.push(format!(
                "{name} {:?} {}",
                meta.file_type(),
                if meta.is_file() { meta.len() } else { 0 }
            ));
        }
    }
    out.sort();
    out
}

/// Prepares a case's directory.
type Prepare = fn(&Path);

fn nothing(_: &Path) {}

fn garbage_image(dir: &Path) {
    std::fs::write(dir.join("seed.png"), b"not a png").unwrap();
}

fn real_image(dir: &Path) {
    image::GrayImage::from_fn(8, 8, |x, _| image::Luma([(x * 30) as u8])).save(dir.join("seed.png")).unwrap();
}

fn sub_dir(dir: &Path) {
    std::fs::create_dir(dir.join("sub")).unwrap();
}

fn plain_file(dir: &Path) {
    std::fs::write(dir.join("file.txt"), b"keep me").unwrap();
}

fn frames_with_notes(dir: &Path) {
    std::fs::create_dir(dir.join("frames")).unwrap();
    std::fs::write(dir.join("frames/frame_00000.png"), b"old").unwrap();
    std::fs::write(dir.join("frames/notes.txt"), b"mine").unwrap();
}

/// An earlier run's frames, one of whose places a directory has taken.
fn blocked_frame(dir: &Path) {
    std::fs::create_dir(dir.join("frames")).unwrap();
    std::fs::write(dir.join("frames/frame_00000.png"), b"old").unwrap();
    std::fs::create_dir(dir.join("frames/frame_00002.png")).unwrap();
}

fn dangling_link(dir: &Path) {
    std::os::unix::fs::symlink(dir.join("nowhere/x.gif"), dir.join("link.gif")).unwrap();
}

fn config_unknown_key(dir: &Path) {
    std::fs::write(dir.join("c.toml"), "[grayscott]\nfeed = 0.05\nfed = 0.06\n").unwrap();
}

fn config_wrong_type(dir: &Path) {
    std::fs::write(dir.join("c.toml"), "[heat]\nalpha = \"hot\"\n").unwrap();
}

fn config_of_heat(dir: &Path) {
    std::fs::write(dir.join("c.toml"), "[heat]\nalpha = 0.5\n").unwrap();
}

fn config_bad_values(dir: &Path) {
    std::fs::write(
        dir.join("c.toml"),
        "[physarum]\nsensing = \"far\"\n[run]\nvariant = \"fused\"\n[frames]\nfps = 0\n",
    )
    .unwrap();
}

fn config_bad_variant(dir: &Path) {
    std::fs::write(dir.join("c.toml"), "[run]\nvariant = \"warp\"\n").unwrap();
}

fn config_out_of_range(dir: &Path) {
    std::fs::write(dir.join("c.toml"), "[frames]\nfps = 0\n[grayscott]\nseed = -3\n").unwrap();
}

fn config_zero_fps(dir: &Path) {
    std::fs::write(dir.join("c.toml"), "[frames]\nfps = 0\n").unwrap();
}

fn config_not_text(dir: &Path) {
    std::fs::write(dir.join("c.toml"), b"\xff\xfe\x00binary").unwrap();
    image::RgbImage::new(4, 4).save(dir.join("plain.png")).unwrap();
}

/// Files that are not settings: another program's GIF with a comment (as barkley's GIF
/// records its own settings line), a binary file that is valid UTF-8, prose.
fn config_not_toml(dir: &Path) {
    let mut gif = Vec::new();
    {
        let mut encoder = gif::Encoder::new(&mut gif, 1, 1, &[0, 0, 0, 255, 255, 255]).unwrap();
        encoder
            .write_raw_extension(gif::AnyExtension(0xFE), &[b"barkley 256x256 Model { a: 0.75 }"])
            .unwrap();
        encoder
            .write_frame(&gif::Frame { width: 1, height: 1, buffer: vec![0].into(), ..Default::default() })
            .unwrap();
    }
    std::fs::write(dir.join("other.gif"), gif).unwrap();
    std::fs::write(dir.join("binary.dat"), b"\x00\x01\x02 some bytes \x7f").unwrap();
    std::fs::write(dir.join("notes.txt"), "Settings for tomorrow:\nbigger grid, more steps.\n").unwrap();
}

/// Runs `host` in `dir` (a preparation step), which must succeed.
fn run_ok(dir: &Path, line: &str) {
    let out = host(dir, &line.split_whitespace().collect::<Vec<_>>());
    assert!(out.status.success(), "{line}: {}", String::from_utf8_lossy(&out.stderr));
}

/// `c.ck`: a Gray-Scott checkpoint (16², 2 steps) cut off before its end.
fn truncated_checkpoint(dir: &Path) {
    run_ok(dir, "grayscott --backend cpu --size 16 --steps 2 --checkpoint c.ck");
    let bytes = std::fs::read(dir.join("c.ck")).unwrap();
    std::fs::write(dir.join("c.ck"), &bytes[..bytes.len() / 2]).unwrap();
}

/// `c.ck`: a checkpoint of a heat run.
fn heat_checkpoint(dir: &Path) {
    run_ok(dir, "heat --backend cpu --size 8 --steps 2 --checkpoint c.ck");
}

/// `c.ck`: a Gray-Scott checkpoint of a 20² grid, after 2 steps.
fn other_size_checkpoint(dir: &Path) {
    run_ok(dir, "grayscott --backend cpu --size 20 --steps 2 --checkpoint c.ck");
}

/// `c.ck`: a Gray-Scott checkpoint of a 16² grid after 8 steps.
fn late_checkpoint(dir: &Path) {
    run_ok(dir, "grayscott --backend cpu --size 16 --steps 8 --checkpoint c.ck");
}

/// `c.ck`: not a checkpoint at all.
fn foreign_checkpoint(dir: &Path) {
    std::fs::write(dir.join("c.ck"), b"PK\x03\x04 a zip, not a checkpoint").unwrap();
}

/// Small, fast defaults per subcommand, added unless the case sets the option (so a case that
/// is wrongly accepted finishes quickly).
fn defaults(subcommand: &str) -> &'static [(&'static str, &'static str)] {
    match subcommand {
        "grayscott" => &[("--backend", "cpu"), ("--size", "16"), ("--steps", "4")],
        "heat" => &[("--backend", "cpu"), ("--size", "8"), ("--steps", "4")],
        "physarum" => &[("--backend", "cpu"), ("--size", "16"), ("--agents", "50"), ("--steps", "4")],
        _ => &[],
    }
}

/// (subcommand line, expected part of the message, preparation). The first word is the
/// subcommand (`-` for none).
const CASES: &[(&str, &str, Prepare)] = &[
    // The argument parser: one line, status 1, like every other refusal.
    ("grayscott --nope", "unexpected argument '--nope'", nothing),
    ("grayscott --steps abc", "invalid value 'abc' for '--steps", nothing),
    ("grayscott --steps -5", "invalid value '-5' for '--steps", nothing),
    ("grayscott --size 99999999999", "invalid value '99999999999'", nothing),
    ("grayscott --feed", "a value is required for '--feed", nothing),
    ("grayscott --fps 1e3", "invalid value '1e3' for '--fps", nothing),
    ("heat --init nope", "invalid value 'nope' for '--init", nothing),
    ("heat --fp 3", "'--fps'", nothing),
    ("physarum --sensing far", "invalid value 'far' for '--sensing", nothing),
    ("bench nope", "unrecognized subcommand 'nope'", nothing),
    ("-", "a subcommand is missing", nothing),
    // Gray-Scott values.
    ("grayscott --size 0", "--width must be between 1 and 65535", nothing),
    ("grayscott --width 70000", "--width must be between 1 and 65535", nothing),
    ("grayscott --steps 0", "--steps must be at least 1", nothing),
    ("grayscott --frame-every 0", "--frame-every must be at least 1", nothing),
    ("grayscott --feed NaN", "--feed must be a finite, non-negative number", nothing),
    ("grayscott --feed -inf", "--feed must be a finite, non-negative number, got -inf", nothing),
    ("grayscott --kill inf", "--kill must be a finite, non-negative number", nothing),
    ("grayscott --du -0.1", "--du must be a finite, non-negative number", nothing),
    ("grayscott --dt 5", "stability limit", nothing),
    ("grayscott --dt 0", "--dt must be greater than 0", nothing),
    ("grayscott --feed 1e7", "--feed must be a finite number within ±1e6", nothing),
    ("grayscott --du 0 --dv 0 --dt 1e38", "--dt must be a finite number within ±1e6", nothing),
    ("grayscott --fps 0", "--fps must be between 1 and 50", nothing),
    ("grayscott --fps 51", "--fps must be between 1 and 50", nothing),
    ("grayscott --preset nope", "valid presets: coral", nothing),
    ("grayscott --palette nope", "valid palettes: cyberpunk", nothing),
    ("grayscott --init-image /nonexistent/seed.png", "cannot read /nonexistent/seed.png", nothing),
    ("grayscott --init-image seed.png --gif o.gif", "cannot read seed.png", garbage_image),
    ("grayscott --variant fused", "--variant fused runs on a CUDA GPU", nothing),
    ("grayscott --backend cuda --variant cpu", "--variant cpu runs on the CPU", nothing),
    // Gray-Scott outputs.
    ("grayscott --gif missing/out.gif", "the directory missing does not exist", nothing),
    ("grayscott --gif out.gif/", "ends with '/'", nothing),
    ("grayscott --gif LONG", "longer than 255 bytes", nothing),
    ("grayscott --gif sub", "it is a directory", sub_dir),
    ("grayscott --gif link.gif", "symbolic link to a missing file", dangling_link),
    ("grayscott --gif a.gif --png-dir a.gif", "--gif and --png-dir both name a.gif", nothing),
    ("grayscott --gif out.gif --png-dir ./out.gif", "both name", nothing),
    (
        "grayscott --png-dir frames --gif frames/x.gif",
        "--gif frames/x.gif is inside --png-dir frames",
        nothing,
    ),
    ("grayscott --png-dir file.txt", "it exists and is not a directory", plain_file),
    ("grayscott --png-dir frames", "it holds notes.txt besides frames", frames_with_notes),
    ("grayscott --png-dir missing/frames", "the directory missing does not exist", nothing),
    ("grayscott --gif file.txt/", "ends with '/'", plain_file),
    // Heat values.
    ("heat --size 2", "--nx must be between 3", nothing),
    ("heat --nz 70000", "--nz must be between 3 and 65536", nothing),
    ("grayscott --peer-timeout nan", "--peer-timeout must be a number of seconds above 0", nothing),
    ("grayscott --peer-timeout -inf", "--peer-timeout must be a number of seconds above 0", nothing),
    ("heat --peer-timeout 0", "--peer-timeout must be a number of seconds above 0", nothing),
    ("grayscott --peer-timeout 1e9", "at most 86400", nothing),
    ("grayscott --nccl-id-file id", "--nccl-id-file is for NCCL runs", nothing),
    ("grayscott --transport tcp", "invalid value 'tcp' for '--transport", nothing),
    ("heat --nz 5000", "the box has 5000 z planes, above the 4096 one part holds", nothing),
    ("heat --alpha -1", "--alpha must be a finite number above 0", nothing),
    ("heat --alpha nan", "--alpha must be a finite number above 0", nothing),
    ("heat --h 0", "--h must be a finite number above 0", nothing),
    ("heat --alpha 1e-30", "--alpha / --h² = ", nothing),
    ("heat --h 1e14", "--alpha / --h² = ", nothing),
    ("heat --alpha 1e30", "rescale --alpha or --h", nothing),
    ("heat --dt 0.5", "stability limit", nothing),
    ("heat --dt -1", "--dt must be a finite number above 0", nothing),
    ("heat --boundary-value 1e38", "--boundary-value must be a finite number within ±1e15", nothing),
    ("heat --boundary-value -inf", "--boundary-value must be a finite number", nothing),
    ("heat --steps 0", "--steps must be at least 1", nothing),
    ("heat --fps 0", "--fps must be between 1 and 50", nothing),
    ("heat --fps 1000", "--fps must be between 1 and 50", nothing),
    ("heat --frame-every 0", "--frame-every must be at least 1", nothing),
    ("heat --palette nope", "valid palettes", nothing),
    ("heat --variant tiled", "--variant tiled runs on a CUDA GPU", nothing),
    ("heat --backend cuda --variant cpu", "--variant cpu runs on the CPU", nothing),
    // Heat outputs.
    ("heat --png out.png --gif out.png", "--gif and --png both name out.png", nothing),
    ("heat --png missing/s.png", "does not exist", nothing),
    ("heat --png s.png/", "ends with '/'", nothing),
    ("heat --png-dir f --gif f", "both name", nothing),
    // Physarum values.
    ("physarum --agents 0", "--agents must be between 1", nothing),
    ("physarum --size 0", "--width must be between 1", nothing),
    ("physarum --steps 0", "--steps must be at least 1", nothing),
    ("physarum --decay 1", "--decay must be at least 0 and below 1", nothing),
    ("physarum --diffuse 2", "--diffuse must be between 0 and 1", nothing),
    ("physarum --deposit -1", "--deposit must be 0 or more", nothing),
    ("physarum --deposit 1e38", "lower --deposit", nothing),
    ("physarum --deposit 1e30 --decay 0", "× --agents 50 × 4 steps", nothing),
    ("physarum --init-image seed.png --image-strength 1e38", "lower --image-strength", real_image),
    ("physarum --sensor-angle 10", "--sensor-angle must be within ±2π", nothing),
    ("physarum --sensor-dist -inf", "--sensor-dist must be a finite number", nothing),
    ("physarum --jitter nan", "--jitter must be a finite number", nothing),
    (
        "physarum --step-size 1e9",
        "--step-size 1000000000 is longer than the grid's shorter side, 16 cells",
        nothing,
    ),
    (
        "physarum --size 2",
        "--sensor-dist 15 is longer than the grid's shorter side, 2 cells (--size",
        nothing,
    ),
    ("physarum --height 4 --sensor-dist 4.5", "--sensor-dist 4.5 is longer", nothing),
    ("heat --h 1e20 --alpha 1e30", "--h must be between 1e-15 and 1e15", nothing),
    ("heat --h 1e-20", "--h must be between", nothing),
    ("physarum --fps 0", "--fps must be between 1 and 50", nothing),
    ("physarum --variant optimized", "--variant optimized runs on a CUDA GPU", nothing),
    ("physarum --init-image seed.png", "cannot read seed.png", garbage_image),
    // Physarum outputs and modes.
    ("physarum --png-dir out --gif out", "both name", nothing),
    ("physarum --plot p.png", "--plot and --data belong to --sensitivity", nothing),
    ("physarum --sensitivity --gif x.gif", "not frames", nothing),
    ("physarum --sensitivity --data d.tsv --plot d.tsv", "--plot and --data both name d.tsv", nothing),
    ("physarum --sensitivity --data missing/d.tsv", "does not exist", nothing),
    ("physarum --sensitivity --epsilon 100", "--epsilon must be a finite number within", nothing),
    ("physarum --sensitivity --epsilon 0", "--epsilon must be a finite non-zero number", nothing),
    ("physarum --toy-model --beta 1", "--beta must be in (0, 1)", nothing),
    ("physarum --toy-model --alpha 1e300", "--alpha must be above 0 and at most 1e100", nothing),
    ("physarum --toy-model --kappa -inf", "--kappa must be in (0, 1), got -inf", nothing),
    // Settings files: one line naming the file (and the line), nothing written.
    (
        "grayscott --config c.toml --gif o.gif",
        "--config c.toml: line 3: unknown field `fed`",
        config_unknown_key,
    ),
    (
        "heat --config c.toml --gif o.gif",
        "--config c.toml: line 2: invalid type: string \"hot\"",
        config_wrong_type,
    ),
    ("grayscott --config c.toml --gif o.gif", "holds settings of `rust-gpu-sim heat`", config_of_heat),
    ("grayscott --config missing.toml --gif o.gif", "cannot read --config missing.toml", nothing),
    ("grayscott --config sub --gif o.gif", "cannot read --config sub: it is a directory", sub_dir),
    ("physarum --config c.toml --gif o.gif", "unknown value 'far', expected one of: ", config_bad_values),
    (
        "heat --config c.toml --gif o.gif",
        "unknown variant 'warp' in [run]; valid variants: cpu",
        config_bad_variant,
    ),
    ("grayscott --config c.toml --gif o.gif", "line 4: invalid value: integer `-3`", config_out_of_range),
    ("grayscott --config c.toml --gif o.gif", "not a UTF-8 TOML file, nor a GIF or PNG", config_not_text),
    ("grayscott --config plain.png --gif o.gif", "this image records no settings", config_not_text),
    // Not a settings file at all: said so, not a TOML syntax error at line 1.
    (
        "grayscott --config other.gif --gif o.gif",
        "the text this image records is not the settings",
        config_not_toml,
    ),
    (
        "grayscott --config binary.dat --gif o.gif",
        "--config binary.dat: a binary file, not a TOML",
        config_not_toml,
    ),
    (
        "grayscott --config notes.txt --gif o.gif",
        "notes.txt: not a TOML settings file: no `key = value` line",
        config_not_toml,
    ),
    ("grayscott --config c.toml --gif o.gif", "--fps must be between 1 and 50", config_zero_fps),
    ("physarum --toy-model --print-config", "--toy-model has none", nothing),
    // Bench: refused before any GPU work.
    ("bench grayscott --repeats 1", "--repeats must be at least 3", nothing),
    ("bench grayscott --sizes 0", "--sizes must list grid sides", nothing),
    ("bench grayscott --variants cpu", "bench times GPU variants", nothing),
    ("bench grayscott --json r.json --plot r.json", "--json and --plot both name r.json", nothing),
    ("bench grayscott --sizes -5", "invalid value '-5' for '--sizes", nothing),
    ("bench heat --sizes 2", "--sizes must list grid sides between 3", nothing),
    ("bench heat --json missing/r.json", "does not exist", nothing),
    ("bench physarum --agents 0", "--agents must list counts", nothing),
    ("bench plot --json missing.json --out x.png", "cannot read missing.json", nothing),
    // The parameter map (its grid is --map-tiles and --map-tile-size: no --size default).
    ("grayscott --map --map-tiles 0", "--map-tiles must be between 1 and 255", nothing),
    ("grayscott --map --map-tiles 256", "--map-tiles must be between 1 and 255", nothing),
    ("grayscott --map --map-tile-size 4", "--map-tile-size must be between 8 and 1024", nothing),
    ("grayscott --map --map-tile-size -3", "invalid value '-3' for '--map-tile-size", nothing),
    ("grayscott --map --feed-range 0.05", "expected LO,HI", nothing),
    ("grayscott --map --feed-range 0.05,abc", "'abc' is not a number", nothing),
    (
        "grayscott --map --feed-range 0.09,0.01",
        "--feed-range must be two finite, non-negative numbers",
        nothing,
    ),
    ("grayscott --map --kill-range nan,0.07", "--kill-range must be two finite", nothing),
    ("grayscott --map --kill-range 0.03,1e7", "--kill-range must be a finite number within ±1e6", nothing),
    ("grayscott --map --dt 5", "stability limit", nothing),
    ("grayscott --map --steps 0", "--steps must be at least 1", nothing),
    ("grayscott --map --palette nope", "valid palettes", nothing),
    ("grayscott --map missing/m.png", "the directory missing does not exist", nothing),
    ("grayscott --map sub", "it is a directory", sub_dir),
    ("grayscott --map m.png/", "ends with '/'", nothing),
    ("grayscott --map --gif x.gif", "cannot be used with '--gif", nothing),
    ("grayscott --map --size 64", "cannot be used with '--size", nothing),
    ("grayscott --map --feed 0.03", "cannot be used with '--feed", nothing),
    ("grayscott --map --variant fused", "cannot be used with '--variant", nothing),
    (
        "grayscott --map-tiles 8",
        "--map-tiles, --map-tile-size, --feed-range and --kill-range belong to --map",
        nothing,
    ),
    ("grayscott --feed-range 0.01,0.02", "belong to --map", nothing),
    // Video, saved state, checkpoints and restart.
    (
        "grayscott --mp4 missing/v.mp4",
        "--mp4: cannot write missing/v.mp4: the directory missing does not exist",
        nothing,
    ),
    ("grayscott --mp4 sub", "it is a directory", sub_dir),
    ("grayscott --gif v.mp4 --mp4 v.mp4", "--gif and --mp4 both name v.mp4", nothing),
    ("heat --mp4", "--mp4: frames of 8x8 are too small for the H.264 encoder", nothing),
    ("grayscott --map --mp4", "cannot be used with '--mp4", nothing),
    ("physarum --sensitivity --mp4", "not frames", nothing),
    (
        "grayscott --save missing/s.npz",
        "--save: cannot write missing/s.npz: the directory missing does not exist",
        nothing,
    ),
    ("grayscott --save /proc/s.npz", "--save: cannot write /proc/s.npz", nothing),
    ("grayscott --save sub", "it is a directory", sub_dir),
    ("grayscott --save s.vti", "--save s.vti: name the file .npz, .npy", nothing),
    ("grayscott --save s.txt", "name the file .npz, .npy", nothing),
    ("heat --save s.csv", "name the file .npz, .npy, .vti", nothing),
    ("grayscott --save-every 2", "--save-every needs --save PATH", nothing),
    ("grayscott --save s.npz --save-every 0", "--save-every must be at least 1", nothing),
    ("physarum --save-agents", "--save-agents needs --save PATH", nothing),
    ("physarum --save s.vti", "name the file .npz, .npy", nothing),
    ("physarum --sensitivity --save s.npz", "drop --save/--checkpoint/--resume", nothing),
    ("grayscott --save s.npz --checkpoint s.npz", "--save and --checkpoint both name s.npz", nothing),
    ("grayscott --gif s.gif --checkpoint ./s.gif", "--gif and --checkpoint both name", nothing),
    ("heat --png s.png --save s.png", "both name s.png", nothing),
    // The names --save derives from its own (one .npy per field, the --save-every series)
    // clash too.
    (
        "grayscott --save s.npy --gif s_u.npy",
        "--gif s_u.npy is a name that --save s.npy writes (one s_FIELD.npy per field)",
        nothing,
    ),
    (
        "grayscott --save s.npz --save-every 2 --gif s_00000002.npz",
        "--gif s_00000002.npz is a name that --save s.npz writes (the series s_NNNNNNNN.npz)",
        nothing,
    ),
    (
        "grayscott --save s.npz --save-every 2 --checkpoint ./s_00000004.npz",
        "the series s_NNNNNNNN.npz",
        nothing,
    ),
    ("grayscott --save s.npy --save-every 2 --png s_00000002_v.npy", "s_NNNNNNNN_FIELD.npy", nothing),
    ("physarum --save s.npy --png-dir s_trail.npy", "--png-dir s_trail.npy is a name that --save", nothing),
    ("grayscott --checkpoint-every 2", "--checkpoint-every needs --checkpoint PATH", nothing),
    ("grayscott --checkpoint c.ck --checkpoint-every 0", "--checkpoint-every must be at least 1", nothing),
    ("grayscott --checkpoint missing/c.ck", "the directory missing does not exist", nothing),
    ("grayscott --checkpoint /proc/version", "--checkpoint: cannot write /proc/version", nothing),
    ("grayscott --resume missing.ck --save s.npz", "--resume: cannot read missing.ck", nothing),
    ("grayscott --resume c.ck --save s.npz --gif g.gif", "truncated", truncated_checkpoint),
    ("grayscott --resume c.ck --save s.npz", "not a checkpoint", foreign_checkpoint),
    ("grayscott --resume c.ck --save s.npz --mp4", "this is a heat checkpoint", heat_checkpoint),
    ("grayscott --resume c.ck --save s.npz --checkpoint c.ck", "20x20", other_size_checkpoint),
    ("grayscott --resume c.ck --feed 0.03 --save s.npz", "feed", late_checkpoint),
    ("grayscott --resume c.ck --steps 8 --save s.npz", "the checkpoint is at step 8", late_checkpoint),
    ("physarum --resume c.ck --save s.npz", "this is a heat checkpoint", heat_checkpoint),
    ("heat --resume c.ck --save s.vti", "this is a grayscott checkpoint", late_checkpoint),
    // Inputs without end: read up to a bound, then one line (not until memory runs out).
    ("grayscott --config /dev/zero", "more than 1024 MiB came through it", nothing),
    ("bench plot --json /dev/zero --out p.png", "more than 64 MiB came through it", nothing),
    // The entry that blocks a frame is named, not its directory.
    (
        "grayscott --frame-every 2 --png-dir frames",
        "frames/frame_00002.png: it is not a regular file",
        blocked_frame,
    ),
    // A negative port gets the range, as --port=-1 does.
    ("serve --port -1", "-1 is not in 0..=65535", nothing),
    ("serve --port=-1", "-1 is not in 0..=65535", nothing),
    // On the CPU, NCCL is not looked for: the CPU is named first.
    ("grayscott --transport nccl --overlap", "this run is on the CPU", nothing),
    ("heat --transport nccl --nccl-id-file id", "this run is on the CPU", nothing),
];

#[test]
fn hostile_invocations_are_refused_with_one_line_and_no_trace() {
    assert!(CASES.len() >= 60, "{} cases", CASES.len());
    let mut failures = Vec::new();
    for (k, &(line, expected, prepare)) in CASES.iter().enumerate() {
        let dir = scratch(&format!("case{k}"));
        prepare(&dir);
        let before = snapshot(&dir);
        // LONG: a 256-byte file name, one byte over the limit.
        let long = format!("{}.gif", "n".repeat(252));
        let words: Vec<&str> = line
            .split_whitespace()
            .map(|w| if w == "LONG" { long.as_str() } else { w })
            .filter(|w| *w != "-")
            .collect();
        // The subcommand, the defaults the case does not set, then the case's options (last,
        // so that an option missing its value is at the end).
        let mut args: Vec<&str> = words.iter().take(1).copied().collect();
        for &(key, value) in defaults(words.first().copied().unwrap_or("")) {
            if !words.contains(&key) && !(key == "--size" && words.contains(&"--map")) {
                args.extend([key, value]);
            }
        }
        args.extend(words.iter().skip(1));
        let out = host(&dir, &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = stderr.lines().collect();
        let problem = if out.status.code() != Some(1) {
            Some(format!("status {:?}", out.status))
        } else if lines.len() != 1 || !lines[0].starts_with("error: ") {
            Some("not one `error:` line".into())
        } else if !stderr.contains(expected) {
            Some(format!("message lacks {expected:?}"))
        } else if snapshot(&dir) != before {
            Some(format!("directory changed: {:?} -> {:?}", before, snapshot(&dir)))
        } else {
            None
        };
        if let Some(problem) = problem {
            failures.push(format!("`{line}`: {problem}; stderr {stderr:?}"));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}

/// Waits until `ready` holds, for at most a minute.
fn wait_for(mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(start.elapsed() < Duration::from_secs(60), "timed out");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether process `pid` has encoded a frame for `frames`: its anonymous spill file (in
/// `frames`, or in its parent while `frames` does not exist) holds bytes.
fn first_frame_written(pid: u32, frames: &Path) -> bool {
    let spill_dir = if frames.is_dir() { frames } else { frames.parent().unwrap() };
    common::spill_file_size(&pid.to_string(), spill_dir).is_some_and(|bytes| bytes > 0)
}

/// An MP4 or a `.npz` (written with seeks) into a pipe is refused before the run, in one line;
/// it failed only after the whole run, with "Illegal seek", leaving its reader half a file.
#[test]
fn seeking_outputs_into_a_pipe_are_refused_before_the_run() {
    let dir = scratch("pipe-outputs");
    assert!(
        Command::new("mkfifo")
            .arg(dir.join("pipe.mp4"))
            .arg(dir.join("pipe.npz"))
            .status()
            .unwrap()
            .success()
    );
    for args in [["--mp4", "pipe.mp4"], ["--save", "pipe.npz"]] {
        let mut child = host_command(
            &dir,
            &["grayscott", "--backend", "cpu", "--size", "16", "--steps", "2", args[0], args[1]],
        )
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
        // Refused at once; a run that opened the pipe would wait for a reader: stopped then.
        let start = Instant::now();
        let exit = loop {
            if let Some(exit) = child.try_wait().unwrap() {
                break exit;
            }
            if start.elapsed() > Duration::from_secs(20) {
                child.kill().unwrap();
                panic!("{args:?}: the run opened the pipe instead of refusing it");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut stderr = String::new();
        std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
        assert_eq!(exit.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains("a pipe cannot take") && stderr.lines().count() == 1, "{args:?}: {stderr}");
    }
}

/// A signal that arrives while the last output is being put in place (its handler waiting for
/// the name to be in place) still ends the run with its line and status, not with exit 0 and
/// a cut line (the program returning from `main` under the handler).
#[test]
fn a_signal_during_the_last_commit_still_ends_the_run_with_its_status() {
    let dir = scratch("signal-last-commit");
    let mut child = host_command(
        &dir,
        &["grayscott", "--backend", "cpu", "--size", "16", "--steps", "2", "--png", "o.png"],
    )
    .env(simulations::outfile::HOLD_AFTER_NAMING_VAR, "1500")
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    wait_for(|| dir.join("o.png").exists());
    let sent = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status().unwrap();
    assert!(sent.success());
    let exit = child.wait().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert_eq!(exit.code(), Some(143), "{stderr}");
    assert!(
        stderr.ends_with("error: interrupted by SIGTERM; the run's unfinished outputs were removed\n"),
        "{stderr:?}"
    );
}

#[test]
fn signals_remove_the_runs_temporaries_and_give_the_conventional_status() {
    for (signal, name, status) in [("INT", "SIGINT", 130), ("TERM", "SIGTERM", 143), ("HUP", "SIGHUP", 129)] {
        let dir = scratch(&format!("signal-{name}"));
        // An earlier run's frames, which an interrupted run must leave as they are.
        std::fs::create_dir(dir.join("old")).unwrap();
        std::fs::write(dir.join("old/frame_00000.png"), b"earlier run").unwrap();
        let before = snapshot(&dir);
        for png_dir in ["frames", "old"] {
            let mut child = host_command(
                &dir,
                &[
                    "grayscott",
                    "--backend",
                    "cpu",
                    "--size",
                    "64",
                    "--steps",
                    "4000000",
                    "--frame-every",
                    "1",
                    "--gif",
                    "out.gif",
                    "--png-dir",
                    png_dir,
                ],
            )
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
            wait_for(|| first_frame_written(child.id(), &dir.join(png_dir)));
            let sent =
                Command::new("kill").arg(format!("-{signal}")).arg(child.id().to_string()).status().unwrap();
            assert!(sent.success());
            let exit = child.wait().unwrap();
            let mut stderr = String::new();
            child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
            assert_eq!(exit.code(), Some(status), "{name}: {exit:?}, {stderr}");
            assert_eq!(stderr.lines().count(), 1, "{name}: {stderr}");
            assert!(stderr.starts_with(&format!("error: interrupted by {name}")), "{stderr}");
            assert_eq!(snapshot(&dir), before, "{name} --png-dir {png_dir}: the directory is as before");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn a_reused_png_dir_holds_only_the_new_runs_frames() {
    let dir = scratch("reuse");
    let run = |steps: &str| {
        let out = host(
            &dir,
            &[
                "grayscott",
                "--backend",
                "cpu",
                "--size",
                "16",
                "--steps",
                steps,
                "--frame-every",
                "2",
                "--png-dir",
                "f",
            ],
        );
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let mut names: Vec<String> = std::fs::read_dir(dir.join("f"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    };
    assert_eq!(run("10").len(), 5);
    assert_eq!(run("4"), ["frame_00000.png", "frame_00001.png"]);
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

#[test]
fn device_nodes_are_written_not_replaced() {
    if !is_root() {
        eprintln!("skipped: mknod needs root");
        return;
    }
    let dir = scratch("device");
    for (name, minor) in [("null", "3"), ("full", "7")] {
        let made = Command::new("mknod").arg(dir.join(name)).args(["c", "1", minor]).status().unwrap();
        assert!(made.success(), "mknod {name}");
    }
    let out = host(&dir, &["grayscott", "--backend", "cpu", "--size", "16", "--steps", "4", "--gif", "null"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = host(&dir, &["heat", "--backend", "cpu", "--size", "8", "--steps", "2", "--png", "null"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = host(&dir, &["grayscott", "--backend", "cpu", "--size", "16", "--steps", "4", "--gif", "full"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("cannot write full: no space left on the device"), "{stderr}");
    for name in ["null", "full"] {
        let kind = std::fs::symlink_metadata(dir.join(name)).unwrap().file_type();
        assert!(kind.is_char_device(), "{name} survived as a device");
    }
    let mut names: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["full", "null"], "no temporary files");
}

#[test]
fn closed_or_full_standard_streams_never_panic() {
    let dir = scratch("pipes");
    // Nobody reads stdout: the run's GIF is written, then the program ends as by SIGPIPE.
    for args in [
        &["grayscott", "--list-presets"][..],
        &["grayscott", "--backend", "cpu", "--size", "16", "--steps", "4", "--gif", "out.gif"],
    ] {
        // The read end is closed before the program starts, so its first write to stdout
        // fails whatever the timing (a pipe closed after spawning may already hold a short
        // output in its buffer).
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let child = host_command(&dir, args).stdout(writer).stderr(Stdio::piped()).spawn().unwrap();
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.signal() == Some(13) || out.status.code() == Some(141),
            "{args:?}: {:?} {stderr}",
            out.status
        );
        assert!(stderr.is_empty(), "{args:?}: quiet, got {stderr}");
    }
    assert!(dir.join("out.gif").is_file());
    // stdout on a full device: one error line, status 1.
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let out = host_command(&dir, &["grayscott", "--list-presets"]).stdout(full).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.trim_end(), "error: cannot write to standard output: no space left on the device");
    // stderr on a full device: the error cannot be told, but the status is still 1.
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let out = host_command(&dir, &["grayscott", "--steps", "0"]).stderr(full).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    // --help and --version succeed, and say so when they cannot be written.
    for flag in ["--help", "--version"] {
        assert!(host(&dir, &[flag]).status.success(), "{flag}");
        let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
        let out = host_command(&dir, &[flag]).stdout(full).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{flag} > /dev/full");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Fault injection for the output rule: the run's last write to an output fails (a file-size
/// limit, `RLIMIT_FSIZE`), and the destination must hold the old file or nothing, with no
/// temporary left beside it.
mod failing_final_write {
    use super::*;

    /// `dash`'s and POSIX `ulimit -f` count blocks of 512 bytes.
    const BLOCK: u64 = 512;

    /// The bytes a destination holds before the failing run.
    const OLD: &[u8] = b"the previous output, which a failed run must leave as it is\n";

    /// Runs `host` with `args` in `dir` under a file-size limit of `blocks` × 512 bytes, with
    /// SIGXFSZ ignored (`trap '' XFSZ` survives `exec`), so a write past the limit returns
    /// EFBIG instead of killing the process. `named`: stage outputs under named temporaries.
    fn host_limited(dir: &Path, blocks: u64, named: bool, args: &[&str]) -> Output {
        let mut command = Command::new("sh");
        command
            .current_dir(dir)
            .arg("-c")
            .arg(format!("ulimit -f {blocks} && trap '' XFSZ && exec \"$0\" \"$@\""))
            .arg(env!("CARGO_BIN_EXE_rust-gpu-sim"))
            .args(args);
        if named {
            command.env(simulations::outfile::NAMED_TEMPORARIES_VAR, "1");
        } else {
            command.env_remove(simulations::outfile::NAMED_TEMPORARIES_VAR);
        }
        command.output().expect("run sh")
    }

    /// Runs `args` (whose first output file is `outputs[0]`) under a limit of about half that
    /// output's size, staged both ways, over old files and over nothing; checks exit status 1,
    /// an `error: cannot write` line for the first output, every destination holding its old
    /// bytes (or absent) and no temporary left. `strict`: also exactly one stderr line, which
    /// reads `error: cannot write NAME: File too large`.
    fn final_write_fails(args: &[&str], outputs: &[&str], strict: bool) {
        let label = args.join(" ");
        // The output's whole size, from a run without a limit.
        let dir = scratch(&format!("final-write-size-{}", outputs[0]));
        let out = host(&dir, args);
        assert!(out.status.success(), "{label}: {}", String::from_utf8_lossy(&out.stderr));
        let size = std::fs::metadata(dir.join(outputs[0])).unwrap().len();
        let _ = std::fs::remove_dir_all(&dir);
        assert!(size < 8192, "{label}: {size} bytes, more than the write buffer holds");
        // A limit of about half the output: the first part is written, the rest fails.
        let blocks = size / (2 * BLOCK);
        assert!(blocks > 0 && blocks * BLOCK < size, "{label}: {size} bytes");
        for named in [false, true] {
            for existing in [true, false] {
                let case = format!("{label} (named temporaries {named}, existing {existing})");
                let dir = scratch(&format!("final-write-{}-{named}-{existing}", outputs[0]));
                if existing {
                    for name in outputs {
                        std::fs::write(dir.join(name), OLD).unwrap();
                    }
                }
                let out = host_limited(&dir, blocks, named, args);
                let stderr = String::from_utf8_lossy(&out.stderr);
                assert_eq!(out.status.code(), Some(1), "{case}: {:?} {stderr}", out.status);
                let expected = format!("error: cannot write {}: File too large", outputs[0]);
                assert!(
                    stderr.contains(&format!("error: cannot write {}: ", outputs[0])),
                    "{case}: {stderr}"
                );
                if strict {
                    assert_eq!(stderr.trim_end(), expected, "{case}: one line");
                }
                if existing {
                    assert_eq!(common::files_in(&dir), outputs, "{case}: no temporary left");
                    for name in outputs {
                        let now = std::fs::read(dir.join(name)).unwrap();
                        assert!(
                            now == OLD,
                            "{case}: {name} holds {} other bytes, not the old file",
                            now.len()
                        );
                    }
                } else {
                    assert!(
                        common::files_in(&dir).is_empty(),
                        "{case}: nothing left, got {:?}",
                        common::files_in(&dir)
                    );
                }
                let _ = std::fs::remove_dir_all(&dir);
            }
        }
    }

    /// Each output here is small (under 8 KiB, the capacity of the `BufWriter` inside
    /// `AtomicFile`) and its writer leaves flushing to `AtomicFile::commit`, so none of its
    /// bytes reach the file before `commit` flushes that buffer: the write that hits the limit
    /// is the final flush inside `commit`. That is what makes this test catch a `commit` that
    /// links the anonymous file into place (or renames the named temporary over the
    /// destination) *before* flushing its buffer: the destination would then hold the
    /// truncated new file (or a file where there was none) although the run failed. Seen to
    /// fail so with `link_into_place` / `persist` moved ahead of `into_inner` in `commit`
    /// (issue 46). A link placed after the flush but before the `fsync` is not caught here (a
    /// file-size limit cannot make `fsync` fail); the strace test below catches that one.
    #[test]
    fn a_failing_final_flush_leaves_the_old_file_and_no_temporary() {
        let grayscott = ["grayscott", "--backend", "cpu", "--size", "16", "--steps", "4"];
        let with = |run: &[&str], more: &[&'static str]| -> Vec<String> {
            run.iter().chain(more).map(|s| s.to_string()).collect()
        };
        for (args, output) in [
            (
                with(&["heat", "--backend", "cpu", "--size", "8", "--steps", "4"], &["--save", "out.vti"]),
                "out.vti",
            ),
            (with(&grayscott, &["--gif", "out.gif"]), "out.gif"),
            (with(&grayscott, &["--checkpoint", "out.ck"]), "out.ck"),
        ] {
            final_write_fails(&args.iter().map(String::as_str).collect::<Vec<_>>(), &[output], true);
        }
    }

    /// Outputs larger than the `AtomicFile`'s write buffer fail in their own writer, before
    /// `commit`: the message is the same one line, without the `(os error 27)` suffix
    /// (a checkpoint's body, a `.vti`'s data).
    #[test]
    fn a_failing_write_before_commit_says_so_in_one_line() {
        let runs: [(&[&str], &str); 2] = [
            (
                &["grayscott", "--backend", "cpu", "--size", "64", "--steps", "1", "--checkpoint", "out.ck"],
                "out.ck",
            ),
            (&["heat", "--backend", "cpu", "--size", "32", "--steps", "1", "--save", "out.vti"], "out.vti"),
        ];
        for (args, output) in runs {
            for named in [false, true] {
                let case = format!("{args:?} (named temporaries {named})");
                let dir = scratch(&format!("body-write-{output}-{named}"));
                // 4 KiB: less than the output, less than half the write buffer.
                let out = host_limited(&dir, 8, named, args);
                let stderr = String::from_utf8_lossy(&out.stderr);
                assert_eq!(out.status.code(), Some(1), "{case}: {:?} {stderr}", out.status);
                assert_eq!(
                    stderr.trim_end(),
                    format!("error: cannot write {output}: File too large"),
                    "{case}"
                );
                assert!(
                    common::files_in(&dir).is_empty(),
                    "{case}: nothing left, got {:?}",
                    common::files_in(&dir)
                );
                let _ = std::fs::remove_dir_all(&dir);
            }
        }
    }

    /// The file system calls of `host` with `args` in `dir` (strace's log), or `None` where
    /// strace is missing or cannot trace here (no ptrace in the sandbox).
    fn traced(dir: &Path, named: bool, args: &[&str]) -> Option<String> {
        let log = dir.join("strace.log");
        let mut command = Command::new("strace");
        command
            .current_dir(dir)
            .args(["-f", "-o"])
            .arg(&log)
            .args(["-e", "trace=openat,close,write,writev,pwrite64,pwritev,fsync,fdatasync,linkat,rename,renameat,renameat2"])
            .arg(env!("CARGO_BIN_EXE_rust-gpu-sim"))
            .args(args)
            .stdout(Stdio::null());
        if named {
            command.env(simulations::outfile::NAMED_TEMPORARIES_VAR, "1");
        } else {
            command.env_remove(simulations::outfile::NAMED_TEMPORARIES_VAR);
        }
        let out = command.output().ok()?;
        let text = std::fs::read_to_string(&log).ok();
        let _ = std::fs::remove_file(&log);
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(text.is_none() || stderr.contains("ptrace"), "{args:?}: {stderr}");
            return None;
        }
        text
    }

    /// The quoted strings of an strace line's arguments.
    fn quoted(line: &str) -> Vec<&str> {
        line.split('"').skip(1).step_by(2).collect()
    }

    /// Checks, from strace's log, that every file named one of `synced` reached the disk
    /// before it got its name: the file descriptor behind each `linkat` (of
    /// `/proc/self/fd/N`) or `rename` onto the name (or onto the temporary name then renamed
    /// onto it) had an `fsync` after its last write. Returns how many such namings were seen.
    fn check_synced_before_named(log: &str, synced: &[&str]) -> usize {
        #[derive(Clone, Copy, PartialEq, Debug)]
        enum State {
            Written,
            Synced,
        }
        let mut state: std::collections::HashMap<i64, State> = Default::default();
        let mut fd_of_path: std::collections::HashMap<String, i64> = Default::default();
        let is_output =
            |path: &str| synced.iter().any(|name| path == *name || path.ends_with(&format!("/{name}")));
        let mut named = 0;
        for line in log.lines() {
            // "PID call(args) = result"
            let Some((_, call)) = line.split_once(' ') else { continue };
            let call = call.trim_start();
            let Some((name, rest)) = call.split_once('(') else { continue };
            let Some((_, result)) = rest.rsplit_once(" = ") else { continue };
            let Ok(result) = result.split_whitespace().next().unwrap_or("").parse::<i64>() else { continue };
            let first_fd = rest.split([',', ')']).next().and_then(|a| a.trim().parse::<i64>().ok());
            match name {
                "openat" if result >= 0 => {
                    state.remove(&result);
                    if let Some(path) = quoted(rest).first() {
                        fd_of_path.insert(path.to_string(), result);
                    }
                }
                "write" | "writev" | "pwrite64" | "pwritev" if result > 0 => {
                    state.insert(first_fd.unwrap(), State::Written);
                }
                "fsync" | "fdatasync" if result == 0 => {
                    state.insert(first_fd.unwrap(), State::Synced);
                }
                "close" => {
                    state.remove(&first_fd.unwrap());
                }
                "linkat" if result == 0 => {
                    let paths = quoted(rest);
                    let fd: i64 = paths[0].strip_prefix("/proc/self/fd/").unwrap().parse().unwrap();
                    fd_of_path.insert(paths[1].to_string(), fd);
                    if is_output(paths[1]) {
                        assert_eq!(state.get(&fd), Some(&State::Synced), "linked in unsynced: {line}");
                        named += 1;
                    }
                }
                "rename" | "renameat" | "renameat2" if result == 0 => {
                    let paths = quoted(rest);
                    if is_output(paths[1]) {
                        let fd = fd_of_path.get(paths[0]).unwrap_or_else(|| panic!("whose file? {line}"));
                        assert_eq!(state.get(fd), Some(&State::Synced), "renamed in unsynced: {line}\n{log}");
                        named += 1;
                    }
                }
                _ => {}
            }
        }
        named
    }

    /// `--save` and `--checkpoint` files are flushed to disk (`fsync`) before they get their
    /// names, new or replacing, staged either way (issue 46): this catches a `commit` that
    /// links or renames the file into place between its final flush and its `fsync`, which
    /// a file-size limit cannot (seen to fail with the `sync_all` moved after the naming).
    /// Skipped where strace cannot run.
    #[test]
    fn saved_fields_and_checkpoints_are_on_disk_before_they_are_named() {
        let runs: [&[&str]; 2] = [
            &[
                "heat",
                "--backend",
                "cpu",
                "--size",
                "8",
                "--steps",
                "2",
                "--save",
                "out.vti",
                "--checkpoint",
                "out.ck",
            ],
            &[
                "grayscott",
                "--backend",
                "cpu",
                "--size",
                "16",
                "--steps",
                "2",
                "--save",
                "out.npz",
                "--checkpoint",
                "out.ck",
            ],
        ];
        for args in runs {
            let outputs = [args[8], args[10]];
            for named in [false, true] {
                for existing in [false, true] {
                    let dir = scratch(&format!("synced-{}-{named}-{existing}", args[0]));
                    if existing {
                        for name in outputs {
                            std::fs::write(dir.join(name), OLD).unwrap();
                        }
                    }
                    let Some(log) = traced(&dir, named, args) else {
                        eprintln!("skipped: strace cannot run here");
                        return;
                    };
                    let case = format!("{args:?} (named temporaries {named}, existing {existing})");
                    assert_eq!(
                        check_synced_before_named(&log, &outputs),
                        2,
                        "{case}: both named once\n{log}"
                    );
                    let mut expected = outputs.map(String::from).to_vec();
                    expected.sort();
                    assert_eq!(common::files_in(&dir), expected, "{case}: no temporary left");
                    let _ = std::fs::remove_dir_all(&dir);
                }
            }
        }
    }

    /// `--save` as `.npy` and `.npz`: their writers (npyz, zip) flush the file themselves, so
    /// the failing write comes before `commit`; the files are left as the rule says.
    #[test]
    fn a_failing_npy_or_npz_save_leaves_the_old_files_and_no_temporary() {
        for (output, names) in [("out.npz", &["out.npz"][..]), ("out.npy", &["out_u.npy", "out_v.npy"])] {
            let args = ["grayscott", "--backend", "cpu", "--size", "16", "--steps", "4", "--save", output];
            final_write_fails(&args, names, false);
        }
    }

    /// The same with the message checked: one line, without the `(os error 27)` suffix.
    #[test]
    fn a_failing_npy_or_npz_save_says_so_in_one_line() {
        for (output, names) in [("out.npz", &["out.npz"][..]), ("out.npy", &["out_u.npy", "out_v.npy"])] {
            let args = ["grayscott", "--backend", "cpu", "--size", "16", "--steps", "4", "--save", output];
            final_write_fails(&args, names, true);
        }
    }
}

/// Under an address-space limit (`ulimit -v`, as batch schedulers set), a run too large for it
/// is refused in one line naming the limit and the grid (a 3-D one as `NXxNYxNZ`), before the
/// grid is allocated: not aborted by a failed allocation (SIGABRT). (Each needs less than a machine that runs the tests has free,
/// so only the limit can refuse it.)
#[test]
fn an_address_space_limit_refuses_the_run_instead_of_aborting_it() {
    let dir = scratch("address-space");
    for (line, says) in [
        ("grayscott --backend cpu --size 12000 --steps 1 --gif g.gif", "a 12000x12000 grid needs 2.3 GiB"),
        ("heat --backend cpu --size 700 --steps 1", "a 700x700x700 grid needs"),
        ("physarum --backend cpu --size 64 --agents 200000000 --steps 1", "use fewer --agents"),
    ] {
        let script = format!("ulimit -v 2000000 && exec \"$0\" {line}");
        let out = Command::new("sh")
            .args(["-c", &script, env!("CARGO_BIN_EXE_rust-gpu-sim")])
            .current_dir(&dir)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{line}: {:?} {stderr}", out.status);
        assert_eq!(stderr.lines().count(), 1, "{line}: {stderr}");
        assert!(
            stderr.contains(says) && stderr.contains("address-space limit (ulimit -v)"),
            "{line}: {stderr}"
        );
        assert!(snapshot(&dir).is_empty(), "{line} wrote {:?}", snapshot(&dir));
    }
}

/// Under a descriptor limit (`ulimit -n`) too low for a run's outputs, every model's run ends
/// with one line and exit 1 and leaves nothing, at every limit from too low to start up to
/// enough (item 2 of issue 57: `RLIMIT_NOFILE`). A run that gets its descriptors writes all its
/// outputs.
#[test]
fn a_descriptor_limit_ends_the_run_with_one_line_and_nothing_written() {
    let dir = scratch("descriptors");
    let lines = [
        (
            "grayscott --backend cpu --size 48 --steps 10 --frame-every 5 --gif o.gif --mp4 o.mp4 --save s.npz --png-dir f",
            &["o.gif", "o.mp4", "s.npz", "f"][..],
        ),
        ("heat --backend cpu --size 16 --steps 2 --save h.vti --gif h.gif", &["h.vti", "h.gif"]),
        (
            "physarum --backend cpu --size 48 --agents 500 --steps 4 --gif p.gif --checkpoint p.ck",
            &["p.gif", "p.ck"],
        ),
    ];
    for (line, outputs) in lines {
        let mut ran = false;
        // From 4: under 3 the dynamic loader itself cannot open the libraries.
        for limit in 4..=24 {
            let script = format!("ulimit -n {limit} && exec \"$0\" {line}");
            let out = Command::new("sh")
                .args(["-c", &script, env!("CARGO_BIN_EXE_rust-gpu-sim")])
                .env("RUST_BACKTRACE", "0")
                .current_dir(&dir)
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            if out.status.success() {
                let missing: Vec<_> = outputs.iter().filter(|name| !dir.join(name).exists()).collect();
                assert!(missing.is_empty(), "{line} under {limit}: {missing:?} missing");
                ran = true;
                std::fs::remove_dir_all(&dir).unwrap();
                std::fs::create_dir_all(&dir).unwrap();
                continue;
            }
            assert_eq!(out.status.code(), Some(1), "{line} under {limit}: {:?} {stderr}", out.status);
            assert_eq!(stderr.lines().count(), 1, "{line} under {limit}: {stderr}");
            assert!(
                stderr.starts_with("error: ") && !stderr.contains("panicked"),
                "{line} under {limit}: {stderr}"
            );
            assert!(snapshot(&dir).is_empty(), "{line} under {limit} left {:?}", snapshot(&dir));
        }
        assert!(ran, "{line}: no limit up to 24 descriptors let it run");
    }
}

/// Under an address-space limit anywhere from the least the program starts under to well
/// above what a run needs, a run with frame outputs (`--gif --mp4`) and `--save` is either
/// refused before it starts, in one `error:` line with exit 1 and nothing written, or
/// completes with every output: never a signal (SIGABRT from a failed allocation, SIGSEGV), a
/// panic (rayon's pool, a thread's start) or an encoder's error after the check (issue 57's
/// defect 5: the check counted the fields, not the encoders' buffers, the state's copy and the
/// threads).
#[test]
fn an_address_space_limit_refuses_or_completes_runs_with_outputs() {
    let dir = scratch("address-sweep");
    let under = |limit_kib: u64, line: &str| {
        let script = format!("ulimit -v {limit_kib} && exec \"$0\" {line}");
        Command::new("sh")
            .args(["-c", &script, env!("CARGO_BIN_EXE_rust-gpu-sim")])
            .env("RUST_BACKTRACE", "0")
            .current_dir(&dir)
            .output()
            .unwrap()
    };
    // The least limit the program starts under at all (below it the dynamic loader fails).
    let floor = (8..200).step_by(2).map(|mb| mb * 1024).find(|&kib| under(kib, "--version").status.success());
    let floor = floor.expect("the program starts under some limit up to 200 MiB");
    let lines = [
        (
            "grayscott --backend cpu --size 256 --steps 40 --frame-every 2 --gif o.gif --mp4 o.mp4 --save s.npz",
            &["o.gif", "o.mp4", "s.npz"][..],
        ),
        (
            "grayscott --backend cpu --size 512 --steps 4 --frame-every 2 --save s.npy",
            &["s_u.npy", "s_v.npy"],
        ),
    ];
    for (line, outputs) in lines {
        let (mut refused, mut ran) = (0, 0);
        for limit in (floor..floor + 100 * 1024).step_by(2 * 1024) {
            let out = under(limit, line);
            let stderr = String::from_utf8_lossy(&out.stderr);
            let at = format!("{line} under {} MiB", limit / 1024);
            assert!(out.status.code().is_some(), "{at}: {:?} {stderr}", out.status);
            assert!(!stderr.contains("panicked"), "{at}: {stderr}");
            if out.status.success() {
                let missing: Vec<_> = outputs
                    .iter()
                    .filter(|name| std::fs::metadata(dir.join(name)).map_or(true, |m| m.len() == 0))
                    .collect();
                assert!(missing.is_empty(), "{at}: {missing:?} missing or empty; {stderr}");
                ran += 1;
                std::fs::remove_dir_all(&dir).unwrap();
                std::fs::create_dir_all(&dir).unwrap();
                continue;
            }
            assert_eq!(out.status.code(), Some(1), "{at}: {stderr}");
            assert_eq!(stderr.lines().count(), 1, "{at}: {stderr}");
            assert!(stderr.starts_with("error: "), "{at}: {stderr}");
            assert!(snapshot(&dir).is_empty(), "{at} left {:?}", snapshot(&dir));
            refused += 1;
        }
        assert!(refused > 0 && ran > 0, "{line}: {refused} refused and {ran} run; the sweep missed the edge");
    }
}

/// A signal between the two files of `--save s.npy` (`s_u.npy` named, `s_v.npy` not yet:
/// the test-only hold after each name keeps the run there) ends the run with its line and
/// status only once both are named, so this run's `s_u.npy` never stands beside an earlier
/// run's `s_v.npy` (issue 57's defect 2; item 2's "a signal between two files").
#[test]
fn a_signal_between_two_files_leaves_both_or_neither() {
    let dir = scratch("signal-between-files");
    std::fs::write(dir.join("s_u.npy"), b"earlier run's u").unwrap();
    std::fs::write(dir.join("s_v.npy"), b"earlier run's v").unwrap();
    let mut child = host_command(
        &dir,
        &["grayscott", "--backend", "cpu", "--size", "16", "--steps", "2", "--save", "s.npy"],
    )
    .env(simulations::outfile::HOLD_AFTER_NAMING_VAR, "1500")
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let renamed = |name: &str| std::fs::metadata(dir.join(name)).is_ok_and(|m| m.len() > 100);
    wait_for(|| renamed("s_u.npy"));
    let sent = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status().unwrap();
    assert!(sent.success());
    let exit = child.wait().unwrap();
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    assert_eq!(exit.code(), Some(143), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(renamed("s_u.npy") && renamed("s_v.npy"), "this run's s_u.npy beside: {:?}", snapshot(&dir));
}

/// Output paths that are not UTF-8 are written under the names given, byte for byte, the
/// names derived from them too (`s\xff_u.npy`, `c\xff_00000002.npz`): never under a name the
/// user did not give (`state_u.npy`, issue 57's defect 3); into a missing directory such a
/// path is refused in one line (item 2's "a non-UTF-8 path").
#[test]
fn output_paths_that_are_not_utf8_are_kept_as_given() {
    use std::{ffi::OsStr, os::unix::ffi::OsStrExt};
    let dir = scratch("not-utf8");
    let name = |bytes: &[u8]| OsStr::from_bytes(bytes).to_owned();
    let mut command = Command::new(env!("CARGO_BIN_EXE_rust-gpu-sim"));
    command.current_dir(&dir).args(["grayscott", "--backend", "cpu", "--size", "32", "--steps", "4"]);
    command.arg("--gif").arg(name(b"g\xff.gif")).arg("--png").arg(name(b"p\xff.png"));
    command.arg("--mp4").arg(name(b"m\xff.mp4")).arg("--save").arg(name(b"s\xff.npy"));
    command.arg("--checkpoint").arg(name(b"c\xff.ck"));
    let out = command.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut names: Vec<Vec<u8>> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().as_bytes().to_vec()).collect();
    names.sort();
    let expected: Vec<&[u8]> =
        vec![b"c\xff.ck", b"g\xff.gif", b"m\xff.mp4", b"p\xff.png", b"s\xff_u.npy", b"s\xff_v.npy"];
    assert_eq!(names, expected, "{:?}", snapshot(&dir));
    for name in &names {
        assert!(std::fs::metadata(dir.join(OsStr::from_bytes(name))).unwrap().len() > 0);
    }
    // A series: the stem stays as given before the step number.
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_rust-gpu-sim"))
        .current_dir(&dir)
        .args([
            "grayscott",
            "--backend",
            "cpu",
            "--size",
            "32",
            "--steps",
            "4",
            "--save-every",
            "2",
            "--save",
        ])
        .arg(name(b"c\xff.npz"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for series in [&b"c\xff_00000002.npz"[..], b"c\xff_00000004.npz", b"c\xff.npz"] {
        assert!(dir.join(OsStr::from_bytes(series)).exists(), "{:?} missing: {:?}", series, snapshot(&dir));
    }
    // Into a missing directory: one line, nothing written.
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_rust-gpu-sim"))
        .current_dir(&dir)
        .args(["grayscott", "--backend", "cpu", "--size", "32", "--steps", "4", "--gif"])
        .arg(name(b"missing\xff/g.gif"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.lines().count() == 1 && stderr.starts_with("error: "), "{stderr}");
    assert!(snapshot(&dir).is_empty(), "{:?}", snapshot(&dir));
}
