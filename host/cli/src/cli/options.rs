//! The option groups every subcommand shares, defined once and flattened into each, and the
//! checks that go with them. The output and state groups ([`OutputArgs`], [`StateArgs`]) are
//! the library driver's options on clap ([`super::driver_args`]), which model crates flatten too.

use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::Args;
use simulations::{
    BackendChoice, Device,
    choice::VariantChoice,
    driver::FrameDefaults,
    render::PALETTES,
    split::Layout,
    split::decomposition::{LaunchRank, Launcher},
};

use super::{
    choice::choice,
    settings::{FramesTable, Given, RunTable, name_of},
};

pub use super::driver_args::{OutputArgs, StateArgs};
pub use simulations::driver::{Target, check_targets, palette, resumed};

/// What differs between the simulations in the shared groups: the frame defaults
/// ([`FrameDefaults`]: the subcommand's name, file names, ...) and the variants.
pub trait SimulationCommand: FrameDefaults {
    /// Its variants, whose CPU variant, GPU default and `--backend` resolution the library
    /// decides ([`VariantChoice`]).
    type Variant: VariantChoice;
}

/// The frame options a settings file holds (`--config`, `--print-config`).
pub trait FramesSettings {
    /// Takes the frame options the command line did not give from a settings file.
    fn apply(&mut self, frames: Option<FramesTable>, given: &Given);
    /// The frame options, for a settings file.
    fn table(&self) -> FramesTable;
}

impl<S: SimulationCommand> FramesSettings for OutputArgs<S> {
    fn apply(&mut self, frames: Option<FramesTable>, given: &Given) {
        let frames = frames.unwrap_or_default();
        given.fill("frame_every", &mut self.frame_every, frames.frame_every);
        given.fill("fps", &mut self.fps, frames.fps);
        given.fill("palette", &mut self.palette, frames.palette);
    }

    fn table(&self) -> FramesTable {
        FramesTable {
            frame_every: Some(self.frame_every),
            fps: Some(self.fps),
            palette: Some(self.palette.clone()),
        }
    }
}

/// `--list-palettes`.
pub fn list_palettes() -> Result<()> {
    for p in PALETTES {
        crate::say!("{:<10} {}", p.name, p.description);
    }
    Ok(())
}

/// Where to run.
#[derive(Args, Debug)]
pub struct BackendArgs<S: SimulationCommand> {
    /// Where to run.
    #[arg(long, value_parser = choice::<BackendChoice>(), default_value_t)]
    pub backend: BackendChoice,
    /// Step of the optimisation progression (default: the fastest on a GPU, cpu without); a GPU
    /// variant needs a GPU.
    #[arg(long, value_parser = choice::<S::Variant>())]
    pub variant: Option<S::Variant>,
}

impl<S: SimulationCommand> BackendArgs<S> {
    /// Whether these choices may open a GPU (anything but the CPU backend or variant).
    pub fn may_use_gpu(&self) -> bool {
        self.backend != BackendChoice::Cpu
            && self.variant.is_none_or(|v| v != <S::Variant as VariantChoice>::CPU)
    }

    /// Refuses contradictory choices, without opening any device.
    pub fn check(&self) -> Result<()> {
        Ok(S::Variant::check(self.backend, self.variant)?)
    }

    /// Takes the backend and variant from a settings file where the command line gave neither
    /// (one of them on the command line replaces both of the file's).
    pub fn apply(&mut self, run: Option<RunTable>, given: &Given) -> Result<()> {
        let run = run.unwrap_or_default();
        let variant = match &run.variant {
            Some(name) => Some(super::settings::parse_name::<S::Variant>(name).ok_or_else(|| {
                anyhow::anyhow!(
                    "--config: unknown variant '{name}' in [run]; valid variants: {}",
                    super::settings::names::<S::Variant>()
                )
            })?),
            None => None,
        };
        if given.has("backend") || self.variant.is_some() {
            return Ok(());
        }
        given.fill("backend", &mut self.backend, run.backend);
        self.variant = variant;
        Ok(())
    }

