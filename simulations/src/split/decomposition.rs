//! Domain decomposition arithmetic, with no GPU: a grid split into bands (Gray-Scott: rows
//! of the periodic plane; heat: z slabs), the halo each part needs, which GPU holds each
//! part, and the rank and size a launcher (`mpirun`, `srun`) gives a process.
//!
//! A part holds its band plus `halo` rows copied from its neighbours on each side. A kernel
//! run of `k ≤ halo` steps over the part as if it were the whole grid leaves the band exact:
//! a cell's value after `s` steps depends only on cells at most `s` rows away, so the wrong
//! values that enter at the part's edges (its wrap-around or boundary) reach at most `k`
//! rows in, all inside the halo. The halos are then refreshed from the neighbours' bands.

use crate::error::{Error, Result};

/// One part's rows of the whole grid: `start .. start + len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Band {
    pub start: u32,
    pub len: u32,
}

impl Band {
    /// One past the last row.
    pub fn end(&self) -> u32 {
        self.start + self.len
    }
}

/// Splits `n` rows into `parts` bands as even as possible: the first `n % parts` bands get
/// one row more. Refuses zero parts and more parts than rows.
pub fn bands(n: u32, parts: u32) -> Result<Vec<Band>> {
    if parts == 0 {
        return Err(Error::InvalidInput("--split must be at least 1".into()));
    }
    if parts > n {
        return Err(Error::InvalidInput(format!(
            "--split {parts} asks for more parts than the grid's {n} rows"
        )));
    }
    let (base, extra) = (n / parts, n % parts);
    let mut start = 0;
    Ok((0..parts)
        .map(|p| {
            let len = base + u32::from(p < extra);
            let band = Band { start, len };
            start += len;
            band
        })
        .collect())
}

/// Refuses a split whose thinnest part is thinner than its halo (its neighbours' halos would
/// need rows it does not have).
pub fn check_halo(bands: &[Band], halo: u32, what: &str) -> Result<()> {
    let thinnest = bands.iter().map(|b| b.len).min().unwrap_or(0);
    if bands.len() > 1 && thinnest < halo {
        return Err(Error::InvalidInput(format!(
            "--split {}: the thinnest part has {thinnest} {what}, fewer than its halo of {halo} {what} \
             (the steps one exchange covers); use fewer parts",
            bands.len()
        )));
    }
    Ok(())
}

/// A side of a part along the split axis: towards the lower or the higher indices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Below,
    Above,
}

impl Side {
    pub fn other(self) -> Self {
        match self {
            Side::Below => Side::Above,
            Side::Above => Side::Below,
        }
    }
}

/// The parts before and after part `p` of `parts`: on a periodic axis the first and last are
/// neighbours (with one part, the part is its own neighbour); otherwise the ends have none.
pub fn neighbours(p: usize, parts: usize, periodic: bool) -> (Option<usize>, Option<usize>) {
    let before = if p > 0 { Some(p - 1) } else { periodic.then_some(parts - 1) };
    let after = if p + 1 < parts { Some(p + 1) } else { periodic.then_some(0) };
    (before, after)
}

/// The GPU of each of `parts` parts spread over `gpus` GPUs: consecutive parts share a GPU
/// (so most neighbours exchange on one device), the first `parts % gpus` GPUs take one more.
pub fn placement(parts: usize, gpus: usize) -> Vec<usize> {
    let gpus = gpus.clamp(1, parts.max(1));
    let (base, extra) = (parts / gpus, parts % gpus);
    (0..gpus).flat_map(|g| std::iter::repeat_n(g, base + usize::from(g < extra))).collect()
}

/// Rows `start .. start + count` of a periodic axis of length `n`, wrapped (a halo of the
/// first or last band reaches around the edge).
pub fn wrapped_rows(start: i64, count: u32, n: u32) -> impl Iterator<Item = u32> {
    (0..i64::from(count)).map(move |i| (start + i).rem_euclid(i64::from(n)) as u32)
}

/// A process's place among the processes a launcher started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchRank {
    pub rank: usize,
    pub size: usize,
    /// The rank among this host's processes and their number, where the launcher says
    /// (which GPU of the host a process takes).
    pub local: Option<(usize, usize)>,
    /// Which launcher's variables said so.
    pub launcher: &'static str,
}

impl LaunchRank {
    /// Whether the job's processes run on more than one host, as far as the launcher says
    /// (fewer processes on this host than in the job); `false` where it does not say.
    pub fn spans_hosts(&self) -> bool {
        self.local.is_some_and(|(_, on_this_host)| on_this_host < self.size)
    }

