//! `cookbook-bench --cubin-dir DIR [--repeats N] [--only KERNEL]`: each cookbook kernel
//! against its CUDA C twin (`DIR/<file>.cubin`, built by nvcc from `cuda/<file>.cu`), on one
//! set of inputs, same launch shape. Warms up, times each with CUDA events, alternating the
//! two, then checks the results of the last runs (against each other, and against the CPU
//! reference, whole or sampled, within the derived bound for float sums), and prints
//! one Markdown row per kernel: `kernel | size | rust ms | nvcc ms | ratio rust/nvcc | rate`
//! (medians). The device-to-device copy bandwidth is measured first, in the same run.
//!
//! The Hopper kernels (`tma_transpose`, `bulk_scale`, `cluster_histogram`: `cuda/tma.cu`;
//! `cluster_reduce`: `cuda/cluster_reduce.cu`; `tma_stencil`: `cuda/tma_stencil.cu`) run
//! on a GPU of compute capability 9.0 or later only, from their own module
//! ([`cookbook::HOPPER_IMAGES`]); on an older GPU their rows say they were skipped. The
//! `wgmma` GEMMs (`wgmma_gemm`, `gemm_tma_wgmma`: `cuda/wgmma.cu`, built for `sm_90a`) are
//! among them.

use std::{path::PathBuf, process::ExitCode};

/// `println!` that never panics: the line is lost where standard output is closed or full.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

/// `eprintln!` that never panics: the line is lost where standard error is closed or full.
macro_rules! say_err {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

use cookbook::{
    HOPPER_IMAGES, IMAGES, cpu,
    gpu::{self, F32x4, Flavour, HalfInput, download, upload, zeros},
    hopper,
    random::Random,
};
use cookbook_kernels as k;
use ptxkit_host::{
    Error, Gpu, Kernel, Result, RuntimeKernel, TensorMapSpec, Timer,
    cudarc::driver::{LaunchConfig, sys},
};

/// What the command line asks for.
struct Options {
    cubin_dir: PathBuf,
    repeats: usize,
    only: Option<String>,
}

/// The kernels `--only` may name, in the order they run (those of [`HOPPER_KERNELS`] on sm_90+
/// only).
const KERNELS: &[&str] = &[
    "reduce",
    "transpose",
    "histogram",
    "scan",
    "sgemm",
    "nbody",
    "softmax",
    "saxpy",
    "jacobi",
    "hgemm",
    "tma_transpose",
    "bulk_scale",
    "cluster_histogram",
    "cluster_reduce",
    "tma_stencil",
    "wgmma_gemm",
    "gemm_tma_wgmma",
];

/// The kernels of [`KERNELS`] that need compute capability 9.0 ([`HOPPER_IMAGES`], `tma.cu`,
/// `cluster_reduce.cu`, `tma_stencil.cu`; `wgmma.cu` built for sm_90a).
const HOPPER_KERNELS: &[&str] = &[
    "tma_transpose",
    "bulk_scale",
    "cluster_histogram",
    "cluster_reduce",
    "tma_stencil",
    "wgmma_gemm",
    "gemm_tma_wgmma",
];

/// More classic kernels `--only` may name, run after `jacobi`: the tiled stencil (safe and raw,
/// twin `jacobi_5pt_tiled` in `cuda/jacobi.cu`) and the single-pass look-back scan (twin
/// `scan_lookback` in `cuda/scan.cu`).
const TILED_AND_ONE_PASS: &[&str] = &["jacobi_tiled", "scan_lookback"];

/// The fewest and most timed runs a kernel gets (`--repeats`).
const REPEATS: std::ops::RangeInclusive<usize> = 21..=10_000;

const USAGE: &str = "usage: cookbook-bench --cubin-dir DIR [--repeats N (21 to 10000)] [--only KERNEL]";

/// The command line: the options, or `None` for `--help` (the usage printed).
fn parse_options() -> std::result::Result<Option<Options>, String> {
    let mut options = Options { cubin_dir: PathBuf::new(), repeats: 21, only: None };
    let mut cubin_dir = None;
    let mut args = std::env::args_os().skip(1);
    while let Some(arg) = args.next() {
        // A value that is not UTF-8 is refused as the option's (only a directory may be one).
        let text = |os: std::ffi::OsString| os.into_string().map_err(|os| format!("{os:?} is not UTF-8"));
        let mut value_os = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        let arg = text(arg)?;
        match arg.as_str() {
            "--cubin-dir" => cubin_dir = Some(PathBuf::from(value_os("--cubin-dir")?)),
            "--repeats" => {
                let text = text(value_os("--repeats")?)?;
                options.repeats = text
                    .parse()
                    .ok()
                    .filter(|n| REPEATS.contains(n))
                    .ok_or_else(|| format!("--repeats {text:?}: a whole number from 21 to 10000"))?;
            }
            "--only" => {
                let name = text(value_os("--only")?)?;
                if !KERNELS.contains(&name.as_str()) && !TILED_AND_ONE_PASS.contains(&name.as_str()) {
                    let names: Vec<&str> = KERNELS.iter().chain(TILED_AND_ONE_PASS).copied().collect();
                    return Err(format!("--only {name:?}: one of {}", names.join(", ")));
                }
                options.only = Some(name);
            }
            "-h" | "--help" => {
                say!("{USAGE}");
                return Ok(None);
            }
            other => return Err(format!("unknown argument {other} (try --help)")),
        }
    }
    options.cubin_dir =
        cubin_dir.ok_or("--cubin-dir DIR is required (the nvcc-built twins: DIR/<kernel>.cubin)")?;
    if !options.cubin_dir.is_dir() {
        return Err(format!("--cubin-dir {}: not a directory", options.cubin_dir.display()));
    }
    Ok(Some(options))
}

/// The median of `times` (sorted here).
fn median(times: &mut [f32]) -> f32 {
    times.sort_by(f32::total_cmp);
    times[times.len() / 2]
}

/// The GPU time of the work `run` queues, by a pair of events around it.
fn time(gpu: &Gpu, run: &mut dyn FnMut() -> Result<()>) -> Result<f32> {
    let timer = Timer::start(gpu)?;
    run()?;
    timer.stop()
}

/// Three warm-up runs each, then `repeats` timed runs of each, alternating; the medians in ms.
fn race(
    gpu: &Gpu,
    repeats: usize,
    rust: &mut dyn FnMut() -> Result<()>,
    nvcc: &mut dyn FnMut() -> Result<()>,
) -> Result<(f32, f32)> {
    for _ in 0..3 {
        rust()?;
        nvcc()?;
    }
    gpu.synchronize()?;
    let (mut rust_ms, mut nvcc_ms) = (Vec::with_capacity(repeats), Vec::with_capacity(repeats));
    for _ in 0..repeats {
        rust_ms.push(time(gpu, rust)?);
        nvcc_ms.push(time(gpu, nvcc)?);
    }
    Ok((median(&mut rust_ms), median(&mut nvcc_ms)))
}

/// A throughput: bytes moved or floating-point operations, per run (tensor-core FLOPs are
/// given in TFLOP/s).
enum Work {
    Bytes(f64),
    Flops(f64),
    TensorFlops(f64),
}

impl Work {
    fn rate(&self, ms: f32) -> String {
        let seconds = ms as f64 * 1e-3;
        match self {
            Work::Bytes(bytes) => format!("{:.0} GB/s", bytes / seconds / 1e9),
            Work::Flops(flops) => format!("{:.0} GFLOP/s", flops / seconds / 1e9),
            Work::TensorFlops(flops) => format!("{:.1} TFLOP/s", flops / seconds / 1e12),
        }
    }
}

/// One row of the table; `checked` is the verdict of comparing the results.
fn row(
    kernel: &str,
    size: &str,
    (rust, nvcc): (f32, f32),
    work: Work,
    checked: std::result::Result<(), String>,
) -> bool {
    let verdict = match &checked {
        Ok(()) => String::new(),
        Err(why) => format!(" **MISMATCH: {why}**"),
    };
    say!(
        "| {kernel} | {size} | {rust:.4} | {nvcc:.4} | {:.2} | {} (nvcc {}){verdict} |",
        rust / nvcc,
        work.rate(rust),
        work.rate(nvcc)
    );
    checked.is_ok()
}

/// The nvcc twins, loaded from `DIR/<file>.cubin` on first use.
struct Twins<'a> {
    gpu: &'a Gpu,
    dir: PathBuf,
}