    /// The backend and variant asked for, for a settings file: the variant only where it is
    /// known before a device is opened (given, or the CPU's).
    pub fn table(&self) -> RunTable {
        let variant = match (self.backend, self.variant) {
            (_, Some(v)) => Some(v),
            (BackendChoice::Cpu, None) => Some(<S::Variant as VariantChoice>::CPU),
            _ => None,
        };
        RunTable { backend: Some(self.backend), variant: variant.map(|v| name_of(&v)) }
    }

    /// Opens the device: a GPU variant asks for the GPU, `cpu` for the CPU; without
    /// `--variant`, the default of the backend found. Prints a notice when `auto` falls back
    /// to the CPU.
    pub fn select(&self) -> Result<(Device, S::Variant)> {
        let (device, variant, notice) = S::Variant::select(self.backend, self.variant)?;
        if let Some(notice) = notice {
            crate::cli::note(&notice);
        }
        Ok((device, variant))
    }
}

/// `--gpus`: a count, or every GPU of the machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuCount {
    All,
    Count(u32),
}

fn gpu_count(text: &str) -> std::result::Result<GpuCount, String> {
    if text == "all" {
        return Ok(GpuCount::All);
    }
    match text.parse::<u32>() {
        Ok(0) => Err("must be at least 1 (or all)".into()),
        Ok(n) => Ok(GpuCount::Count(n)),
        Err(_) => Err(format!("{text:?} is not a number of GPUs (write e.g. 2, or all)")),
    }
}

/// Splitting the grid into parts that exchange halos (Gray-Scott's bands of rows, heat's z
/// slabs): on several GPUs of this process, several parts on one GPU (which runs the whole
/// decomposition: halos, exchanges, uneven parts), or one part per process under `mpirun` or
/// `srun` through NCCL. Results are bit-identical to one part.
#[derive(Args, Debug)]
pub struct PartsArgs {
    /// GPUs of this process to spread the parts over: a number, or all (default 1). Under a
    /// launcher, the job's GPUs: one per process (if given, it must equal the processes).
    #[arg(long, value_name = "N|all", value_parser = gpu_count, allow_hyphen_values = true)]
    pub gpus: Option<GpuCount>,
    /// Parts to split the grid into (default: one per GPU); parts beyond the GPUs share them.
    #[arg(long, value_name = "P", allow_hyphen_values = true)]
    pub split: Option<u32>,
    #[command(flatten)]
    pub ranks: RanksArgs,
    /// Overlap the halo exchange with computation. Gray-Scott (over NCCL only; on by default
    /// where the job spans several hosts): a part steps the rows its neighbours need first
    /// and exchanges them while it steps its middle. Heat (the single variant, either transport; on by default over 2 GPUs
    /// or more): a slab is written in halves, in turns, each half's edge exchanged while the
    /// other is written.
    #[arg(long, overrides_with = "no_overlap")]
    pub overlap: bool,
    /// Do not overlap the halo exchange (heat's default over several GPUs).
    #[arg(long, overrides_with = "overlap")]
    pub no_overlap: bool,
}

impl PartsArgs {
    /// Whether the run may be split (known before any device is opened): one rank of a
    /// launcher's `job` of several processes, `--transport nccl`, `--split` above 1, or
    /// `--gpus` other than 1.
    pub fn may_split(&self, job: Option<LaunchRank>) -> bool {
        job.is_some_and(|j| j.size > 1)
            || self.ranks.transport == Some(Transport::Nccl)
            || self.split.is_some_and(|s| s > 1)
            || matches!(self.gpus, Some(GpuCount::All) | Some(GpuCount::Count(2..)))
    }

    /// `--overlap` (true) or `--no-overlap` (false), the last given; `None` for neither.
    fn overlap_asked(&self) -> Option<bool> {
        (self.overlap || self.no_overlap).then_some(self.overlap)
    }

    /// Whether Gray-Scott's run overlaps its exchange between NCCL ranks: as
    /// `--overlap`/`--no-overlap` say, else where the ranks talk over NCCL's network
    /// ([`over_network`]; over NVLink the edge rows' separate launches cost more than the
    /// exchange they hide: 88.7% against 95.9% for `streaming` on 2 H200s; over a network
    /// they pay: 83.4% against 62.3%).
    pub fn gray_scott_overlap(&self, over_network: bool) -> bool {
        self.overlap_asked().unwrap_or(over_network)
    }