    /// Whether NCCL carries the halos between this job's ranks over its network transport:
    /// the job spans hosts, or the environment (read through `var`) tells NCCL to use neither
    /// peer-to-peer nor shared memory between GPUs (`NCCL_P2P_DISABLE` and `NCCL_SHM_DISABLE`
    /// nonzero), so that the ranks of one host talk as if between hosts.
    pub fn over_network(&self, var: impl Fn(&str) -> Option<String>) -> bool {
        let disabled =
            |name: &str| var(name).and_then(|v| v.trim().parse::<i64>().ok()).is_some_and(|v| v != 0);
        self.spans_hosts() || (self.size > 1 && disabled("NCCL_P2P_DISABLE") && disabled("NCCL_SHM_DISABLE"))
    }
}

/// The rank and size from the variables of Open MPI's `mpirun`, MPICH/Hydra's `mpiexec`
/// (PMI) or Slurm's `srun`, read through `var`; `None` when none is set (a plain run).
/// Refuses values that are not numbers or a rank outside the size.
pub fn launch_rank(var: impl Fn(&str) -> Option<String>) -> Result<Option<LaunchRank>> {
    launch_rank_with(var)
}

/// What a launcher's variables say of this process, read once when it starts
/// ([`Launcher::from_env`]) and passed down to whatever needs the job: its place in a job,
/// or why the variables were refused. A refusal is reported where the job is first needed
/// (after the command line's own checks), each time as the same error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launcher(std::result::Result<Option<LaunchRank>, String>);

impl Launcher {
    /// This process's environment, read now (the launchers' variables [`launch_rank`] names).
    pub fn from_env() -> Self {
        Self(launch_rank_from_env().map_err(|e| e.to_string()))
    }

    /// A process that `job` says it is (`None`: no launcher), for tests and library callers.
    pub fn of(job: Option<LaunchRank>) -> Self {
        Self(Ok(job))
    }

    /// The job, or the refusal of the variables.
    pub fn job(&self) -> Result<Option<LaunchRank>> {
        self.0.clone().map_err(Error::InvalidInput)
    }

    /// The job where the variables were read, `None` where they were refused (for what runs
    /// before the refusal is reported, and what reports it differently).
    pub fn job_if_read(&self) -> Option<LaunchRank> {
        self.0.clone().ok().flatten()
    }
}

/// [`launch_rank`] from this process's environment (read through [`Launcher::from_env`] only,
/// once). A variable whose value is not UTF-8 is read as it is, its odd bytes as U+FFFD, so it
/// is refused as not a number (naming it) instead of ignored, which would run the job's
/// processes each as a whole job.
fn launch_rank_from_env() -> Result<Option<LaunchRank>> {
    launch_rank_with(|name| std::env::var_os(name).map(|value| value.to_string_lossy().into_owned()))
}