impl Twins<'_> {
    fn kernel(&self, file: &str, name: &str) -> Result<RuntimeKernel> {
        self.gpu.load_cubin_file(self.dir.join(format!("{file}.cubin")))?.function(name)
    }
}

/// `Ok` when equal, else where they first differ.
fn same<T: PartialEq + std::fmt::Debug>(what: &str, a: &[T], b: &[T]) -> std::result::Result<(), String> {
    match a.iter().zip(b).position(|(x, y)| x != y) {
        _ if a.len() != b.len() => Err(format!("{what}: lengths {} and {}", a.len(), b.len())),
        None => Ok(()),
        Some(i) => Err(format!("{what}: differ at {i}: {:?} vs {:?}", a[i], b[i])),
    }
}

fn bits(x: &[f32]) -> Vec<u32> {
    x.iter().map(|v| v.to_bits()).collect()
}

fn main() -> ExitCode {
    let options = match parse_options() {
        Ok(Some(options)) => options,
        Ok(None) => return ExitCode::SUCCESS,
        Err(message) => {
            say_err!("cookbook-bench: {message}");
            return ExitCode::from(2);
        }
    };
    match run(&options) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            say_err!("cookbook-bench: some results differ (rows marked MISMATCH)");
            ExitCode::FAILURE
        }
        Err(e) => {
            say_err!("cookbook-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Runs every (selected) kernel; returns whether every check passed.
fn run(options: &Options) -> Result<bool> {
    let gpu = Gpu::open(0, &IMAGES)?;
    say!("GPU: {} (Rust kernels: {}; driver {})", gpu.name(), gpu.image(), gpu.driver_version());
    let twins = Twins { gpu: &gpu, dir: options.cubin_dir.clone() };
    let repeats = options.repeats;
    let wanted = |name: &str| options.only.as_deref().is_none_or(|only| only == name);
    let (mut random, seed) = Random::from_clock();
    say!("inputs: seed {seed:#x}; medians of {repeats} runs each, alternating, after 3 warm-up runs");

    // The copy bandwidth first: the ceiling a memory-bound kernel is measured against.
    {
        let n = 256 << 20; // 1 GiB of f32
        let source = zeros::<f32>(&gpu, n)?;
        let mut target = zeros::<f32>(&gpu, n)?;
        let mut copy = || gpu.stream().memcpy_dtod(&source, &mut target).map_err(Error::driver("copying"));
        let mut copies: Vec<f32> = Vec::with_capacity(repeats);
        copy()?;
        for _ in 0..repeats {
            copies.push(time(&gpu, &mut copy)?);
        }
        let ms = median(&mut copies);
        let bytes = 2.0 * 4.0 * n as f64;
        say!(
            "copy bandwidth: device-to-device memcpy of 1 GiB: {ms:.4} ms, {:.0} GB/s (read + write)",
            bytes / (ms as f64 * 1e-3) / 1e9
        );
    }
    say!();
    say!("| kernel | size | rust ms | nvcc ms | ratio rust/nvcc | GB/s, GFLOP/s or TFLOP/s |");
    say!("| --- | --- | --- | --- | --- | --- |");
    let mut all_ok = true;

    if wanted("reduce") {
        let n = 1usize << 26;
        let host = random.floats(n, -1.0, 1.0);
        let x = upload(&gpu, &host)?;
        let (mut rust_sum, mut nvcc_sum) = (zeros::<f32>(&gpu, 1)?, zeros::<f32>(&gpu, 1)?);
        let twin = twins.kernel("reduce", "reduce_sum_f32")?;
        let config = gpu::reduce_config(n as u32);
        let mut rust = || gpu::reduce_sum_launch(&gpu, &x, &mut rust_sum);
        let mut nvcc = || {
            gpu.stream().memset_zeros(&mut nvcc_sum).map_err(Error::driver("zeroing"))?;
            // SAFETY: reduce.cu's reduce_sum_f32(const float*, unsigned, float*); x holds n floats.
            unsafe { twin.launch_as(k::reduce_sum_f32, gpu.stream(), config, (&x, n as u32, &mut nvcc_sum)) }
        };
        let times = race(&gpu, repeats, &mut rust, &mut nvcc)?;
        let (r, t) = (download(&gpu, &rust_sum)?[0], download(&gpu, &nvcc_sum)?[0]);
        let (exact, bound) = cpu::sum(&host);
        let check = if (r as f64 - exact).abs() > bound || (t as f64 - exact).abs() > bound {
            Err(format!("rust {r}, nvcc {t}, exact {exact} ± {bound:.3e}"))
        } else {
            Ok(())
        };
        all_ok &= row("reduce_sum_f32", &format!("{n}"), times, Work::Bytes(4.0 * n as f64), check);
    }

    if wanted("transpose") {
        let (width, height) = (8192u32, 8192u32);
        let cells = (width * height) as usize;
        let host = random.floats(cells, -1.0, 1.0);
        let input = upload(&gpu, &host)?;
        let (mut rust_out, mut nvcc_out) = (zeros::<f32>(&gpu, cells)?, zeros::<f32>(&gpu, cells)?);
        let twin = twins.kernel("transpose", "transpose_f32")?;
        let config = gpu::transpose_config(width, height);
        let mut rust = || gpu::transpose_launch(&gpu, &input, &mut rust_out, width, height);
        // SAFETY: transpose.cu's transpose_f32(const float*, float*, unsigned, unsigned); both
        // buffers hold width × height floats.
        let mut nvcc = || unsafe {
            twin.launch_as(k::transpose_f32, gpu.stream(), config, (&input, &mut nvcc_out, width, height))
        };
        let times = race(&gpu, repeats, &mut rust, &mut nvcc)?;
        let (r, t) = (download(&gpu, &rust_out)?, download(&gpu, &nvcc_out)?);
        let check = same("rust vs nvcc", &bits(&r), &bits(&t)).and_then(|()| {
            same("rust vs cpu", &bits(&r), &bits(&cpu::transpose(&host, width as usize, height as usize)))
        });
        all_ok &=
            row("transpose_f32", &format!("{width}x{height}"), times, Work::Bytes(8.0 * cells as f64), check);
    }

    if wanted("histogram") {
        let n = 1usize << 26;
        let host = random.words(n);
        let words = upload(&gpu, &host)?;
        let (mut rust_bins, mut nvcc_bins) = (zeros::<u32>(&gpu, 256)?, zeros::<u32>(&gpu, 256)?);
        let twin = twins.kernel("histogram", "histogram_256")?;
        let config = gpu::histogram_config(n as u32);
        let mut rust = || gpu::histogram_launch(&gpu, &words, &mut rust_bins);
        let mut nvcc = || {
            gpu.stream().memset_zeros(&mut nvcc_bins).map_err(Error::driver("zeroing"))?;
            // SAFETY: histogram.cu's histogram_256(const unsigned*, unsigned, unsigned*); 256 bins.
            unsafe {
                twin.launch_as(k::histogram_256, gpu.stream(), config, (&words, n as u32, &mut nvcc_bins))
            }
        };
        let times = race(&gpu, repeats, &mut rust, &mut nvcc)?;
        let (r, t) = (download(&gpu, &rust_bins)?, download(&gpu, &nvcc_bins)?);
        let check =
            same("rust vs nvcc", &r, &t).and_then(|()| same("rust vs cpu", &r, &cpu::histogram_256(&host)));
        all_ok &= row("histogram_256", &format!("{n} words"), times, Work::Bytes(4.0 * n as f64), check);
    }

    if wanted("scan") {
        let n = 1usize << 26;
        let host: Vec<u32> = (0..n).map(|_| random.next_u32() >> 16).collect();
        let input = upload(&gpu, &host)?;
        let tiles = gpu::scan_tiles_for(n as u32);
        let (mut rust_sums, mut nvcc_sums) =
            (zeros::<u32>(&gpu, tiles as usize)?, zeros::<u32>(&gpu, tiles as usize)?);
        let (mut rust_out, mut nvcc_out) = (zeros::<u32>(&gpu, n)?, zeros::<u32>(&gpu, n)?);
        let passes = [
            twins.kernel("scan", "scan_tile_sums")?,
            twins.kernel("scan", "scan_block_sums")?,
            twins.kernel("scan", "scan_tiles")?,
        ];
        let [first, second, third] = gpu::scan_configs(n as u32);
        let mut rust = || gpu::scan_launch(&gpu, &input, &mut rust_sums, &mut rust_out);
        let mut nvcc = || {
            let stream = gpu.stream();
            // SAFETY: scan.cu's three kernels take the parameters of the Rust ones; the
            // buffers hold n elements and one sum per tile.
            unsafe {
                passes[0].launch_as(k::scan_tile_sums, stream, first, (&input, n as u32, &mut nvcc_sums))?;
                passes[1].launch_as(k::scan_block_sums, stream, second, (&mut nvcc_sums, tiles))?;
                passes[2].launch_as(
                    k::scan_tiles,
                    stream,
                    third,
                    (&input, n as u32, &nvcc_sums, &mut nvcc_out),
                )
            }
        };
        let times = race(&gpu, repeats, &mut rust, &mut nvcc)?;
        let (r, t) = (download(&gpu, &rust_out)?, download(&gpu, &nvcc_out)?);
        let check =
            same("rust vs nvcc", &r, &t).and_then(|()| same("rust vs cpu", &r, &cpu::exclusive_scan(&host)));
        all_ok &= row("scan (3 kernels)", &format!("{n}"), times, Work::Bytes(12.0 * n as f64), check);
    }

    if wanted("sgemm") {
        let (m, n, kk) = (2048usize, 2048usize, 2048usize);
        let (ha, hb) = (random.floats(m * kk, -1.0, 1.0), random.floats(kk * n, -1.0, 1.0));
        let (a, b) = (upload(&gpu, &ha)?, upload(&gpu, &hb)?);
        let (mut rust_c, mut nvcc_c) = (zeros::<f32>(&gpu, m * n)?, zeros::<f32>(&gpu, m * n)?);
        let twin = twins.kernel("sgemm", "sgemm_64x64")?;
        let shape = (m as u32, n as u32, kk as u32);
        let config = gpu::sgemm_config(shape.0, shape.1);
        let mut rust = || gpu::sgemm_launch(&gpu, &a, &b, &mut rust_c, shape);
        // SAFETY: sgemm.cu's sgemm_64x64(const float*, const float*, float*, unsigned × 3);
        // the buffers hold m·k, k·n and m·n floats; the shape fits the tiles.
        let mut nvcc = || unsafe {
            twin.launch_as(
                k::sgemm_64x64,
                gpu.stream(),
                config,
                (&a, &b, &mut nvcc_c, shape.0, shape.1, shape.2),
            )
        };
        let times = race(&gpu, repeats, &mut rust, &mut nvcc)?;
        let (r, t) = (download(&gpu, &rust_c)?, download(&gpu, &nvcc_c)?);
        // 512 sampled entries against the CPU's bound, for both.
        let check = (0..512).map(|s| (s * 7919) % (m * n)).try_for_each(|i| {
            let (exact, bound) = cpu::sgemm_entry(&ha, &hb, n, kk, i / n, i % n);
            if (r[i] as f64 - exact).abs() > bound || (t[i] as f64 - exact).abs() > bound {
                Err(format!("at {i}: rust {}, nvcc {}, exact {exact} ± {bound:.3e}", r[i], t[i]))
            } else {
                Ok(())
            }
        });
        let flops = 2.0 * (m * n * kk) as f64;
        all_ok &= row("sgemm_64x64", &format!("{m}x{n}x{kk}"), times, Work::Flops(flops), check);
    }

    if wanted("nbody") {
        let n = 32768usize;
        let host: Vec<[f32; 4]> = (0..n)
            .map(|_| {
                [
                    random.uniform(-1.0, 1.0),
                    random.uniform(-1.0, 1.0),
                    random.uniform(-1.0, 1.0),
                    random.uniform(0.5, 1.5),
                ]
            })
            .collect();
        let packed: Vec<F32x4> = host.iter().map(|&b| F32x4::from_array(b)).collect();
        let bodies = upload(&gpu, &packed)?;
        let (mut rust_acc, mut nvcc_acc) = (zeros::<F32x4>(&gpu, n)?, zeros::<F32x4>(&gpu, n)?);
        let twin = twins.kernel("nbody", "nbody_accelerations")?;
        let softening2 = 1e-3f32;
        let config = gpu::nbody_config(n as u32);
        let mut rust = || gpu::nbody_launch(&gpu, &bodies, &mut rust_acc, softening2);
        // SAFETY: nbody.cu's nbody_accelerations(const float4*, float4*, unsigned, float); both
        // buffers hold n float4s.
        let mut nvcc = || unsafe {
            twin.launch_as(
                k::nbody_accelerations,
                gpu.stream(),
                config,
                (&bodies, &mut nvcc_acc, n as u32, softening2),
            )
        };
        let times = race(&gpu, repeats, &mut rust, &mut nvcc)?;
        let (r, t) = (download(&gpu, &rust_acc)?, download(&gpu, &nvcc_acc)?);
        let check = (0..256).map(|s| s * (n / 256) + s % 7).try_for_each(|i| {
            let (exact, bound) = cpu::nbody_acceleration(&host, i, softening2);
            let (ri, ti) = (r[i].to_array(), t[i].to_array());
            match (0..3).find(|&c| {
                (ri[c] as f64 - exact[c]).abs() > bound[c] || (ti[c] as f64 - exact[c]).abs() > bound[c]
            }) {
                Some(c) => Err(format!(
                    "body {i}[{c}]: rust {}, nvcc {}, exact {} ± {:.3e}",
                    ri[c], ti[c], exact[c], bound[c]
                )),
                None => Ok(()),
            }
        });
        all_ok &= row(
            "nbody_accelerations",
            &format!("{n} bodies"),
            times,
            Work::Flops(20.0 * (n * n) as f64),
            check,
        );
    }

    if wanted("softmax") {
        let (rows, cols) = (16384usize, 4096usize);
        let host = random.floats(rows * cols, -8.0, 8.0);
        let input = upload(&gpu, &host)?;
        let (mut rust_out, mut nvcc_out) =
            (zeros::<f32>(&gpu, rows * cols)?, zeros::<f32>(&gpu, rows * cols)?);
        let twin = twins.kernel("softmax", "softmax_rows")?;
        let config = gpu::softmax_config(rows as u32);
        let mut rust = || gpu::softmax_launch(&gpu, &input, &mut rust_out, rows as u32, cols as u32);
        // SAFETY: softmax.cu's softmax_rows(const float*, float*, unsigned, unsigned); both
        // buffers hold rows × cols floats.
        let mut nvcc = || unsafe {
            twin.launch_as(
                k::softmax_rows,
                gpu.stream(),
                config,
                (&input, &mut nvcc_out, rows as u32, cols as u32),
            )
        };
        let times = race(&gpu, repeats, &mut rust, &mut nvcc)?;
        let (r, t) = (download(&gpu, &rust_out)?, download(&gpu, &nvcc_out)?);
        let bound = cpu::softmax_relative_bound(cols, 16.0);
        // 64 sampled rows against the CPU reference, for both.
        let check =
            (0..64).map(|s| s * (rows / 64) + s % 5).try_for_each(|row| {
                let span = row * cols..(row + 1) * cols;
                let expected = cpu::softmax_rows(&host[span.clone()], cols);
                match span.clone().zip(expected).find(|&(i, e)| {
                    (r[i] as f64 - e).abs() > bound * e || (t[i] as f64 - e).abs() > bound * e
                }) {
                    Some((i, e)) => Err(format!("at {i}: rust {}, nvcc {}, expected {e}", r[i], t[i])),
                    None => Ok(()),
                }
            });
        all_ok &= row(
            "softmax_rows",
            &format!("{rows}x{cols}"),
            times,
            Work::Bytes(8.0 * (rows * cols) as f64),
            check,
        );
    }

    if wanted("saxpy") {
        let n = 1usize << 26;
        let (hx, hy) = (random.floats(n, -1.0, 1.0), random.floats(n, -1.0, 1.0));
        let a = 1.5f32;
        let (x, y) = (upload(&gpu, &hx)?, upload(&gpu, &hy)?);
        let twin = twins.kernel("saxpy", "saxpy")?;
        let config = gpu::saxpy_config(n as u32);
        let expected = bits(&cpu::saxpy(a, &hx, &hy));
        for flavour in [Flavour::Safe, Flavour::Raw] {
            let (mut rust_out, mut nvcc_out) = (zeros::<f32>(&gpu, n)?, zeros::<f32>(&gpu, n)?);
            let mut rust = || gpu::saxpy_launch(&gpu, flavour, &x, &y, &mut rust_out, a);
            // SAFETY: saxpy.cu's saxpy(const float*, const float*, float*, unsigned, float): the
            // parameters of saxpy_raw; the buffers hold n floats.
            let mut nvcc = || unsafe {
                twin.launch_as(k::saxpy_raw, gpu.stream(), config, (&x, &y, &mut nvcc_out, n as u32, a))
            };
            let times = race(&gpu, repeats, &mut rust, &mut nvcc)?;
            let (r, t) = (bits(&download(&gpu, &rust_out)?), bits(&download(&gpu, &nvcc_out)?));
            let check = same("rust vs nvcc", &r, &t).and_then(|()| same("rust vs cpu", &r, &expected));
            let name = if flavour == Flavour::Safe { "saxpy (safe)" } else { "saxpy_raw (unsafe)" };
            all_ok &= row(name, &format!("{n}"), times, Work::Bytes(12.0 * n as f64), check);
        }
    }

    if wanted("jacobi") {
        let (width, height) = (8192u32, 8192u32);
        let cells = (width * height) as usize;
        let host = random.floats(cells, -1.0, 1.0);
        let input = upload(&gpu, &host)?;
        let twin = twins.kernel("jacobi", "jacobi_5pt")?;
        let config = gpu::jacobi_config(width, height);
        let expected = bits(&cpu::jacobi_5pt(&host, width as usize, height as usize));
        for flavour in [Flavour::Safe, Flavour::Raw] {
            let (mut rust_out, mut nvcc_out) = (zeros::<f32>(&gpu, cells)?, zeros::<f32>(&gpu, cells)?);
            let mut rust = || gpu::jacobi_launch(&gpu, flavour, &input, &mut rust_out, width, height);
            // SAFETY: jacobi.cu's jacobi_5pt(const float*, float*, unsigned, unsigned): the
            // parameters of jacobi_5pt_raw; both buffers hold width × height floats.
            let mut nvcc = || unsafe {
                twin.launch_as(
                    k::jacobi_5pt_raw,
                    gpu.stream(),
                    config,
                    (&input, &mut nvcc_out, width, height),
                )
            };
            let times = race(&gpu, repeats, &mut rust, &mut nvcc)?;
            let (r, t) = (bits(&download(&gpu, &rust_out)?), bits(&download(&gpu, &nvcc_out)?));
            let check = same("rust vs nvcc", &r, &t).and_then(|()| same("rust vs cpu", &r, &expected));
            let name = if flavour == Flavour::Safe { "jacobi_5pt (safe)" } else { "jacobi_5pt_raw (unsafe)" };
            all_ok &= row(name, &format!("{width}x{height}"), times, Work::Bytes(8.0 * cells as f64), check);
        }
    }

    if wanted("jacobi_tiled") {
        let (width, height) = (8192u32, 8192u32);
        let cells = (width * height) as usize;
        let host = random.floats(cells, -1.0, 1.0);
        let input = upload(&gpu, &host)?;
        let twin = twins.kernel("jacobi", "jacobi_5pt_tiled")?;
        let config = gpu::jacobi_tiled_config(width, height);
        let expected = bits(&cpu::jacobi_5pt(&host, width as usize, height as usize));
        for flavour in [Flavour::Safe, Flavour::Raw] {
            let (mut rust_out, mut nvcc_out) = (zeros::<f32>(&gpu, cells)?, zeros::<f32>(&gpu, cells)?);
            let mut rust = || gpu::jacobi_tiled_launch(&gpu, flavour, &input, &mut rust_out, width, height);
            // SAFETY: jacobi.cu's jacobi_5pt_tiled(const float*, float*, unsigned, unsigned): the
            // parameters of jacobi_5pt_tiled_raw; both buffers hold width × height floats; the
            // blocks are 32×8, as the twin's tile needs.
            let mut nvcc = || unsafe {
                twin.launch_as(
                    k::jacobi_5pt_tiled_raw,
                    gpu.stream(),
                    config,
                    (&input, &mut nvcc_out, width, height),
                )
            };
            let times = race(&gpu, repeats, &mut rust, &mut nvcc)?;
            let (r, t) = (bits(&download(&gpu, &rust_out)?), bits(&download(&gpu, &nvcc_out)?));
            let check = same("rust vs nvcc", &r, &t).and_then(|()| same("rust vs cpu", &r, &expected));
            let name = if flavour == Flavour::Safe {
                "jacobi_5pt_tiled (safe)"
            } else {
                "jacobi_5pt_tiled_raw (unsafe)"
            };
            all_ok &= row(name, &format!("{width}x{height}"), times, Work::Bytes(8.0 * cells as f64), check);
        }
    }

    if wanted("scan_lookback") {
        let n = 1usize << 26;
        let host: Vec<u32> = (0..n).map(|_| random.next_u32() >> 16).collect();
        let input = upload(&gpu, &host)?;
        let words = gpu::scan_lookback_state_len(n as u32);
        let (mut rust_state, mut nvcc_state) = (zeros::<u64>(&gpu, words)?, zeros::<u64>(&gpu, words)?);
        let (mut rust_out, mut nvcc_out) = (zeros::<u32>(&gpu, n)?, zeros::<u32>(&gpu, n)?);
        let twin = twins.kernel("scan", "scan_lookback")?;
        let config = gpu::scan_lookback_config(n as u32);
        // Both zero their state (status words and ticket) before each launch.
        let mut rust = || gpu::scan_lookback_launch(&gpu, &input, &mut rust_state, &mut rust_out);
        let mut nvcc = || {
            gpu.stream().memset_zeros(&mut nvcc_state).map_err(Error::driver("zeroing"))?;
            // SAFETY: scan.cu's scan_lookback(const unsigned*, unsigned, unsigned*, unsigned
            // long long*): the Rust kernel's parameters; n elements in and out, a zeroed status
            // word per tile and the ticket after them.
            unsafe {
                twin.launch_as(
                    k::scan_lookback,
                    gpu.stream(),
                    config,
                    (&input, n as u32, &mut nvcc_out, &mut nvcc_state),
                )
            }
        };
        let times = race(&gpu, repeats, &mut rust, &mut nvcc)?;
        let (r, t) = (download(&gpu, &rust_out)?, download(&gpu, &nvcc_out)?);
        let check =
            same("rust vs nvcc", &r, &t).and_then(|()| same("rust vs cpu", &r, &cpu::exclusive_scan(&host)));
        all_ok &= row("scan_lookback (1 pass)", &format!("{n}"), times, Work::Bytes(8.0 * n as f64), check);
    }

    if wanted("hgemm") {
        all_ok &= hgemm_row::<k::F16, _>(&gpu, &twins, &mut random, repeats, k::hgemm_f16)?;
        all_ok &= hgemm_row::<k::BF16, _>(&gpu, &twins, &mut random, repeats, k::hgemm_bf16)?;
    }

    if HOPPER_KERNELS.iter().any(|name| wanted(name)) {
        let major = gpu
            .context()
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
            .map_err(Error::driver("querying the compute capability"))?;
        if major >= 9 {
            let hopper = Gpu::open(0, &HOPPER_IMAGES)?;
            let twins = Twins { gpu: &hopper, dir: options.cubin_dir.clone() };
            all_ok &= run_hopper(&hopper, &twins, &mut random, repeats, &wanted)?;
        } else {
            for name in HOPPER_KERNELS.iter().filter(|name| wanted(name)) {
                say!(
                    "| {name} | skipped: needs compute capability 9.0 (Hopper); this GPU is {major}.x | | | | |"
                );
            }
        }
    }
    Ok(all_ok)
}

/// The half-precision GEMM of `H` (`like`: the Rust kernel, `hgemm_f16` or `hgemm_bf16`, whose
/// nvcc twin in `hgemm.cu` has its name and parameters) on 4096 × 4096 × 4096: both results
/// bit for bit against each other (the same `mma.sync` sequence into each accumulator), and
/// eight sampled rows of C against the CPU within the tensor cores' bound. One row; whether it
/// passed.
fn hgemm_row<H, K>(gpu: &Gpu, twins: &Twins, random: &mut Random, repeats: usize, like: K) -> Result<bool>
where
    H: HalfInput,
    K: Kernel<Params = (*const H, *const H, *mut f32, u32, u32, u32)>,
{
    let (m, n, kd) = (4096usize, 4096usize, 4096usize);
    // Inputs rounded to halves first: the reference multiplies the same values.
    let ha: Vec<H> = random.floats(m * kd, -1.0, 1.0).into_iter().map(H::from_f32).collect();
    let hb: Vec<H> = random.floats(n * kd, -1.0, 1.0).into_iter().map(H::from_f32).collect();
    let (a, b) = (upload(gpu, &ha)?, upload(gpu, &hb)?);
    let (mut rust_c, mut nvcc_c) = (zeros::<f32>(gpu, m * n)?, zeros::<f32>(gpu, m * n)?);
    let twin = twins.kernel("hgemm", K::NAME)?;
    let shape = (m as u32, n as u32, kd as u32);
    let config = gpu::hgemm_config(shape.0, shape.1);
    let mut rust = || gpu::hgemm_launch(gpu, &a, &b, &mut rust_c, shape.0, shape.1, shape.2);
    // SAFETY: hgemm.cu's hgemm_f16 / hgemm_bf16(const half*, const half*, float*, unsigned × 3):
    // `like`'s parameters; the buffers hold m·k, n·k and m·n elements; k is a multiple of 8.
    let mut nvcc = || unsafe {
        twin.launch_as(like, gpu.stream(), config, (&a, &b, &mut nvcc_c, shape.0, shape.1, shape.2))
    };
    let times = race(gpu, repeats, &mut rust, &mut nvcc)?;
    let (r, t) = (download(gpu, &rust_c)?, download(gpu, &nvcc_c)?);
    let wide_b: Vec<f32> = hb.iter().map(|h| h.to_f32()).collect();
    let check = same("rust vs nvcc", &bits(&r), &bits(&t)).and_then(|()| {
        (0..8).map(|s| s * (m / 8) + s * 13 % 64).try_for_each(|row| {
            let wide_a: Vec<f32> = ha[row * kd..(row + 1) * kd].iter().map(|h| h.to_f32()).collect();
            let expected = cpu::gemm_nt(&wide_a, &wide_b, 1, n, kd);
            match expected
                .iter()
                .enumerate()
                .find(|&(col, &(exact, bound))| (r[row * n + col] as f64 - exact).abs() > bound)
            {
                Some((col, &(exact, bound))) => Err(format!(
                    "rust vs cpu at ({row}, {col}): {} vs {exact} ± {bound:.3e}",
                    r[row * n + col]
                )),
                None => Ok(()),
            }
        })
    });
    let flops = 2.0 * (m * n * kd) as f64;
    Ok(row(K::NAME, &format!("{m}x{n}x{kd}"), times, Work::TensorFlops(flops), check))
}

/// The Hopper kernels' rows (the twins of `tma.cu`, `cluster_reduce.cu`, `tma_stencil.cu`), on a
/// `Gpu` opened with [`HOPPER_IMAGES`] (sm_90+); returns whether every check passed.
fn run_hopper(
    gpu: &Gpu,
    twins: &Twins,
    random: &mut Random,
    repeats: usize,
    wanted: &dyn Fn(&str) -> bool,
) -> Result<bool> {
    let mut all_ok = true;

    if wanted("tma_transpose") {
        let (width, height) = (8192u32, 8192u32);
        let cells = (width * height) as usize;
        let host = random.floats(cells, -1.0, 1.0);
        let input = upload(gpu, &host)?;
        let (rust_out, nvcc_out) = (zeros::<f32>(gpu, cells)?, zeros::<f32>(gpu, cells)?);
        let tile = k::TMA_TILE;
        let input_spec = TensorMapSpec::packed([width.into(), height.into()], [tile, tile]);
        let output_spec = TensorMapSpec::packed([height.into(), width.into()], [tile, tile]);
        let input_map = gpu.tensor_map(&input, input_spec)?;
        let (rust_map, nvcc_map) =
            (gpu.tensor_map(&rust_out, output_spec)?, gpu.tensor_map(&nvcc_out, output_spec)?);
        let twin = twins.kernel("tma", "tma_transpose_f32")?;
        // As cookbook::hopper::tma_transpose launches it: one block per 32 × 32 box.
        let config = LaunchConfig {
            grid_dim: (width.div_ceil(tile), height.div_ceil(tile), 1),
            block_dim: (k::TMA_BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut rust = || gpu.launch(k::tma_transpose_f32, config, (&input_map, &rust_map));
        // SAFETY: tma.cu's tma_transpose_f32(const CUtensorMap*, const CUtensorMap*): the maps
        // (in device memory) describe the input (width × height) and this output (height ×
        // width), boxes of 32 × 32 f32, as for the Rust kernel.
        let mut nvcc =
            || unsafe { twin.launch_as(k::tma_transpose_f32, gpu.stream(), config, (&input_map, &nvcc_map)) };
        let times = race(gpu, repeats, &mut rust, &mut nvcc)?;
        drop((input_map, rust_map, nvcc_map));
        let (r, t) = (download(gpu, &rust_out)?, download(gpu, &nvcc_out)?);
        let check = same("rust vs nvcc", &bits(&r), &bits(&t)).and_then(|()| {
            same("rust vs cpu", &bits(&r), &bits(&cpu::transpose(&host, width as usize, height as usize)))
        });
        all_ok &= row(
            "tma_transpose_f32",
            &format!("{width}x{height}"),
            times,
            Work::Bytes(8.0 * cells as f64),
            check,
        );
    }

    if wanted("bulk_scale") {
        let n = 1usize << 26;
        let host = random.floats(n, -4.0, 4.0);
        let a = 1.5f32;
        let x = upload(gpu, &host)?;
        let (mut rust_y, mut nvcc_y) = (zeros::<f32>(gpu, n)?, zeros::<f32>(gpu, n)?);
        let twin = twins.kernel("tma", "bulk_scale_f32")?;
        // As cookbook::hopper::bulk_scale launches it: one block per chunk of 2048.
        let config = LaunchConfig {
            grid_dim: ((n as u32).div_ceil(k::BULK_CHUNK), 1, 1),
            block_dim: (k::TMA_BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut rust = || gpu.launch(k::bulk_scale_f32, config, (&x, &mut rust_y, n as u32, a));
        // SAFETY: tma.cu's bulk_scale_f32(const float*, float*, unsigned, float); both buffers
        // hold n floats (16-byte aligned allocations).
        let mut nvcc = || unsafe {
            twin.launch_as(k::bulk_scale_f32, gpu.stream(), config, (&x, &mut nvcc_y, n as u32, a))
        };
        let times = race(gpu, repeats, &mut rust, &mut nvcc)?;
        let (r, t) = (bits(&download(gpu, &rust_y)?), bits(&download(gpu, &nvcc_y)?));
        let check =
            same("rust vs nvcc", &r, &t).and_then(|()| same("rust vs cpu", &r, &bits(&cpu::scale(a, &host))));
        all_ok &= row("bulk_scale_f32", &format!("{n}"), times, Work::Bytes(8.0 * n as f64), check);
    }

    if wanted("cluster_histogram") {
        let n = 1usize << 26;
        let host = random.words(n);
        let values = upload(gpu, &host)?;
        let bins_len = k::CLUSTER_BINS as usize;
        let (mut rust_bins, mut nvcc_bins) = (zeros::<u32>(gpu, bins_len)?, zeros::<u32>(gpu, bins_len)?);
        let twin = twins.kernel("tma", "cluster_histogram_1024")?;
        // 256 clusters of 4 blocks of 256 threads (1024 blocks, as histogram_256's most): a
        // grid-stride loop of 256 values per thread.
        let cluster = (k::HISTOGRAM_CLUSTER, 1, 1);
        let config = LaunchConfig {
            grid_dim: (256 * k::HISTOGRAM_CLUSTER, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut rust = || {
            gpu.stream().memset_zeros(&mut rust_bins).map_err(Error::driver("zeroing"))?;
            gpu.launch_cluster(
                k::cluster_histogram_1024,
                config,
                cluster,
                (&values, n as u32, &mut rust_bins),
            )
        };
        let mut nvcc = || {
            gpu.stream().memset_zeros(&mut nvcc_bins).map_err(Error::driver("zeroing"))?;
            // SAFETY: tma.cu's cluster_histogram_1024(const unsigned*, unsigned, unsigned*),
            // compiled with __cluster_dims__(4, 1, 1): a plain launch runs it in the Rust
            // launch's clusters (the grid a multiple of 4); values holds n words, bins 1024.
            unsafe {
                twin.launch_as(
                    k::cluster_histogram_1024,
                    gpu.stream(),
                    config,
                    (&values, n as u32, &mut nvcc_bins),
                )
            }
        };
        let times = race(gpu, repeats, &mut rust, &mut nvcc)?;
        let (r, t) = (download(gpu, &rust_bins)?, download(gpu, &nvcc_bins)?);
        let check =
            same("rust vs nvcc", &r, &t).and_then(|()| same("rust vs cpu", &r, &cpu::histogram_1024(&host)));
        all_ok &=
            row("cluster_histogram_1024", &format!("{n} words"), times, Work::Bytes(4.0 * n as f64), check);
    }

    if wanted("cluster_reduce") {
        let n = 1usize << 26;
        let host = random.floats(n, -1.0, 1.0);
        let x = upload(gpu, &host)?;
        let (mut rust_sum, mut nvcc_sum) = (zeros::<f32>(gpu, 1)?, zeros::<f32>(gpu, 1)?);
        let twin = twins.kernel("cluster_reduce", "cluster_reduce_f32")?;
        // As cookbook::hopper::cluster_reduce launches it: 256 clusters of 8 blocks of 256
        // threads (2048 blocks, as reduce_sum_f32's), 16 elements per thread.
        let (config, cluster) = hopper::cluster_reduce_config(hopper::cluster_reduce_clusters(n as u32));
        let mut rust = || {
            gpu.stream().memset_zeros(&mut rust_sum).map_err(Error::driver("zeroing"))?;
            gpu.launch_cluster(k::cluster_reduce_f32, config, cluster, (&x, n as u32, &mut rust_sum))
        };
        let mut nvcc = || {
            gpu.stream().memset_zeros(&mut nvcc_sum).map_err(Error::driver("zeroing"))?;
            // SAFETY: cluster_reduce.cu's cluster_reduce_f32(const float*, unsigned, float*),
            // compiled with __cluster_dims__(8, 1, 1): a plain launch runs it in the Rust
            // launch's clusters (the grid a multiple of 8); x holds n floats, sum one.
            unsafe {
                twin.launch_as(k::cluster_reduce_f32, gpu.stream(), config, (&x, n as u32, &mut nvcc_sum))
            }
        };
        let times = race(gpu, repeats, &mut rust, &mut nvcc)?;
        let (r, t) = (download(gpu, &rust_sum)?[0], download(gpu, &nvcc_sum)?[0]);
        let (exact, bound) = cpu::sum(&host);
        let check = if (r as f64 - exact).abs() > bound || (t as f64 - exact).abs() > bound {
            Err(format!("rust {r}, nvcc {t}, exact {exact} ± {bound:.3e}"))
        } else {
            Ok(())
        };
        all_ok &= row("cluster_reduce_f32", &format!("{n}"), times, Work::Bytes(4.0 * n as f64), check);
    }

    if wanted("tma_stencil") {
        let (nx, ny, nz) = (512u32, 512u32, 256u32);
        let cells = nx as usize * ny as usize * nz as usize;
        let host = random.floats(cells, -1.0, 1.0);
        let input = upload(gpu, &host)?;
        let (mut rust_out, mut nvcc_out) = (zeros::<f32>(gpu, cells)?, zeros::<f32>(gpu, cells)?);
        let map = gpu.tensor_map(&input, hopper::tma_stencil_spec(nx, ny, nz))?;
        let twin = twins.kernel("tma_stencil", "tma_stencil_7pt")?;
        // As cookbook::hopper::tma_stencil launches it: a block of 32 × 8 threads per 32 × 8 × 8
        // tile.
        let config = hopper::tma_stencil_config(nx, ny, nz);
        let mut rust = || gpu.launch(k::tma_stencil_7pt, config, (&map, &mut rust_out, nx, ny, nz));
        // SAFETY: tma_stencil.cu's tma_stencil_7pt(const CUtensorMap*, float*, unsigned × 3): the
        // map (in device memory) describes the nx × ny × nz input with boxes of 36 × 10 × 10 f32,
        // as for the Rust kernel; the output holds nx·ny·nz floats.
        let mut nvcc = || unsafe {
            twin.launch_as(k::tma_stencil_7pt, gpu.stream(), config, (&map, &mut nvcc_out, nx, ny, nz))
        };
        let times = race(gpu, repeats, &mut rust, &mut nvcc)?;
        drop(map);
        let (r, t) = (bits(&download(gpu, &rust_out)?), bits(&download(gpu, &nvcc_out)?));
        let expected = bits(&cpu::jacobi_7pt(&host, nx as usize, ny as usize, nz as usize));
        let check = same("rust vs nvcc", &r, &t).and_then(|()| same("rust vs cpu", &r, &expected));
        all_ok &=
            row("tma_stencil_7pt", &format!("{nx}x{ny}x{nz}"), times, Work::Bytes(8.0 * cells as f64), check);
    }

    if wanted("wgmma_gemm") || wanted("gemm_tma_wgmma") {
        all_ok &= wgmma_rows(gpu, twins, random, repeats, wanted)?;
    }
    Ok(all_ok)
}

/// The `wgmma` GEMMs' rows (`wgmma_gemm_bf16` and `gemm_tma_wgmma_bf16` against their twins in
/// `wgmma.cu`, built for sm_90a) on 8192 × 8192 × 8192 bf16, one set of inputs for both: each
/// pair of results bit for bit against each other (the same `wgmma` sequence into each
/// accumulator), and eight sampled rows of C against the CPU within the tensor cores' bound
/// ([`cpu::gemm_nt`]). TFLOP/s count 2·m·n·k. The TMA maps are built once, outside the timing.
fn wgmma_rows(
    gpu: &Gpu,
    twins: &Twins,
    random: &mut Random,
    repeats: usize,
    wanted: &dyn Fn(&str) -> bool,
) -> Result<bool> {
    let (m, n, kd) = (8192usize, 8192usize, 8192usize);
    let shape = (m as u32, n as u32, kd as u32);
    let ha: Vec<k::BF16> = random.floats(m * kd, -1.0, 1.0).into_iter().map(k::BF16::from_f32).collect();
    let hb: Vec<k::BF16> = random.floats(n * kd, -1.0, 1.0).into_iter().map(k::BF16::from_f32).collect();
    let (a, b) = (upload(gpu, &ha)?, upload(gpu, &hb)?);
    let (mut rust_c, mut nvcc_c) = (zeros::<f32>(gpu, m * n)?, zeros::<f32>(gpu, m * n)?);
    let wide_b: Vec<f32> = hb.iter().map(|h| h.to_f32()).collect();
    // Bit for bit Rust against nvcc, then eight sampled rows of Rust's C against the CPU.
    let check = |r: &[f32], t: &[f32]| {
        same("rust vs nvcc", &bits(r), &bits(t)).and_then(|()| {
            (0..8).map(|s| s * (m / 8) + s * 13 % 64).try_for_each(|row| {
                let wide_a: Vec<f32> = ha[row * kd..(row + 1) * kd].iter().map(|h| h.to_f32()).collect();
                let expected = cpu::gemm_nt(&wide_a, &wide_b, 1, n, kd);
                match expected
                    .iter()
                    .enumerate()
                    .find(|&(col, &(exact, bound))| (r[row * n + col] as f64 - exact).abs() > bound)
                {
                    Some((col, &(exact, bound))) => Err(format!(
                        "rust vs cpu at ({row}, {col}): {} vs {exact} ± {bound:.3e}",
                        r[row * n + col]
                    )),
                    None => Ok(()),
                }
            })
        })
    };
    let size = format!("{m}x{n}x{kd}");
    let flops = 2.0 * (m * n * kd) as f64;
    let mut all_ok = true;

    if wanted("wgmma_gemm") {
        let twin = twins.kernel("wgmma", "wgmma_gemm_bf16")?;
        // As cookbook::hopper::wgmma_gemm launches it: one warpgroup per 64 × 64 tile of C.
        let config = LaunchConfig {
            grid_dim: (shape.1.div_ceil(k::WGMMA_TILE), shape.0.div_ceil(k::WGMMA_TILE), 1),
            block_dim: (k::WGMMA_BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut rust =
            || gpu.launch(k::wgmma_gemm_bf16, config, (&a, &b, &mut rust_c, shape.0, shape.1, shape.2));
        // SAFETY: wgmma.cu's wgmma_gemm_bf16(const __nv_bfloat16*, const __nv_bfloat16*, float*,
        // unsigned × 3): the Rust kernel's parameters; the buffers hold m·k, n·k and m·n
        // elements; k is a multiple of 8.
        let mut nvcc = || unsafe {
            twin.launch_as(
                k::wgmma_gemm_bf16,
                gpu.stream(),
                config,
                (&a, &b, &mut nvcc_c, shape.0, shape.1, shape.2),
            )
        };
        let times = race(gpu, repeats, &mut rust, &mut nvcc)?;
        let (r, t) = (download(gpu, &rust_c)?, download(gpu, &nvcc_c)?);
        all_ok &= row("wgmma_gemm_bf16", &size, times, Work::TensorFlops(flops), check(&r, &t));
    }

    if wanted("gemm_tma_wgmma") {
        let twin = twins.kernel("wgmma", "gemm_tma_wgmma_bf16")?;
        twin.allow_dynamic_shared_bytes(k::GEMM_SHARED_BYTES)?;
        // As cookbook::hopper::gemm_tma_wgmma_launch builds them: 64 × 128 boxes (64 along K),
        // the 128-byte swizzle.
        let boxed = [k::GEMM_DEPTH, k::GEMM_TILE];
        let spec = |rows: u32| {
            TensorMapSpec::packed([shape.2.into(), rows.into()], boxed)
                .with_swizzle(ptxkit_host::TmaSwizzle::B128)
        };
        let (a_map, b_map) = (gpu.tensor_map(&a, spec(shape.0))?, gpu.tensor_map(&b, spec(shape.1))?);
        // As gemm_tma_wgmma_launch launches it: one block of 384 threads per 128 × 128 tile of
        // C, the ring's dynamic shared memory (the Rust launch adds it itself).
        let config = LaunchConfig {
            grid_dim: (shape.1.div_ceil(k::GEMM_TILE), shape.0.div_ceil(k::GEMM_TILE), 1),
            block_dim: (k::GEMM_BLOCK, 1, 1),
            shared_mem_bytes: k::GEMM_SHARED_BYTES,
        };
        let mut rust = || {
            gpu.launch(
                k::gemm_tma_wgmma_bf16,
                config,
                (&a_map, &b_map, &mut rust_c, shape.0, shape.1, shape.2),
            )
        };
        // SAFETY: wgmma.cu's gemm_tma_wgmma_bf16(const CUtensorMap*, const CUtensorMap*, float*,
        // unsigned × 3): the maps (in device memory) describe A (m × k) and B (n × k) with
        // 64 × 128 boxes of bf16 in the 128-byte swizzle, as for the Rust kernel; C holds m·n
        // floats; the launch gives the GEMM_SHARED_BYTES allowed above.
        let mut nvcc = || unsafe {
            twin.launch_as(
                k::gemm_tma_wgmma_bf16,
                gpu.stream(),
                config,
                (&a_map, &b_map, &mut nvcc_c, shape.0, shape.1, shape.2),
            )
        };
        let times = race(gpu, repeats, &mut rust, &mut nvcc)?;
        drop((a_map, b_map));
        let (r, t) = (download(gpu, &rust_c)?, download(gpu, &nvcc_c)?);
        all_ok &= row("gemm_tma_wgmma_bf16", &size, times, Work::TensorFlops(flops), check(&r, &t));
    }
    Ok(all_ok)
}