    /// Whether heat's split run of `variant` over `gpus` GPUs overlaps its exchange: as
    /// `--overlap`/`--no-overlap` say, else the library's default.
    pub fn heat_overlap(&self, variant: simulations::heat::HeatVariant, gpus: usize) -> bool {
        self.overlap_asked().unwrap_or_else(|| simulations::heat::parts::overlap_by_default(variant, gpus))
    }
}

/// Whether the parts of a split run are processes, NCCL ranks (`--transport`), and how those
/// find each other and wait on each other (`--nccl-id-file`, `--peer-timeout`): part of
/// [`PartsArgs`], and flattened alone into a model's command that splits its own way (Barkley's).
#[derive(Args, Debug)]
pub struct RanksArgs {
    /// How halos travel: local (copies between parts of this process) or nccl (one part per
    /// process, NCCL between them). Default: nccl when started by mpirun or srun as one of
    /// several processes, else local. `--transport nccl` alone runs one rank (on a periodic
    /// grid, its own neighbour).
    #[arg(long, value_enum, value_name = "HOW")]
    pub transport: Option<Transport>,
    /// With NCCL and several processes, and no NCCL_COMM_ID=HOST:PORT set: a file on a file
    /// system every rank sees, through which rank 0 hands out NCCL's id (removed once all
    /// are connected).
    #[arg(long, value_name = "PATH")]
    pub nccl_id_file: Option<PathBuf>,
    /// With NCCL: seconds any wait on another process (connecting, an exchange, a gather) may
    /// go without progress before this process stops with an error, so a rank that died or
    /// never started cannot hang the others.
    #[arg(long, value_name = "SECONDS", default_value_t = 120.0, allow_hyphen_values = true)]
    pub peer_timeout: f64,
}

/// How the halos of a split run travel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Transport {
    Local,
    Nccl,
}

impl PartsArgs {
    /// The parts of a split run (GPU 0 is `device`'s in one process; on the CPU, `--split`'s
    /// parts there), or `None` for a run in one part. Refuses `--gpus` on the CPU, a split of
    /// zero, more GPUs than the machine has, and under a launcher anything that disagrees with
    /// its processes.
    /// `heat`: heat's variant (its `--overlap` is also taken by parts in one process, and is
    /// on by default), `None` for Gray-Scott.
    pub fn open(
        &self,
        device: &Device,
        heat: Option<simulations::heat::HeatVariant>,
        launcher: &Launcher,
    ) -> Result<Option<Layout>> {
        // The options first, then the launcher's variables (as before the ranks' options had
        // a group of their own).
        self.ranks.check_peer_timeout()?;
        let job = launcher.job()?;
        if self.ranks.nccl(job)? {
            return self.open_ranks(device, job, heat).map(Some);
        }
        if self.overlap && heat.is_none() {
            bail!(
                "--overlap overlaps the NCCL exchange between processes: it needs --transport nccl or a launcher job"
            );
        }
        self.ranks.refuse_id_file()?;
        if self.gpus.is_none() && self.split.is_none() {
            return Ok(None);
        }
        let Device::Cuda(first) = device else {
            return match (self.gpus, self.split) {
                (None, Some(0)) => bail!("--split must be at least 1"),
                (None, Some(split @ 2..)) => Ok(Some(Layout::Cpu { split })),
                (None, _) => Ok(None),
                (Some(_), _) => {
                    bail!("--gpus and --split split the grid over CUDA GPUs; this run is on the CPU")
                }
            };
        };
        let present = simulations::cuda::device_count()?;
        let gpus = match self.gpus {
            None => 1,
            Some(GpuCount::All) => present,
            Some(GpuCount::Count(n)) => n as usize,
        };
        if gpus > present {
            bail!(
                "--gpus {gpus}: this machine has {present} CUDA GPU{}",
                if present == 1 { "" } else { "s" }
            );
        }
        let split = self.split.unwrap_or(gpus as u32);
        if split == 0 {
            bail!("--split must be at least 1");
        }
        if (split as usize) < gpus {
            bail!("--split {split} is fewer parts than --gpus {gpus}: each GPU needs at least one part");
        }
        if split == 1 {
            return Ok(None);
        }
        let mut opened = vec![first.clone()];
        for ordinal in 1..gpus {
            opened.push(simulations::cuda::open_device(ordinal)?);
        }
        Ok(Some(Layout::Local { gpus: opened, split }))
    }

