//! `rust-gpu-sim bench ...`: arguments checked before any GPU work, then the library's benches.

use std::{io::Write, path::PathBuf};

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use serde::Serialize;
use simulations::{
    BackendChoice,
    bench::{
        self, Measurements, Report,
        grayscott::{GrayScottReport, Options},
    },
    grayscott::Variant,
    heat::HeatVariant,
    physarum::PhysarumVariant,
    render::output::AtomicFile,
    split::decomposition::Launcher,
};

use super::{
    choice::choice,
    options::{self, Target},
};
use crate::say;

#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Every Gray-Scott GPU variant at several sizes, plus the default GIF job end to end.
    Grayscott(GrayScottBenchArgs),
    /// Every heat GPU variant: ms per RK4 step against the 8 B/cell floor.
    Heat(HeatBenchArgs),
    /// Every Physarum GPU variant: agent-steps per second, and the write-up's tiny case.
    Physarum(PhysarumBenchArgs),
    /// The GIF and MP4 encoders alone on the default job's 200 frames: wall and CPU seconds,
    /// bytes. Runs on any machine (the frames come from the GPU if there is one).
    Encode(EncodeBenchArgs),
    /// Draw the chart of a saved report (`bench grayscott --json`), on any machine.
    Plot {
        /// The JSON report.
        #[arg(long, value_name = "PATH")]
        json: PathBuf,
        /// The PNG to write.
        #[arg(long, value_name = "PATH")]
        out: PathBuf,
    },
}

