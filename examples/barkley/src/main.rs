//! `barkley`: a broken wave curls into a spiral; runs on GPU 0 if there is one (else on the
//! CPU, and says so) and writes the final fields as a PNG.

use std::{path::PathBuf, process::ExitCode, time::Instant};

use barkley::{Field, Model};
use clap::Parser;

/// Barkley's spiral waves: a broken wave curls into a rotating spiral. Writes the final
/// (u, v) as a PNG. Runs on GPU 0 if there is one, else on the CPU.
#[derive(Parser)]
struct Args {
    /// Grid width in cells (spacing 0.5).
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(8..=8192))]
    width: u32,
    /// Grid height in cells (spacing 0.5).
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(8..=8192))]
    height: u32,
    /// Time steps of 0.02.
    #[arg(long, default_value_t = 2500, allow_negative_numbers = true)]
    steps: u32,
    /// The PNG to write.
    #[arg(long, short, default_value = "barkley.png")]
    output: PathBuf,
    /// Run on the CPU even where there is a GPU.
    #[arg(long)]
    cpu: bool,
}

fn main() -> ExitCode {
    match run(&Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("barkley: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> barkley::Result<()> {
    barkley::check_output(&args.output)?;
    let model = Model::default();
    let mut field = Field::broken_wave(args.width, args.height, &model);
    let gpu = match args.cpu {
        true => None,
        false => match ptxkit_host::Gpu::open(0, &barkley::IMAGES) {
            Ok(gpu) => Some(gpu),
            Err(ptxkit_host::Error::NoGpu(why)) => {
                eprintln!("barkley: no usable CUDA GPU ({why}): running on the CPU");
                None
            }
            Err(e) => return Err(e.into()),
        },
    };
    let start = Instant::now();
    let device = match gpu {
        Some(gpu) => {
            barkley::step_gpu(&gpu, &mut field, &model.coefficients(), args.steps)?;
            format!("the GPU ({}, {})", gpu.name(), gpu.image())
        }
        None => {
            barkley::step_cpu(&mut field, &model.coefficients(), args.steps);
            "the CPU".to_string()
        }
    };
    let seconds = start.elapsed().as_secs_f64();
    barkley::write_output(&args.output, &barkley::encode_png(&field)?)?;
    println!(
        "{} steps of {}x{} on {device} in {seconds:.2} s; wrote {}",
        args.steps,
        args.width,
        args.height,
        args.output.display()
    );
    Ok(())
}