    /// This process's part of an NCCL job (rank 0 of 1 without a launcher): its GPU chosen
    /// by its rank on this host, connected to the others.
    /// `heat`: heat's variant, whose overlapped halves leave NCCL a few SMs only.
    fn open_ranks(
        &self,
        device: &Device,
        job: Option<LaunchRank>,
        heat: Option<simulations::heat::HeatVariant>,
    ) -> Result<Layout> {
        let gpus = match self.gpus {
            Some(GpuCount::Count(n)) => Some(n),
            Some(GpuCount::All) | None => None,
        };
        one_part_per_rank(gpus, self.split, job)?;
        let Device::Cuda(first) = device else {
            bail!("--transport nccl exchanges halos between CUDA GPUs; this run is on the CPU");
        };
        let ranks = job.map_or(1, |j| j.size);
        let heat_overlap = heat.is_some_and(|variant| self.heat_overlap(variant, ranks));
        let max_ctas = heat_overlap.then_some(simulations::heat::parts::NCCL_FREE_SMS);
        Ok(Layout::Ranks(self.ranks.connect(first, job, max_ctas)?))
    }
}

impl RanksArgs {
    /// Whether the parts are NCCL ranks, one per process: `--transport nccl`, or a launcher's
    /// `job` of several processes without `--transport`. Refuses a `--peer-timeout` that is
    /// not a number of seconds above 0 (at most a day), and `--transport local` in a job of
    /// several processes.
    pub fn nccl(&self, job: Option<LaunchRank>) -> simulations::Result<bool> {
        self.check_peer_timeout()?;
        let several = job.filter(|j| j.size > 1);
        match (self.transport, several) {
            (Some(Transport::Nccl), _) => Ok(true),
            (Some(Transport::Local), Some(job)) => Err(simulations::Error::SameOnEveryRank(format!(
                "--transport local keeps every part in one process, but {} started {} processes: leave it out to \
                 use NCCL between them",
                job.launcher, job.size
            ))),
            (Some(Transport::Local), None) => Ok(false),
            (None, several) => Ok(several.is_some()),
        }
    }

    /// Refuses a `--peer-timeout` that is not a number of seconds above 0 (at most a day).
    pub fn check_peer_timeout(&self) -> simulations::Result<()> {
        if !(self.peer_timeout.is_finite() && self.peer_timeout > 0.0 && self.peer_timeout <= 86_400.0) {
            return Err(simulations::Error::SameOnEveryRank(format!(
                "--peer-timeout must be a number of seconds above 0, at most 86400, got {}",
                self.peer_timeout
            )));
        }
        Ok(())
    }

    /// Refuses `--nccl-id-file` in a run whose parts are not NCCL ranks.
    pub fn refuse_id_file(&self) -> simulations::Result<()> {
        match self.nccl_id_file {
            Some(_) => Err(simulations::Error::InvalidInput(
                "--nccl-id-file is for NCCL runs of several processes (mpirun, srun)".into(),
            )),
            None => Ok(()),
        }
    }

    /// This process's rank of the NCCL job ([`connect_rank`] with these options).
    pub fn connect(
        &self,
        first: &std::sync::Arc<simulations::cuda::Gpu>,
        job: Option<LaunchRank>,
        max_ctas: Option<u32>,
    ) -> simulations::Result<simulations::split::nccl::Communicator> {
        connect_rank(first, job, self.nccl_id_file.clone(), self.peer_timeout, max_ctas)
    }

    /// This process's rank of the NCCL job on `gpu`, the one its rank takes ([`rank_ordinal`]),
    /// opened by the caller with its own kernels ([`connect_on`] with these options).
    pub fn connect_on(
        &self,
        gpu: std::sync::Arc<simulations::cuda::Gpu>,
        job: Option<LaunchRank>,
    ) -> simulations::Result<simulations::split::nccl::Communicator> {
        connect_on(gpu, job, self.nccl_id_file.clone(), self.peer_timeout, None)
    }
}

