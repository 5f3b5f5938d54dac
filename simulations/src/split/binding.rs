//! A launcher's CPU binding, widened where it would starve a rank.
//!
//! Open MPI binds each of 2 processes to one core by default (`--bind-to core`), Slurm's
//! `srun` binds tasks to the cores it gives them. A rank's GPU work needs more than one
//! thread on a CPU at once: its main thread launching and waiting, NCCL's proxy thread
//! moving every send and receive, the CUDA driver's own threads. Squeezed onto one core they
//! take turns, and each halo exchange waits for the proxy's turn: Gray-Scott 16384²
//! `streaming` on 2 H100s ran at 54.6% of one GPU's throughput per GPU under Open MPI's
//! default binding against 93.6% with `--bind-to none`.
//!
//! So a rank of a launched job that finds itself bound to fewer than [`CPUS_A_RANK_NEEDS`]
//! CPUs widens its affinity, first thing in `main` (every thread started later inherits
//! it), to the CPUs its cgroup allows: what `--bind-to none` gives, and never more than the
//! job was granted (a batch system's allocation is the cgroup's CPU set). A binding of at
//! least that many CPUs is the user's or the site's choice and stays; so does any binding
//! when [`KEEP_VAR`] is `1`. Rank 0 says in one line what the run did ([`Binding::line`]).

use std::sync::OnceLock;

use super::decomposition::{LaunchRank, Launcher};

/// The variable that keeps the launcher's binding as it is (`1`).
pub const KEEP_VAR: &str = "RUST_GPU_SIM_KEEP_BINDING";

/// The fewest CPUs a rank is left bound to: its main thread, NCCL's proxy thread, the CUDA
/// driver's thread and one for the outputs' encoders, each busy at times in the same step.
pub const CPUS_A_RANK_NEEDS: usize = 4;

/// A set of CPU numbers (as the kernel numbers them), sorted, without repeats.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuSet(Vec<usize>);

impl CpuSet {
    /// The CPUs of a list as Linux writes them (`0-3,8,10-11`, the format of
    /// `cpuset.cpus.effective` and `/sys/devices/system/cpu/online`); `None` if malformed.
    /// An empty or blank text is the empty set.
    pub fn parse(text: &str) -> Option<CpuSet> {
        let mut cpus = Vec::new();
        for piece in text.trim().split(',').filter(|p| !p.trim().is_empty()) {
            let piece = piece.trim();
            let (first, last) = match piece.split_once('-') {
                Some((a, b)) => (a.parse::<usize>().ok()?, b.parse::<usize>().ok()?),
                None => {
                    let cpu = piece.parse::<usize>().ok()?;
                    (cpu, cpu)
                }
            };
            if first > last || last >= MAX_CPUS {
                return None;
            }
            cpus.extend(first..=last);
        }
        Some(CpuSet::from_cpus(cpus))
    }

    /// The set of these CPUs.
    pub fn from_cpus(mut cpus: Vec<usize>) -> CpuSet {
        cpus.sort_unstable();
        cpus.dedup();
        CpuSet(cpus)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn cpus(&self) -> &[usize] {
        &self.0
    }

    /// The CPUs in both sets.
    pub fn intersection(&self, other: &CpuSet) -> CpuSet {
        CpuSet(self.0.iter().copied().filter(|c| other.0.binary_search(c).is_ok()).collect())
    }

    /// Whether every CPU of this set is in `other`.
    pub fn is_subset(&self, other: &CpuSet) -> bool {
        self.0.iter().all(|c| other.0.binary_search(c).is_ok())
    }
}

/// Written as Linux writes CPU lists: `0-3,8`.
impl std::fmt::Display for CpuSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut runs: Vec<(usize, usize)> = Vec::new();
        for &cpu in &self.0 {
            match runs.last_mut() {
                Some((_, last)) if *last + 1 == cpu => *last = cpu,
                _ => runs.push((cpu, cpu)),
            }
        }
        let text: Vec<String> =
            runs.iter().map(|&(a, b)| if a == b { a.to_string() } else { format!("{a}-{b}") }).collect();
        f.write_str(&text.join(","))
    }
}

/// What a rank should do with the binding it found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Bound to every CPU it may use: nothing to do.
    Unbound,
    /// Keep the binding: asked to ([`KEEP_VAR`]), or it is at least [`CPUS_A_RANK_NEEDS`]
    /// wide, or it is not inside the allowed set (something this module does not understand).
    Keep(KeepReason),
    /// Widen to these CPUs (the allowed set).
    Widen(CpuSet),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeepReason {
    Asked,
    WideEnough,
    Unusual,
}