fn launch_rank_with(var: impl Fn(&str) -> Option<String>) -> Result<Option<LaunchRank>> {
    // (launcher, rank, size, local rank, local size)
    const LAUNCHERS: [(&str, &str, &str, &str, &str); 3] = [
        (
            "Open MPI",
            "OMPI_COMM_WORLD_RANK",
            "OMPI_COMM_WORLD_SIZE",
            "OMPI_COMM_WORLD_LOCAL_RANK",
            "OMPI_COMM_WORLD_LOCAL_SIZE",
        ),
        ("MPICH", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"),
        // The step's variables, which `srun` sets for each task: an `sbatch` script's own
        // process also has SLURM_PROCID and SLURM_NTASKS (rank 0 of the allocation's tasks)
        // but is one process, not a rank of a job.
        ("Slurm", "SLURM_PROCID", "SLURM_STEP_NUM_TASKS", "SLURM_LOCALID", "SLURM_STEP_TASKS_PER_NODE"),
    ];
    for (launcher, rank_var, size_var, local_rank_var, local_size_var) in LAUNCHERS {
        let (Some(rank), Some(size)) = (var(rank_var), var(size_var)) else { continue };
        let number = |name: &str, text: &str| {
            text.trim()
                .parse::<usize>()
                .map_err(|_| Error::InvalidInput(format!("{launcher}: {name}={text:?} is not a number")))
        };
        let (rank, size) = (number(rank_var, &rank)?, number(size_var, &size)?);
        // NCCL numbers ranks with C ints.
        if size > i32::MAX as usize {
            return Err(Error::InvalidInput(format!(
                "{launcher}: a job of {size} processes ({size_var}) is more than NCCL can number"
            )));
        }
        if size == 0 || rank >= size {
            return Err(Error::InvalidInput(format!(
                "{launcher}: rank {rank} is outside a job of {size} processes ({rank_var}, {size_var})"
            )));
        }
        // The local pair only where both are plain numbers and consistent (Slurm's tasks per
        // node can read "2(x3)" on uneven jobs: then the local size is unknown).
        let local = match (var(local_rank_var), var(local_size_var)) {
            (Some(r), Some(n)) => match (r.trim().parse::<usize>(), n.trim().parse::<usize>()) {
                (Ok(r), Ok(n)) if r < n && n <= size => Some((r, n)),
                _ => None,
            },
            _ => None,
        };
        return Ok(Some(LaunchRank { rank, size, local, launcher }));
    }
    Ok(None)
}

/// The GPU (ordinal among the `devices` this process sees) that a process of a launcher job
/// takes: its local rank. Refuses more processes on a host than it has GPUs: NCCL takes one
/// process per GPU. Where the launcher hides all but one GPU from each process
/// (`CUDA_VISIBLE_DEVICES` set, one device visible) each takes that one; NCCL itself
/// refuses two ranks on one GPU if that binding was wrong.
pub fn gpu_for_rank(job: &LaunchRank, devices: usize, visible_set: bool) -> Result<usize> {
    if devices == 1 && visible_set {
        return Ok(0);
    }
    match job.local {
        Some((_, local_size)) if local_size > devices => Err(Error::SameOnEveryRank(format!(
            "{local_size} processes of this {} job share this host, which has {devices} CUDA GPU{}: NCCL takes \
             one process per GPU (start at most {devices} per host; --split runs several parts on one GPU in one \
             process)",
            job.launcher,
            if devices == 1 { "" } else { "s" },
        ))),
        Some((local_rank, _)) => Ok(local_rank),
        None => Ok(job.rank % devices.max(1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_launcher_read_once_gives_its_job_or_the_same_refusal_each_time() {
        let job = LaunchRank { rank: 1, size: 2, local: None, launcher: "Open MPI" };
        assert_eq!(Launcher::of(Some(job)).job().unwrap(), Some(job));
        assert_eq!(Launcher::of(Some(job)).job_if_read(), Some(job));
        assert_eq!(Launcher::of(None).job().unwrap(), None);
        let refused = Launcher(Err("Open MPI: OMPI_COMM_WORLD_RANK=\"x\" is not a number".into()));
        let (first, again) = (refused.job().unwrap_err().to_string(), refused.job().unwrap_err().to_string());
        assert_eq!(first, again);
        assert!(first.contains("is not a number"), "{first}");
        assert_eq!(refused.job_if_read(), None);
    }

    #[test]
    fn bands_cover_the_rows_unevenly_in_order() {
        let b = bands(10, 3).unwrap();
        assert_eq!(b, [Band { start: 0, len: 4 }, Band { start: 4, len: 3 }, Band { start: 7, len: 3 }]);
        for (n, parts) in [(1, 1), (7, 7), (1000, 3), (777, 5), (64, 2)] {
            let b = bands(n, parts).unwrap();
            assert_eq!(b.len(), parts as usize);
            assert_eq!(b[0].start, 0);
            assert_eq!(b.last().unwrap().end(), n);
            assert!(b.windows(2).all(|w| w[0].end() == w[1].start));
            let (min, max) = (b.iter().map(|b| b.len).min().unwrap(), b.iter().map(|b| b.len).max().unwrap());
            assert!(max - min <= 1, "{n}/{parts}: {min}..{max}");
        }
        assert!(bands(5, 0).is_err());
        assert!(bands(5, 6).unwrap_err().to_string().contains("more parts than"));
    }

    #[test]
    fn a_part_thinner_than_its_halo_is_refused() {
        let b = bands(20, 3).unwrap(); // 7, 7, 6
        assert!(check_halo(&b, 6, "rows").is_ok());
        let e = check_halo(&b, 7, "rows").unwrap_err().to_string();
        assert!(e.contains("6 rows") && e.contains("halo of 7"), "{e}");
        // One part has no neighbour to serve.
        assert!(check_halo(&bands(3, 1).unwrap(), 8, "rows").is_ok());
    }

    #[test]
    fn neighbours_wrap_only_on_periodic_axes() {
        assert_eq!(neighbours(0, 4, true), (Some(3), Some(1)));
        assert_eq!(neighbours(3, 4, true), (Some(2), Some(0)));
        assert_eq!(neighbours(0, 4, false), (None, Some(1)));
        assert_eq!(neighbours(3, 4, false), (Some(2), None));
        assert_eq!(neighbours(0, 1, true), (Some(0), Some(0)));
        assert_eq!(neighbours(0, 1, false), (None, None));
    }

    #[test]
    fn parts_are_spread_over_gpus_in_blocks() {
        assert_eq!(placement(4, 1), [0, 0, 0, 0]);
        assert_eq!(placement(4, 2), [0, 0, 1, 1]);
        assert_eq!(placement(5, 2), [0, 0, 0, 1, 1]);
        assert_eq!(placement(2, 4), [0, 1]);
        assert_eq!(placement(3, 3), [0, 1, 2]);
    }

    #[test]
    fn halo_rows_wrap_around_the_plane() {
        assert_eq!(wrapped_rows(-2, 5, 10).collect::<Vec<_>>(), [8, 9, 0, 1, 2]);
        assert_eq!(wrapped_rows(8, 4, 10).collect::<Vec<_>>(), [8, 9, 0, 1]);
        assert_eq!(wrapped_rows(-3, 3, 2).collect::<Vec<_>>(), [1, 0, 1]);
    }

    #[test]
    fn each_process_takes_its_local_gpu() {
        let job = |rank, size, local| LaunchRank { rank, size, local, launcher: "Open MPI" };
        assert_eq!(gpu_for_rank(&job(5, 8, Some((1, 4))), 4, false).unwrap(), 1);
        assert_eq!(gpu_for_rank(&job(0, 1, Some((0, 1))), 1, false).unwrap(), 0);
        // Two processes, one GPU: refused up front, naming both counts.
        let e = gpu_for_rank(&job(1, 2, Some((1, 2))), 1, false).unwrap_err().to_string();
        assert!(e.contains("2 processes") && e.contains("1 CUDA GPU:"), "{e}");
        // One GPU made visible to each process by the launcher.
        assert_eq!(gpu_for_rank(&job(1, 2, Some((1, 2))), 1, true).unwrap(), 0);
        assert_eq!(gpu_for_rank(&job(6, 8, None), 4, false).unwrap(), 2);
    }

    #[test]
    fn launcher_variables_give_rank_and_size() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
        };
        assert_eq!(launch_rank(env(&[])).unwrap(), None);
        let ompi = launch_rank(env(&[("OMPI_COMM_WORLD_RANK", "1"), ("OMPI_COMM_WORLD_SIZE", "4")])).unwrap();
        assert_eq!(ompi, Some(LaunchRank { rank: 1, size: 4, local: None, launcher: "Open MPI" }));
        let on = |local| LaunchRank { rank: 1, size: 4, local, launcher: "Slurm" };
        assert!(on(Some((1, 2))).spans_hosts());
        assert!(!on(Some((1, 4))).spans_hosts());
        assert!(!on(None).spans_hosts());
        let ompi = launch_rank(env(&[
            ("OMPI_COMM_WORLD_RANK", "3"),
            ("OMPI_COMM_WORLD_SIZE", "4"),
            ("OMPI_COMM_WORLD_LOCAL_RANK", "1"),
            ("OMPI_COMM_WORLD_LOCAL_SIZE", "2"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(ompi.local, Some((1, 2)));
        let slurm = launch_rank(env(&[
            ("SLURM_PROCID", "2"),
            ("SLURM_STEP_NUM_TASKS", "5"),
            ("SLURM_LOCALID", "0"),
            ("SLURM_STEP_TASKS_PER_NODE", "2(x2),1"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(slurm.local, None, "an uneven Slurm layout gives no local size");
        let mpich = launch_rank(env(&[("PMI_RANK", "0"), ("PMI_SIZE", "2")])).unwrap().unwrap();
        assert_eq!((mpich.rank, mpich.size, mpich.launcher), (0, 2, "MPICH"));
        let slurm =
            launch_rank(env(&[("SLURM_PROCID", "7"), ("SLURM_STEP_NUM_TASKS", "8")])).unwrap().unwrap();
        assert_eq!((slurm.rank, slurm.size, slurm.launcher), (7, 8, "Slurm"));
        // An sbatch script's own process (no srun step): a plain run.
        let batch = env(&[("SLURM_PROCID", "0"), ("SLURM_NTASKS", "4"), ("SLURM_NTASKS_PER_NODE", "4")]);
        assert_eq!(launch_rank(batch).unwrap(), None);
        // More processes than NCCL's ranks can number.
        let huge = env(&[("OMPI_COMM_WORLD_RANK", "4294967296"), ("OMPI_COMM_WORLD_SIZE", "4294967297")]);
        assert!(launch_rank(huge).unwrap_err().to_string().contains("more than NCCL can number"));
        // Only one of the pair set: not this launcher.
        assert_eq!(launch_rank(env(&[("SLURM_PROCID", "0")])).unwrap(), None);
        for bad in [&[("PMI_RANK", "2"), ("PMI_SIZE", "2")][..], &[("PMI_RANK", "x"), ("PMI_SIZE", "2")]] {
            let pairs: &'static [(&str, &str)] = Box::leak(bad.to_vec().into_boxed_slice());
            assert!(launch_rank(env(pairs)).is_err());
        }
    }

    #[test]
    fn ranks_talk_over_the_network_across_hosts_or_where_nccl_may_use_neither_p2p_nor_shared_memory() {
        let job = |size, local| LaunchRank { rank: 0, size, local, launcher: "Open MPI" };
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string())
        };
        let both = env(&[("NCCL_P2P_DISABLE", "1"), ("NCCL_SHM_DISABLE", " 1 ")]);
        assert!(job(4, Some((0, 2))).over_network(env(&[])), "two hosts");
        assert!(!job(4, Some((0, 4))).over_network(env(&[])), "one host");
        assert!(!job(4, None).over_network(env(&[])), "the launcher does not say");
        assert!(job(4, Some((0, 4))).over_network(both));
        assert!(job(2, None).over_network(both));
        assert!(!job(1, None).over_network(both), "one rank talks to no one");
        for one in [
            env(&[("NCCL_P2P_DISABLE", "1")]),
            env(&[("NCCL_SHM_DISABLE", "1")]),
            env(&[("NCCL_P2P_DISABLE", "0"), ("NCCL_SHM_DISABLE", "1")]),
            env(&[("NCCL_P2P_DISABLE", "1"), ("NCCL_SHM_DISABLE", "0")]),
            env(&[("NCCL_P2P_DISABLE", "yes"), ("NCCL_SHM_DISABLE", "1")]),
        ] {
            assert!(!job(4, Some((0, 4))).over_network(one));
        }
        assert!(
            job(4, Some((0, 4))).over_network(env(&[("NCCL_P2P_DISABLE", "2"), ("NCCL_SHM_DISABLE", "-1")]))
        );
    }

    /// The boundaries of what a launcher may say: the largest size NCCL numbers (a C int) is
    /// taken; a local pair is kept only where the local rank is below the local size and the
    /// local size is at most the job's (anything else is an inconsistent pair, read as unknown).
    #[test]
    fn launcher_values_at_their_bounds() {
        let ompi = |rank: &str, size: &str, local: Option<(&str, &str)>| {
            let mut pairs = vec![
                ("OMPI_COMM_WORLD_RANK".to_string(), rank.to_string()),
                ("OMPI_COMM_WORLD_SIZE".to_string(), size.to_string()),
            ];
            if let Some((r, n)) = local {
                pairs.push(("OMPI_COMM_WORLD_LOCAL_RANK".to_string(), r.to_string()));
                pairs.push(("OMPI_COMM_WORLD_LOCAL_SIZE".to_string(), n.to_string()));
            }
            launch_rank(move |name: &str| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
        };
        let largest = i32::MAX.to_string();
        let job = ompi("0", &largest, None).unwrap().unwrap();
        assert_eq!(job.size, i32::MAX as usize, "a job of i32::MAX processes can be numbered");
        let past = (i32::MAX as usize + 1).to_string();
        assert!(ompi("0", &past, None).unwrap_err().to_string().contains("more than NCCL can number"));
        let local = |r, n| ompi("1", "4", Some((r, n))).unwrap().unwrap().local;
        assert_eq!(local("1", "2"), Some((1, 2)));
        assert_eq!(local("3", "4"), Some((3, 4)), "a local size equal to the job's is one host");
        assert_eq!(local("2", "2"), None, "a local rank equal to the local size is inconsistent");
        assert_eq!(local("3", "2"), None, "a local rank past the local size is inconsistent");
        assert_eq!(local("1", "5"), None, "more processes on a host than in the job is inconsistent");
    }
}