/// Refuses `--gpus` (`gpus`, a number) or `--split` that is not the number of processes of
/// an NCCL job (`job`'s, or 1 without a launcher): with NCCL each process holds one part.
pub fn one_part_per_rank(
    gpus: Option<u32>,
    split: Option<u32>,
    job: Option<LaunchRank>,
) -> simulations::Result<()> {
    let (size, launcher) = job.map_or((1, "this command"), |j| (j.size, j.launcher));
    let option = match (gpus, split) {
        (Some(n), _) if n as usize != size => format!("--gpus {n}"),
        (_, Some(p)) if p as usize != size => format!("--split {p}"),
        _ => return Ok(()),
    };
    Err(simulations::Error::SameOnEveryRank(format!(
        "{option} disagrees with the {size} process{} {launcher} started: with NCCL each process holds one part on \
         one GPU",
        if size == 1 { "" } else { "es" }
    )))
}

/// The GPU (ordinal) this process's rank of an NCCL job takes: its rank's on this host
/// ([`simulations::split::decomposition::gpu_for_rank`]), or `first` (the one already opened)
/// without a launcher.
pub fn rank_ordinal(job: Option<LaunchRank>, first: usize) -> simulations::Result<usize> {
    match job {
        Some(job) => simulations::split::decomposition::gpu_for_rank(
            &job,
            simulations::cuda::device_count()?,
            std::env::var_os("CUDA_VISIBLE_DEVICES").is_some(),
        ),
        None => Ok(first),
    }
}

/// This process's rank of an NCCL job (rank 0 of 1 without a launcher) on the GPU its rank
/// on this host takes (`first`, GPU 0 as opened, where that is the one), connected to the
/// others through `NCCL_COMM_ID` or `id_file`; `max_ctas`: see [`simulations::split::nccl::Bootstrap`].
pub fn connect_rank(
    first: &std::sync::Arc<simulations::cuda::Gpu>,
    job: Option<LaunchRank>,
    id_file: Option<PathBuf>,
    peer_timeout: f64,
    max_ctas: Option<u32>,
) -> simulations::Result<simulations::split::nccl::Communicator> {
    let ordinal = rank_ordinal(job, first.ordinal())?;
    let gpu =
        if ordinal == first.ordinal() { first.clone() } else { simulations::cuda::open_device(ordinal)? };
    connect_on(gpu, job, id_file, peer_timeout, max_ctas)
}

/// [`connect_rank`] on `gpu`, already the one this rank takes.
pub fn connect_on(
    gpu: std::sync::Arc<simulations::cuda::Gpu>,
    job: Option<LaunchRank>,
    id_file: Option<PathBuf>,
    peer_timeout: f64,
    max_ctas: Option<u32>,
) -> simulations::Result<simulations::split::nccl::Communicator> {
    simulations::split::nccl::check_library()?;
    let (rank, size) = job.map_or((0, 1), |j| (j.rank, j.size));
    if rank == 0 && size > 1 {
        say_binding();
    }
    let widened = simulations::split::nccl::widen_sockets(over_network(job));
    if let Some(line) = widened.filter(|_| rank == 0) {
        simulations::stderr_line!("{line}");
    }
    let bootstrap = simulations::split::nccl::Bootstrap {
        id_file,
        timeout: std::time::Duration::from_secs_f64(peer_timeout),
        max_ctas,
    };
    simulations::split::nccl::Communicator::connect(gpu, rank, size, &bootstrap)
}

/// Whether this process's job talks over NCCL's network ([`LaunchRank::over_network`], from
/// the environment); false for a plain run.
pub fn over_network(job: Option<LaunchRank>) -> bool {
    job.is_some_and(|j| j.over_network(|name| std::env::var(name).ok()))
}

/// Rank 0's one line on what the start did about the launcher's CPU binding
/// ([`simulations::split::binding`]).
pub fn say_binding() {
    if let Some(line) = simulations::split::binding::at_start().and_then(|b| b.line()) {
        simulations::stderr_line!("{line}");
    }
}

/// Physarum takes no `--gpus`/`--split`: its agents move anywhere on the plane each step and
/// deposit where they land, so a split would exchange agents, not halos; it runs on one GPU.
#[derive(Args, Debug)]
pub struct OneGpuArgs {
    /// Not for Physarum: its agents move anywhere each step (no halo to exchange), so it runs
    /// on one GPU.
    #[arg(long, value_name = "N")]
    pub gpus: Option<String>,
    /// Not for Physarum (see --gpus).
    #[arg(long, value_name = "P")]
    pub split: Option<String>,
}