/// The decision for a rank bound to `current` whose cgroup allows `allowed`.
pub fn decide(current: &CpuSet, allowed: &CpuSet, keep_asked: bool) -> Decision {
    if current == allowed || allowed.is_empty() {
        Decision::Unbound
    } else if !current.is_subset(allowed) || current.is_empty() {
        Decision::Keep(KeepReason::Unusual)
    } else if keep_asked {
        Decision::Keep(KeepReason::Asked)
    } else if current.len() >= CPUS_A_RANK_NEEDS {
        Decision::Keep(KeepReason::WideEnough)
    } else {
        Decision::Widen(allowed.clone())
    }
}

/// What the start of this process did about its binding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Binding {
    /// Not a rank of a launched job of several processes (or its variables are wrong, which
    /// the run reports later): the binding was not looked at.
    NotLaunched,
    /// A rank whose binding could not be read.
    Unknown,
    /// A rank that may run on all `cpus` its cgroup allows.
    Unbound { launcher: &'static str, cpus: usize },
    /// A rank left bound to `cpus`.
    Kept { launcher: &'static str, cpus: CpuSet, reason: KeepReason },
    /// A rank widened from `from` to `to`.
    Widened { launcher: &'static str, from: CpuSet, to: CpuSet },
    /// A rank whose widening the kernel refused.
    Refused { launcher: &'static str, from: CpuSet, error: String },
}

impl Binding {
    /// The one line rank 0 prints about it (`None` where there is nothing to say).
    pub fn line(&self) -> Option<String> {
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        match self {
            Binding::NotLaunched | Binding::Unknown => None,
            Binding::Unbound { launcher, cpus } => {
                Some(format!("binding: {launcher} left each process its {cpus} CPU{}", plural(*cpus)))
            }
            Binding::Widened { launcher, from, to } => Some(format!(
                "binding: {launcher} bound this process to CPU{} {from}; widened to CPUs {to} (what it may use) so \
                 that NCCL's proxy and the driver's threads have cores of their own ({KEEP_VAR}=1 keeps the \
                 launcher's binding)",
                plural(from.len())
            )),
            Binding::Kept { launcher, cpus, reason } => Some(match reason {
                KeepReason::WideEnough => {
                    format!("binding: kept {launcher}'s binding of this process to CPUs {cpus}")
                }
                KeepReason::Asked | KeepReason::Unusual if cpus.len() < CPUS_A_RANK_NEEDS => format!(
                    "note: {launcher} bound this process to CPU{} {cpus}, kept{}: its threads share {} and every \
                     exchange between processes waits for NCCL's proxy thread's turn; unset {KEEP_VAR} or start \
                     with `mpirun --bind-to none` (or --map-by slot:PE=4, srun --cpus-per-task=4)",
                    plural(cpus.len()),
                    if *reason == KeepReason::Asked {
                        format!(" as {KEEP_VAR}=1 asks")
                    } else {
                        String::new()
                    },
                    if cpus.len() == 1 { "it" } else { "them" },
                ),
                _ => format!("binding: kept {launcher}'s binding of this process to CPUs {cpus}"),
            }),
            Binding::Refused { launcher, from, error } => Some(format!(
                "note: {launcher} bound this process to CPU{} {from} and widening it failed ({error}): start with \
                 `mpirun --bind-to none` (or srun --cpus-per-task=4)",
                plural(from.len())
            )),
        }
    }
}

static AT_START: OnceLock<Binding> = OnceLock::new();

/// Looks at the binding of this process and widens it where [`decide`] says, once; call it
/// first thing in `main`, before any thread starts (a thread keeps the affinity it was
/// started with). Later calls return the first call's outcome.
pub fn widen_at_start(launcher: &Launcher) -> &'static Binding {
    AT_START.get_or_init(|| {
        let job = launcher.job_if_read();
        let keep = std::env::var(KEEP_VAR).as_deref() == Ok("1");
        apply(job, keep)
    })
}

/// The outcome of [`widen_at_start`], if it was called.
pub fn at_start() -> Option<&'static Binding> {
    AT_START.get()
}

fn apply(job: Option<LaunchRank>, keep: bool) -> Binding {
    let Some(job) = job.filter(|j| j.size > 1) else { return Binding::NotLaunched };
    let launcher = job.launcher;
    let Some(current) = affinity() else { return Binding::Unknown };
    let allowed = allowed_cpus();
    match decide(&current, &allowed, keep) {
        Decision::Unbound => Binding::Unbound { launcher, cpus: current.len() },
        Decision::Keep(reason) => Binding::Kept { launcher, cpus: current, reason },
        Decision::Widen(to) => match set_affinity(&to) {
            Ok(()) => Binding::Widened { launcher, from: current, to: affinity().unwrap_or(to) },
            Err(error) => Binding::Refused { launcher, from: current, error: error.to_string() },
        },
    }
}

/// The largest CPU number a `cpu_set_t` holds.
const MAX_CPUS: usize = libc::CPU_SETSIZE as usize;

/// The CPUs this thread may run on (its affinity).
pub fn affinity() -> Option<CpuSet> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; the size passed is its own, and
    // CPU_ISSET reads only indices below CPU_SETSIZE.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return None;
        }
        Some(CpuSet((0..MAX_CPUS).filter(|&c| libc::CPU_ISSET(c, &set)).collect()))
    }
}