/// What every bench takes.
#[derive(Args, Debug)]
pub struct CommonArgs {
    /// Timed repeats per measurement (the median is reported), at least 3.
    #[arg(long, default_value_t = 7, allow_hyphen_values = true)]
    repeats: usize,
    /// Also write every figure as JSON.
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct GrayScottBenchArgs {
    /// Grid sides to time (square grids), comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = [512, 2048, 4096], allow_hyphen_values = true)]
    sizes: Vec<u32>,
    /// Variants to time, comma-separated (GPU variants only).
    #[arg(long, value_parser = choice::<Variant>(), value_delimiter = ',', default_values_t = Variant::benched_by_default())]
    variants: Vec<Variant>,
    #[command(flatten)]
    common: CommonArgs,
    /// Use the fixed default launch shapes instead of tuned ones.
    #[arg(long)]
    no_autotune: bool,
    /// Instead of the variant table: each variant split into these numbers of parts on this
    /// GPU (e.g. 1,2,4), time per step against one part, the exchange alone, and a model of
    /// several GPUs.
    #[arg(long, value_delimiter = ',', value_name = "P,...", allow_hyphen_values = true)]
    split: Vec<u32>,
    #[command(flatten)]
    scaling: ScalingArgs,
    /// Skip the end-to-end GIF job.
    #[arg(long)]
    no_end_to_end: bool,
    /// Under mpirun (NCCL ranks): a part steps the rows its neighbours need first and
    /// exchanges them while it steps its middle, as a run's --overlap.
    #[arg(long)]
    overlap: bool,
    /// Also draw effective bandwidth per variant against the copy bandwidth (PNG).
    #[arg(long, value_name = "PATH")]
    plot: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct HeatBenchArgs {
    /// Grid sides (cubes), comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = [600], allow_hyphen_values = true)]
    sizes: Vec<u32>,
    /// Variants to time, comma-separated (GPU variants only).
    #[arg(long, value_parser = choice::<HeatVariant>(), value_delimiter = ',', default_values_t = [HeatVariant::Naive, HeatVariant::Reuse, HeatVariant::Fused, HeatVariant::Tiled, HeatVariant::Single])]
    variants: Vec<HeatVariant>,
    /// Instead of the variant table: each variant in these numbers of z slabs on this GPU
    /// (e.g. 1,2,4), time per step against one part and the exchange alone.
    #[arg(long, value_delimiter = ',', value_name = "P,...", allow_hyphen_values = true)]
    split: Vec<u32>,
    #[command(flatten)]
    scaling: ScalingArgs,
    /// With --gpus or under mpirun: the single variant writes each slab in halves, in turns,
    /// and exchanges each half's edge while it writes the other (the default on 2 GPUs or
    /// more, as for a run).
    #[arg(long, overrides_with = "no_overlap")]
    overlap: bool,
    /// With --gpus or under mpirun: the single variant exchanges after each whole step.
    #[arg(long, overrides_with = "overlap")]
    no_overlap: bool,
    #[command(flatten)]
    common: CommonArgs,
}

/// Scaling over several GPUs: `--gpus 1,2,4` in this process, or every process of an
/// `mpirun`/`srun` job one part.
#[derive(Args, Debug)]
pub struct ScalingArgs {
    /// Instead of the variant table: strong scaling over these numbers of GPUs of this
    /// process (e.g. 1,2,4; start with 1, the baseline): time per step, efficiency, the
    /// exchange alone and what of it is exposed. Under mpirun or srun the job's processes,
    /// one GPU each, are timed against rank 0's GPU alone.
    #[arg(long, value_delimiter = ',', value_name = "N,...", allow_hyphen_values = true)]
    gpus: Vec<u32>,
    /// Also weak scaling: the grid N times larger on N GPUs (Gray-Scott N times the rows,
    /// heat N times the planes).
    #[arg(long)]
    weak: bool,
    /// Under a launcher, without NCCL_COMM_ID: the file through which rank 0 hands out NCCL's
    /// id (as for grayscott and heat).
    #[arg(long, value_name = "PATH")]
    nccl_id_file: Option<PathBuf>,
    /// Under a launcher: seconds any wait on another process may go without progress.
    #[arg(long, value_name = "SECONDS", default_value_t = 300.0, allow_hyphen_values = true)]
    peer_timeout: f64,
}

impl ScalingArgs {
    /// The launcher job this bench is one process of, if it has several; refuses `--gpus`
    /// that disagrees with it and GPU counts beyond this machine's.
    fn job(&self, launcher: &Launcher) -> Result<Option<simulations::split::decomposition::LaunchRank>> {
        if !(self.peer_timeout.is_finite() && self.peer_timeout > 0.0 && self.peer_timeout <= 86_400.0) {
            bail!(
                "--peer-timeout must be a number of seconds above 0, at most 86400, got {}",
                self.peer_timeout
            );
        }
        let job = launcher.job()?.filter(|j| j.size > 1);
        if let Some(job) = job {
            if self.gpus.iter().any(|&n| n as usize != job.size && n != 1) {
                return Err(simulations::Error::SameOnEveryRank(format!(
                    "--gpus under {}: the job's {} processes are the GPUs (each is timed against rank 0's GPU \
                     alone); leave --gpus out",
                    job.launcher, job.size
                ))
                .into());
            }
            return Ok(Some(job));
        }
        if self.gpus.iter().any(|&n| n == 0 || n > 64) {
            bail!("--gpus must list GPU counts between 1 and 64");
        }
        if self.nccl_id_file.is_some() {
            bail!("--nccl-id-file is for a bench started by mpirun or srun as several processes");
        }
        Ok(None)
    }

    /// Whether the scaling bench runs (instead of the variant table).
    fn wanted(&self, job: Option<simulations::split::decomposition::LaunchRank>) -> bool {
        job.is_some() || !self.gpus.is_empty()
    }

    /// Runs the scaling bench of `workloads` and prints its table (rank 0 of a job only).
    fn run(
        &self,
        job: Option<simulations::split::decomposition::LaunchRank>,
        workloads: &[bench::scaling::Workload],
        repeats: usize,
        json: Option<AtomicFile>,
    ) -> Result<()> {
        let first = open_gpu()?;
        let (rows, machine) = match job {
            Some(job) => {
                // Heat's overlapped halves leave NCCL a few SMs only.
                let heat_overlap = workloads.iter().any(|w| match *w {
                    bench::scaling::Workload::Heat { variant, overlap, .. } => {
                        overlap.unwrap_or(simulations::heat::parts::overlap_by_default(variant, job.size))
                    }
                    bench::scaling::Workload::GrayScott { .. } => false,
                });
                let comm = super::options::connect_rank(
                    &first,
                    Some(job),
                    self.nccl_id_file.clone(),
                    self.peer_timeout,
                    heat_overlap.then_some(simulations::heat::parts::NCCL_FREE_SMS),
                )?;
                let gpu = comm.gpu().clone();
                let rows = bench::scaling::run_ranks(comm, workloads, self.weak, repeats)?;
                if job.rank > 0 {
                    return Ok(());
                }
                (rows, bench::Machine::measure(&gpu)?)
            }
            None => {
                let most = self.gpus.iter().copied().max().unwrap_or(1) as usize;
                let present = simulations::cuda::device_count()?;
                if most > present {
                    bail!(
                        "--gpus {most}: this machine has {present} CUDA GPU{}",
                        if present == 1 { "" } else { "s" }
                    );
                }
                let mut gpus = vec![first.clone()];
                for ordinal in 1..most {
                    gpus.push(simulations::cuda::open_device(ordinal)?);
                }
                let rows = bench::scaling::run_local(&gpus, workloads, &self.gpus, self.weak, repeats)?;
                (rows, bench::Machine::measure(&first)?)
            }
        };
        let header = machine.header("scaling over GPUs of this machine");
        let table = format!("{header}{}", bench::scaling::table(&rows));
        let json_text =
            serde_json::to_string_pretty(&serde_json::json!({ "machine": machine, "rows": rows }))
                .context("serialising the report")?;
        print_and_save(&table, &(json_text + "\n"), json)
    }
}

#[derive(Args, Debug)]
pub struct PhysarumBenchArgs {
    /// Grid sides (square grids), comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = [2048], allow_hyphen_values = true)]
    sizes: Vec<u32>,
    /// Agent counts, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = [1_000_000, 10_000_000], allow_hyphen_values = true)]
    agents: Vec<u32>,
    /// Variants to time, comma-separated (GPU variants only).
    #[arg(long, value_parser = choice::<PhysarumVariant>(), value_delimiter = ',', default_values_t = PhysarumVariant::GPU)]
    variants: Vec<PhysarumVariant>,
    #[command(flatten)]
    common: CommonArgs,
}

#[derive(Args, Debug)]
pub struct EncodeBenchArgs {
    /// Where the frames are computed (the encoders always run on the CPU).
    #[arg(long, value_parser = choice::<BackendChoice>(), default_value_t = BackendChoice::Auto)]
    backend: BackendChoice,
    /// Steps of the job (default: the preset's 10,000); a frame every steps/200 (rounded down).
    #[arg(long, allow_hyphen_values = true)]
    steps: Option<u32>,
    #[command(flatten)]
    common: CommonArgs,
}

pub fn run(command: BenchCommand, launcher: &Launcher) -> Result<()> {
    match command {
        BenchCommand::Grayscott(args) => grayscott(args, launcher),
        BenchCommand::Heat(args) => heat(args, launcher),
        BenchCommand::Physarum(args) => physarum(args),
        BenchCommand::Encode(args) => encode(args),
        BenchCommand::Plot { json, out } => plot_saved(&json, &out),
    }
}

impl CommonArgs {
    /// Checks the repeats and every output (`extra` besides `--json`), before any GPU work;
    /// opens the JSON file.
    fn check(&self, extra: &[Target]) -> Result<Option<AtomicFile>> {
        if self.repeats < 3 {
            bail!("--repeats must be at least 3 (the median of fewer says little)");
        }
        let mut targets: Vec<Target> = self.json.iter().map(|p| Target::file("--json", p)).collect();
        targets.extend_from_slice(extra);
        options::check_targets(&targets)?;
        for target in extra {
            drop(AtomicFile::create(&target.path)?);
        }
        Ok(match &self.json {
            Some(path) => Some(AtomicFile::create(path)?),
            None => None,
        })
    }
}

/// Prints the table and writes the JSON report.
fn report<M: Measurements + Serialize>(report: &Report<M>, json: Option<AtomicFile>) -> Result<()> {
    print_and_save(&report.table(), &report.json(), json)
}

/// Prints a bench's table and writes its JSON (when `--json` was given).
fn print_and_save(table: &str, json_text: &str, json: Option<AtomicFile>) -> Result<()> {
    say!("{}", table.trim_end());
    if let Some(mut file) = json {
        file.write_all(json_text.as_bytes()).map_err(|e| {
            anyhow::anyhow!(
                "cannot write {}: {}",
                file.path().display(),
                simulations::render::output::describe_io(&e)
            )
        })?;
        say!("-> {}", file.commit()?.display());
    }
    Ok(())
}

fn open_gpu() -> Result<std::sync::Arc<simulations::cuda::Gpu>> {
    simulations::cuda::open().context("bench needs a CUDA GPU")
}

fn grayscott(args: GrayScottBenchArgs, launcher: &Launcher) -> Result<()> {
    if args.sizes.is_empty() || args.sizes.iter().any(|&s| s == 0 || s > 32_768) {
        bail!("--sizes must list grid sides between 1 and 32768");
    }
    if let Some(v) = args.variants.iter().find(|v| !v.is_gpu()) {
        bail!("bench times GPU variants; drop {} from --variants", v.name());
    }
    let plot: Vec<Target> = args.plot.iter().map(|p| Target::file("--plot", p)).collect();
    let json = args.common.check(&plot)?;
    if args.split.iter().any(|&p| p == 0 || p > 64) {
        bail!("--split must list part counts between 1 and 64");
    }
    let job = args.scaling.job(launcher)?;
    if args.scaling.wanted(job) {
        let workloads: Vec<_> = args
            .sizes
            .iter()
            .flat_map(|&size| {
                args.variants.iter().map(move |&variant| bench::scaling::Workload::GrayScott {
                    size,
                    variant,
                    autotune: !args.no_autotune,
                    overlap: args.overlap,
                })
            })
            .collect();
        return args.scaling.run(job, &workloads, args.common.repeats, json);
    }
    if args.overlap {
        bail!("--overlap is for the scaling bench under mpirun");
    }
    let gpu = open_gpu()?;
    if !args.split.is_empty() {
        let table = bench::grayscott::split_table(
            &gpu,
            &args.sizes,
            &args.variants,
            &args.split,
            args.common.repeats,
            !args.no_autotune,
        )?;
        say!("{}", bench::Machine::measure(&gpu)?.header("Gray-Scott split into parts on one GPU"));
        say!("{table}");
        return Ok(());
    }
    let options = Options {
        sizes: args.sizes,
        repeats: args.common.repeats,
        autotune: !args.no_autotune,
        variants: args.variants,
        end_to_end: !args.no_end_to_end,
    };
    let measured = bench::grayscott::run(&gpu, &options)?;
    report(&measured, json)?;
    if let Some(path) = &args.plot {
        bench::grayscott::plot(&measured, path)?;
        say!("-> {}", path.display());
    }
    Ok(())
}

fn heat(args: HeatBenchArgs, launcher: &Launcher) -> Result<()> {
    if args.sizes.is_empty() || args.sizes.iter().any(|&s| !(3..=simulations::heat::MAX_SIDE).contains(&s)) {
        bail!("--sizes must list grid sides between 3 and {}", simulations::heat::MAX_SIDE);
    }
    if let Some(v) = args.variants.iter().find(|v| **v == HeatVariant::Cpu) {
        bail!("bench times GPU variants; drop {} from --variants", v.name());
    }
    if args.split.iter().any(|&p| p == 0 || p > 64) {
        bail!("--split must list part counts between 1 and 64");
    }
    let json = args.common.check(&[])?;
    let job = args.scaling.job(launcher)?;
    if args.scaling.wanted(job) {
        let overlap = (args.overlap || args.no_overlap).then_some(args.overlap);
        if args.overlap && args.variants.iter().any(|&v| v != HeatVariant::Single) {
            bail!("--overlap is the single variant's: add --variants single");
        }
        let workloads: Vec<_> = args
            .sizes
            .iter()
            .flat_map(|&n| {
                args.variants.iter().map(move |&variant| bench::scaling::Workload::Heat {
                    n,
                    variant,
                    overlap,
                })
            })
            .collect();
        return args.scaling.run(job, &workloads, args.common.repeats, json);
    }
    if args.overlap || args.no_overlap {
        bail!("--overlap and --no-overlap are for the scaling bench (--gpus, or under mpirun)");
    }
    let gpu = open_gpu()?;
    if !args.split.is_empty() {
        let table =
            bench::heat::split_table(&gpu, &args.sizes, &args.variants, &args.split, args.common.repeats)?;
        say!("{}", bench::Machine::measure(&gpu)?.header("heat split into z slabs on one GPU"));
        say!("{table}");
        return Ok(());
    }
    report(&bench::heat::run(&gpu, &args.sizes, &args.variants, args.common.repeats)?, json)
}

fn physarum(args: PhysarumBenchArgs) -> Result<()> {
    if args.sizes.is_empty() || args.sizes.iter().any(|&s| s == 0 || s > simulations::physarum::MAX_SIDE) {
        bail!("--sizes must list grid sides between 1 and {}", simulations::physarum::MAX_SIDE);
    }
    if args.agents.is_empty() || args.agents.iter().any(|&a| a == 0 || a > simulations::physarum::MAX_AGENTS)
    {
        bail!("--agents must list counts between 1 and {}", simulations::physarum::MAX_AGENTS);
    }
    if args.variants.contains(&PhysarumVariant::Cpu) {
        bail!("bench times GPU variants; drop cpu from --variants");
    }
    let json = args.common.check(&[])?;
    let gpu = open_gpu()?;
    report(&bench::physarum::run(&gpu, &args.sizes, &args.agents, &args.variants, args.common.repeats)?, json)
}

fn encode(args: EncodeBenchArgs) -> Result<()> {
    let json = args.common.check(&[])?;
    let measured = bench::encode::run(args.backend, args.steps, args.common.repeats)?;
    let mut json_text = serde_json::to_string_pretty(&measured).context("serialising the report")?;
    json_text.push('\n');
    print_and_save(&measured.table(), &json_text, json)
}

/// The largest report `bench plot` reads.
const REPORT_LIMIT: u64 = 64 << 20;

fn plot_saved(json: &std::path::Path, out: &std::path::Path) -> Result<()> {
    // A report is a few hundred KiB at most.
    let bytes = simulations::input::read_bounded(json, REPORT_LIMIT)
        .map_err(|reason| anyhow::anyhow!("cannot read {}: {reason}", json.display()))?;
    let text = String::from_utf8(bytes).map_err(|_| {
        anyhow::anyhow!(
            "{} is not a report written by `rust-gpu-sim bench grayscott --json`: not UTF-8",
            json.display()
        )
    })?;
    let report = GrayScottReport::from_json(&text).map_err(|e| {
        anyhow::anyhow!(
            "{} is not a report written by `rust-gpu-sim bench grayscott --json`: {e}",
            json.display()
        )
    })?;
    options::check_targets(&[Target::file("--out", out)])?;
    bench::grayscott::plot(&report, out)?;
    say!("-> {}", out.display());
    Ok(())
}