impl OneGpuArgs {
    /// Refuses either option with the reason.
    pub fn check(&self) -> Result<()> {
        if self.gpus.is_some() || self.split.is_some() {
            bail!(
                "physarum runs on one GPU: its agents move anywhere on the plane each step, so there are no \
                 halos to exchange (--gpus and --split are for grayscott and heat)"
            );
        }
        Ok(())
    }
}

/// The seed of a run's random numbers.
#[derive(Args, Debug)]
pub struct SeedArgs {
    /// Seed of the random initial state (noise, positions, headings); runs are reproducible.
    #[arg(long, default_value_t = simulations::settings::DEFAULT_SEED, allow_hyphen_values = true)]
    pub seed: u64,
}

/// `--steps` (every simulation): at least 1.
pub fn check_steps(steps: u32) -> Result<()> {
    if steps == 0 {
        bail!("--steps must be at least 1");
    }
    Ok(())
}

/// Refuses a non-finite `value` of `option`, or one beyond ±`max` (where the model would
/// leave float32), saying why.
pub fn at_most(option: &str, value: f64, max: f64, why: &str) -> Result<()> {
    Ok(simulations::error::at_most(option, value, max, why)?)
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use simulations::heat::HeatVariant;

    use super::*;

    #[derive(Parser)]
    struct Parts {
        #[command(flatten)]
        parts: PartsArgs,
    }

    fn parts(args: &[&str]) -> PartsArgs {
        Parts::try_parse_from([&["test"][..], args].concat()).unwrap().parts
    }

    fn rank(size: usize, on_this_host: Option<usize>) -> Option<LaunchRank> {
        Some(LaunchRank { rank: 0, size, local: on_this_host.map(|n| (0, n)), launcher: "Slurm" })
    }

    #[test]
    fn heat_overlaps_over_several_gpus_unless_told_not_to() {
        assert!(parts(&[]).heat_overlap(HeatVariant::Single, 2));
        assert!(!parts(&[]).heat_overlap(HeatVariant::Single, 1));
        assert!(!parts(&[]).heat_overlap(HeatVariant::Fused, 4));
        assert!(!parts(&["--no-overlap"]).heat_overlap(HeatVariant::Single, 4));
        assert!(parts(&["--overlap"]).heat_overlap(HeatVariant::Single, 1));
        // The last of the two wins, as for any flag given twice.
        assert!(parts(&["--overlap", "--no-overlap"]).no_overlap);
        assert!(!parts(&["--overlap", "--no-overlap"]).heat_overlap(HeatVariant::Single, 4));
        assert!(parts(&["--no-overlap", "--overlap"]).heat_overlap(HeatVariant::Single, 4));
    }

    #[test]
    fn a_split_is_foreseen_from_the_options_and_the_launcher() {
        assert!(!parts(&[]).may_split(None));
        assert!(!parts(&["--gpus", "1"]).may_split(rank(1, Some(1))));
        assert!(parts(&[]).may_split(rank(2, Some(2))));
        assert!(parts(&["--gpus", "2"]).may_split(None));
        assert!(parts(&["--gpus", "all"]).may_split(None));
        assert!(parts(&["--split", "3"]).may_split(None));
        assert!(!parts(&["--split", "1"]).may_split(None));
        assert!(parts(&["--transport", "nccl"]).may_split(None));
    }

    #[test]
    fn gray_scott_overlaps_where_the_ranks_talk_over_the_network_unless_told() {
        assert!(parts(&[]).gray_scott_overlap(true));
        assert!(!parts(&[]).gray_scott_overlap(false));
        assert!(!parts(&["--no-overlap"]).gray_scott_overlap(true));
        assert!(parts(&["--overlap"]).gray_scott_overlap(false));
        assert!(!parts(&["--overlap", "--no-overlap"]).gray_scott_overlap(true), "the last one given");
        // A plain run, or one the launcher says nothing about, is on one host.
        assert!(!over_network(None));
    }
}