fn set_affinity(cpus: &CpuSet) -> std::io::Result<()> {
    // SAFETY: as in `affinity`; CpuSet holds only numbers below CPU_SETSIZE (parse refuses
    // larger ones), so CPU_SET stays inside the set.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &cpu in cpus.cpus() {
            libc::CPU_SET(cpu, &mut set);
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The CPUs this process may be given: its cgroup's CPU set (v2 `cpuset.cpus.effective`, v1
/// `cpuset.effective_cpus`), of the CPUs online; every online CPU where no cgroup says.
pub fn allowed_cpus() -> CpuSet {
    let read = |path: &str| std::fs::read_to_string(path).ok().and_then(|text| CpuSet::parse(&text));
    let online =
        read("/sys/devices/system/cpu/online").unwrap_or_else(|| affinity().unwrap_or(CpuSet(Vec::new())));
    let cgroup = std::fs::read_to_string("/proc/self/cgroup")
        .ok()
        .and_then(|text| cgroup_cpuset_files(&text).into_iter().find_map(|path| read(&path)));
    match cgroup {
        Some(set) if !set.intersection(&online).is_empty() => set.intersection(&online),
        _ => online,
    }
}

/// The files that may hold this process's cgroup CPU set, nearest first, from the text of
/// `/proc/self/cgroup`: v2's `0::/path` (the file at the path and each parent up to the
/// root, since a cgroup without the cpuset controller has no file of its own) and v1's
/// `N:cpuset:/path` (or a line naming several controllers, one being cpuset).
pub fn cgroup_cpuset_files(proc_self_cgroup: &str) -> Vec<String> {
    let mut files = Vec::new();
    let mut ancestors = |root: &str, path: &str, file: &str| {
        let mut path = path.trim_end_matches('/').to_string();
        loop {
            files.push(format!("{root}{path}/{file}"));
            match path.rfind('/') {
                Some(cut) => path.truncate(cut),
                None => break,
            }
        }
    };
    for line in proc_self_cgroup.lines() {
        let mut fields = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (fields.next(), fields.next(), fields.next()) else {
            continue;
        };
        if !path.starts_with('/') || path.split('/').any(|p| p == "..") {
            continue;
        }
        if controllers.is_empty() {
            ancestors("/sys/fs/cgroup", path, "cpuset.cpus.effective");
        } else if controllers.split(',').any(|c| c == "cpuset") {
            ancestors(&format!("/sys/fs/cgroup/{controllers}"), path, "cpuset.effective_cpus");
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(text: &str) -> CpuSet {
        CpuSet::parse(text).unwrap()
    }

    #[test]
    fn cpu_lists_read_and_write_as_linux_writes_them() {
        assert_eq!(set("0-3,8,10-11\n").cpus(), &[0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(set("0-3,8,10-11").to_string(), "0-3,8,10-11");
        assert_eq!(set("5").to_string(), "5");
        assert_eq!(set("3,1,2,2").to_string(), "1-3");
        assert!(set("").is_empty());
        for bad in ["a", "3-1", "1-", "-1", "0-99999", "1,,x"] {
            assert_eq!(CpuSet::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_rank_bound_to_one_core_is_widened_to_what_its_cgroup_allows() {
        let allowed = set("0-31");
        // Open MPI's default for 2 processes: one core, or its two hardware threads.
        assert_eq!(decide(&set("3"), &allowed, false), Decision::Widen(allowed.clone()));
        assert_eq!(decide(&set("3,19"), &allowed, false), Decision::Widen(allowed.clone()));
        assert_eq!(decide(&set("0-2"), &allowed, false), Decision::Widen(allowed.clone()));
        // Slurm: the cgroup is the allocation; widening stays inside it.
        assert_eq!(decide(&set("8"), &set("8-11"), false), Decision::Widen(set("8-11")));
    }

    #[test]
    fn a_wide_binding_an_unbound_rank_and_a_request_to_keep_are_left_alone() {
        let allowed = set("0-31");
        assert_eq!(decide(&allowed, &allowed, false), Decision::Unbound);
        // --bind-to package / --map-by slot:PE=4: the user's or the site's choice.
        assert_eq!(decide(&set("0-15"), &allowed, false), Decision::Keep(KeepReason::WideEnough));
        assert_eq!(decide(&set("4-7"), &allowed, false), Decision::Keep(KeepReason::WideEnough));
        assert_eq!(decide(&set("3"), &allowed, true), Decision::Keep(KeepReason::Asked));
        // A binding outside what the cgroup file says: not understood, not touched.
        assert_eq!(decide(&set("40"), &allowed, false), Decision::Keep(KeepReason::Unusual));
    }

    #[test]
    fn the_cgroup_files_are_searched_from_the_process_s_own_up_to_the_root() {
        assert_eq!(
            cgroup_cpuset_files("0::/slurm/uid_1/job_7/step_0/task_1\n"),
            [
                "/sys/fs/cgroup/slurm/uid_1/job_7/step_0/task_1/cpuset.cpus.effective",
                "/sys/fs/cgroup/slurm/uid_1/job_7/step_0/cpuset.cpus.effective",
                "/sys/fs/cgroup/slurm/uid_1/job_7/cpuset.cpus.effective",
                "/sys/fs/cgroup/slurm/uid_1/cpuset.cpus.effective",
                "/sys/fs/cgroup/slurm/cpuset.cpus.effective",
                "/sys/fs/cgroup/cpuset.cpus.effective",
            ]
        );
        assert_eq!(cgroup_cpuset_files("0::/\n"), ["/sys/fs/cgroup/cpuset.cpus.effective"]);
        assert_eq!(
            cgroup_cpuset_files("12:memory:/x\n5:cpuset:/job\n"),
            [
                "/sys/fs/cgroup/cpuset/job/cpuset.effective_cpus",
                "/sys/fs/cgroup/cpuset/cpuset.effective_cpus"
            ]
        );
        assert!(cgroup_cpuset_files("0::/a/../../etc\nnonsense\n").is_empty());
    }

    #[test]
    fn rank_0_s_line_says_what_was_done() {
        let widened = Binding::Widened { launcher: "Open MPI", from: set("3"), to: set("0-31") };
        assert_eq!(
            widened.line().unwrap(),
            "binding: Open MPI bound this process to CPU 3; widened to CPUs 0-31 (what it may use) so that NCCL's \
             proxy and the driver's threads have cores of their own (RUST_GPU_SIM_KEEP_BINDING=1 keeps the \
             launcher's binding)"
        );
        let kept = Binding::Kept { launcher: "Slurm", cpus: set("3"), reason: KeepReason::Asked };
        assert!(
            kept.line().unwrap().starts_with("note: Slurm bound this process to CPU 3, kept as RUST_GPU_SIM")
        );
        assert_eq!(Binding::NotLaunched.line(), None);
    }

    #[test]
    fn a_plain_run_is_not_touched() {
        assert_eq!(apply(None, false), Binding::NotLaunched);
        let alone = LaunchRank { rank: 0, size: 1, local: None, launcher: "Slurm" };
        assert_eq!(apply(Some(alone), false), Binding::NotLaunched);
    }

    /// The real thing on this test's own thread (affinity is per thread): bound to one CPU as
    /// Open MPI binds, a rank of 2 comes out on every CPU it may use; asked to keep, it stays.
    #[test]
    fn a_thread_bound_to_one_cpu_is_widened_for_real() {
        let allowed = allowed_cpus();
        let first = CpuSet(vec![affinity().unwrap().cpus()[0]]);
        let job = Some(LaunchRank { rank: 1, size: 2, local: Some((1, 2)), launcher: "Open MPI" });
        set_affinity(&first).unwrap();
        assert_eq!(affinity().unwrap(), first);
        let kept = apply(job, true);
        assert_eq!(affinity().unwrap(), first, "{kept:?}");
        let outcome = apply(job, false);
        let now = affinity().unwrap();
        // The kernel gives what the cpuset permits of the set asked for: all of `allowed`
        // where the cgroup file was read right, never less than the one CPU bound.
        assert!(first.is_subset(&now) && now.is_subset(&allowed), "{outcome:?}");
        if allowed.len() > 1 {
            assert!(now.len() > 1, "{outcome:?}");
            assert_eq!(outcome, Binding::Widened { launcher: "Open MPI", from: first.clone(), to: now });
            assert_eq!(kept, Binding::Kept { launcher: "Open MPI", cpus: first, reason: KeepReason::Asked });
        }
    }

    #[test]
    fn this_process_s_affinity_is_inside_what_it_may_use() {
        let current = affinity().expect("sched_getaffinity");
        assert!(!current.is_empty());
        assert!(current.is_subset(&allowed_cpus()), "{current} outside {}", allowed_cpus());
    }
}
