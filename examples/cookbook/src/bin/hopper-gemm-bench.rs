//! `hopper-gemm-bench [SIZE]`: the bf16 GEMMs of the cookbook at SIZE³ (default 8192) on one
//! GPU, timed with CUDA events after warm-up (median of 21 runs): `hgemm_bf16` (`mma.sync`),
//! `wgmma_gemm_bf16` (single-buffered `wgmma`) and `gemm_tma_wgmma_bf16` (TMA and `wgmma`,
//! warp-specialised; sm_90). Prints one Markdown row each, TFLOP/s counting 2·SIZE³. No twin:
//! `scripts/torch-matmul.py SIZE` times `torch.matmul` in bf16 beside it in the same lease.

use std::process::ExitCode;

/// `println!` that never panics: the line is lost where standard output is closed or full.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

/// `eprintln!` that never panics.
macro_rules! esay {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

use cookbook::{HOPPER_IMAGES, IMAGES, gpu, random::Random};
use cookbook_kernels as k;
use ptxkit_host::{Gpu, Result, TensorMapSpec, Timer, TmaSwizzle, cudarc::driver::LaunchConfig};

fn median_ms(gpu: &Gpu, mut run: impl FnMut() -> Result<()>) -> Result<f32> {
    for _ in 0..3 {
        run()?;
    }
    let mut times = Vec::new();
    for _ in 0..21 {
        let timer = Timer::start(gpu)?;
        run()?;
        times.push(timer.stop()?);
    }
    times.sort_by(f32::total_cmp);
    Ok(times[times.len() / 2])
}

fn main() -> ExitCode {
    // A bad command line: one line and exit 2, before any GPU is looked for (as cookbook-bench).
    let size = match parse_size(std::env::args_os().skip(1).collect()) {
        Ok(size) => size,
        Err(why) => {
            esay!("hopper-gemm-bench: {why}");
            return ExitCode::from(2);
        }
    };
    match bench(size) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            esay!("hopper-gemm-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The largest SIZE: three SIZE² matrices (two bf16, one f32) and their host copies stay
/// within a GPU's and a machine's memory (32768²: 4 GiB for C).
const MAX_SIZE: u32 = 32768;

/// SIZE from the command line (8192 without one): a multiple of 128 from 128 to [`MAX_SIZE`];
/// anything else (more arguments, not a number, not UTF-8) refused in one line.
fn parse_size(args: Vec<std::ffi::OsString>) -> std::result::Result<u32, String> {
    match args.as_slice() {
        [] => Ok(8192),
        [arg] => arg
            .to_str()
            .and_then(|text| text.parse::<u32>().ok())
            .filter(|s| (128..=MAX_SIZE).contains(s) && s.is_multiple_of(128))
            .ok_or_else(|| format!("SIZE {arg:?}: a multiple of 128 from 128 to {MAX_SIZE}")),
        _ => Err("usage: hopper-gemm-bench [SIZE]".into()),
    }
}

fn bench(size: u32) -> Result<()> {
    let classic = Gpu::open(0, &IMAGES)?;
    let hopper = Gpu::open(0, &HOPPER_IMAGES)?;
    say!("GPU: {} ({})", classic.name(), hopper.image());
    let mut r = Random::new(0x6e44);
    let n = size as usize * size as usize;
    let a: Vec<k::BF16> = r.floats(n, -1.0, 1.0).into_iter().map(k::BF16::from_f32).collect();
    let b: Vec<k::BF16> = r.floats(n, -1.0, 1.0).into_iter().map(k::BF16::from_f32).collect();
    let flops = 2.0 * f64::from(size).powi(3);
    let row = |name: &str, ms: f32| {
        say!("| {name} | {size}³ | {ms:.4} | {:.1} |", flops / (f64::from(ms) * 1e-3) / 1e12)
    };
    say!("| kernel | size | ms | TFLOP/s |\n| --- | --- | --- | --- |");
    {
        let (d_a, d_b) = (gpu::upload(&classic, &a)?, gpu::upload(&classic, &b)?);
        let mut c = gpu::zeros::<f32>(&classic, n)?;
        row(
            "hgemm_bf16 (mma.sync)",
            median_ms(&classic, || gpu::hgemm_launch(&classic, &d_a, &d_b, &mut c, size, size, size))?,
        );
    }
    let (d_a, d_b) = (gpu::upload(&hopper, &a)?, gpu::upload(&hopper, &b)?);
    let mut c = gpu::zeros::<f32>(&hopper, n)?;
    let simple = LaunchConfig {
        grid_dim: (size / k::WGMMA_TILE, size / k::WGMMA_TILE, 1),
        block_dim: (k::WGMMA_BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    row(
        "wgmma_gemm_bf16 (wgmma, single-buffered)",
        median_ms(&hopper, || {
            hopper.launch(k::wgmma_gemm_bf16, simple, (&d_a, &d_b, &mut c, size, size, size))
        })?,
    );
    // The tensor maps are built once, outside the timing (as torch's descriptors are cached).
    let boxed = [k::GEMM_DEPTH, k::GEMM_TILE];
    let spec = TensorMapSpec::packed([size.into(), size.into()], boxed).with_swizzle(TmaSwizzle::B128);
    let (a_map, b_map) = (hopper.tensor_map(&d_a, spec)?, hopper.tensor_map(&d_b, spec)?);
    let warp_specialised = LaunchConfig {
        grid_dim: (size / k::GEMM_TILE, size / k::GEMM_TILE, 1),
        block_dim: (k::GEMM_BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    row(
        "gemm_tma_wgmma_bf16 (TMA + wgmma, warp-specialised)",
        median_ms(&hopper, || {
            hopper.launch(
                k::gemm_tma_wgmma_bf16,
                warp_specialised,
                (&a_map, &b_map, &mut c, size, size, size),
            )
        })?,
    );
    Ok(())
}
