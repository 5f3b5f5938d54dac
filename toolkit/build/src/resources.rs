//! What each kernel takes, as `ptxas -v` says when it assembles a cubin: registers, the stack
//! frame, spill stores and loads, static shared memory; and the occupancy that gives at the
//! kernel's launch bounds (`.maxntid`, `#[kernel(launch_bounds = ...)]`) on the cubin's
//! architecture. The build writes them, one line per kernel, to `kernels.resources.txt` beside
//! the cubins, and makes each spill a build warning (a spill is local-memory traffic in the
//! kernel's inner loop, and the first thing to fix when it is slower than nvcc's).

use std::collections::HashMap;

/// One kernel's resources on one architecture.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelResources {
    pub kernel: String,
    /// `sm_XX`'s number.
    pub arch: u32,
    pub registers: u32,
    pub stack_bytes: u32,
    pub spill_store_bytes: u32,
    pub spill_load_bytes: u32,
    /// Static shared memory (a launch's dynamic shared memory comes on top).
    pub shared_bytes: u32,
    /// The threads of a block at most (`.maxntid`'s product), where the kernel declares it.
    pub max_threads: Option<u32>,
}

impl KernelResources {
    /// Whether ptxas spilled registers to local memory.
    pub fn spills(&self) -> bool {
        self.spill_store_bytes > 0 || self.spill_load_bytes > 0
    }

    /// The report's line: name, registers, spills, shared memory and the occupancy at the
    /// launch bounds (`-` without them or off the architectures [`occupancy`] knows).
    pub fn line(&self) -> String {
        let occupancy = self
            .max_threads
            .and_then(|threads| occupancy(self.arch, self.registers, self.shared_bytes, threads))
            .map_or("-".to_owned(), |o| {
                format!("{:.0}% at {} threads", 100.0 * o, self.max_threads.unwrap_or(0))
            });
        format!(
            "{:<40} sm_{} {:>3} registers, {} B stack, {} B spill stores, {} B spill loads, {} B static shared; occupancy {occupancy}",
            self.kernel,
            self.arch,
            self.registers,
            self.stack_bytes,
            self.spill_store_bytes,
            self.spill_load_bytes,
            self.shared_bytes,
        )
    }
}

/// The kernels of `ptxas -v`'s report (its standard error) for architecture `arch`, with the
/// launch bounds `bounds` gives by kernel name ([`launch_bounds`]).
pub fn parse(report: &str, arch: u32, bounds: &HashMap<String, u32>) -> Vec<KernelResources> {
    let mut kernels: Vec<KernelResources> = Vec::new();
    for line in report.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("ptxas info    : Compiling entry function '") {
            let name = rest.split('\'').next().unwrap_or_default().to_owned();
            let max_threads = bounds.get(&name).copied();
            kernels.push(KernelResources { kernel: name, arch, max_threads, ..Default::default() });
            continue;
        }
        let Some(kernel) = kernels.last_mut() else { continue };
        if line.contains("bytes stack frame") {
            kernel.stack_bytes = number_before(line, "bytes stack frame");
            kernel.spill_store_bytes = number_before(line, "bytes spill stores");
            kernel.spill_load_bytes = number_before(line, "bytes spill loads");
        } else if let Some(rest) = line.strip_prefix("ptxas info    : Used ") {
            kernel.registers = number_before(rest, "registers");
            kernel.shared_bytes = number_before(rest, "bytes smem");
        }
    }
    kernels
}

/// The number just before `unit` in `text` (`"32 bytes smem"` → 32); 0 where there is none.
fn number_before(text: &str, unit: &str) -> u32 {
    let Some(at) = text.find(unit) else { return 0 };
    text[..at].trim_end().rsplit([' ', ',']).next().and_then(|n| n.parse().ok()).unwrap_or(0)
}

/// Each kernel's launch bounds in a PTX text: the product of its `.maxntid` (or `.reqntid`)
/// dimensions, by kernel name.
pub fn launch_bounds(ptx: &str) -> HashMap<String, u32> {
    let mut bounds = HashMap::new();
    let mut current: Option<String> = None;
    for line in ptx.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix(".visible .entry ").or_else(|| line.strip_prefix(".entry ")) {
            current = Some(rest.split(['(', ' ']).next().unwrap_or_default().to_owned());
        } else if let Some(dims) = line.strip_prefix(".maxntid ").or_else(|| line.strip_prefix(".reqntid "))
            && let Some(name) = &current
        {
            let product = dims.split(',').map(|d| d.trim().parse::<u32>().unwrap_or(1)).product();
            bounds.insert(name.clone(), product);
        }
    }
    bounds
}

/// The fraction of an SM's warps that blocks of `threads` threads keep resident on `sm_arch`,
/// each thread using `registers` registers and each block `shared_bytes` of static shared
/// memory (limits of NVIDIA's occupancy calculator: registers allocated per warp in units of
/// 256, 1 KiB of shared memory reserved per block); `None` off the architectures listed.
pub fn occupancy(arch: u32, registers: u32, shared_bytes: u32, threads: u32) -> Option<f64> {
    // (warps per SM, blocks per SM, shared memory per SM in KiB)
    let (max_warps, max_blocks, shared_kib) = match arch {
        80 | 87 => (64, 32, 164),
        86 => (48, 16, 100),
        89 => (48, 24, 100),
        90 => (64, 32, 228),
        _ => return None,
    };
    if threads == 0 || threads > 1024 {
        return None;
    }
    let warps = threads.div_ceil(32);
    let per_warp = (registers.max(1) * 32).div_ceil(256) * 256;
    let by_registers = (65_536 / per_warp) / warps;
    let by_warps = max_warps / warps;
    let by_shared = if shared_bytes == 0 { u32::MAX } else { shared_kib * 1024 / (shared_bytes + 1024) };
    let blocks = by_registers.min(by_warps).min(by_shared).min(max_blocks);
    Some(f64::from(blocks * warps) / f64::from(max_warps))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ptxas -arch=sm_90 -v` on two kernels, as it prints them.
    const REPORT: &str = "ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'stencil' for 'sm_90'
ptxas info    : Function properties for stencil
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 22 registers, used 1 barriers, 2720 bytes smem
ptxas info    : Compile time = 6.485 ms
ptxas info    : Compiling entry function 'sgemm' for 'sm_90'
ptxas info    : Function properties for sgemm
    64 bytes stack frame, 60 bytes spill stores, 56 bytes spill loads
ptxas info    : Used 255 registers, used 1 barriers, 8192 bytes smem
";

    #[test]
    fn ptxas_reports_are_read_kernel_by_kernel() {
        let bounds = HashMap::from([("sgemm".to_owned(), 256)]);
        let kernels = parse(REPORT, 90, &bounds);
        assert_eq!(kernels.len(), 2);
        assert_eq!(
            kernels[0],
            KernelResources {
                kernel: "stencil".into(),
                arch: 90,
                registers: 22,
                shared_bytes: 2720,
                ..Default::default()
            }
        );
        let sgemm = &kernels[1];
        assert_eq!((sgemm.registers, sgemm.stack_bytes, sgemm.shared_bytes), (255, 64, 8192));
        assert_eq!((sgemm.spill_store_bytes, sgemm.spill_load_bytes, sgemm.max_threads), (60, 56, Some(256)));
        assert!(sgemm.spills() && !kernels[0].spills());
        assert!(kernels[0].line().contains("occupancy -"), "no launch bounds: {}", kernels[0].line());
        // 255 registers: 8,160 a warp, 8 warps a block: one block, 8 of 64 warps.
        assert!(sgemm.line().contains("occupancy 12% at 256 threads"), "{}", sgemm.line());
    }

    #[test]
    fn launch_bounds_are_the_product_of_maxntid() {
        let ptx = ".visible .entry a(\n.param .u64 p\n)\n.maxntid 256, 1, 1\n.minnctapersm 1\n{\n}\n\
                   .visible .entry b(\n)\n{\n}\n.entry c(\n)\n.reqntid 16, 16, 1\n{\n}\n";
        let bounds = launch_bounds(ptx);
        assert_eq!(bounds.get("a"), Some(&256));
        assert_eq!(bounds.get("b"), None);
        assert_eq!(bounds.get("c"), Some(&256));
    }

    #[test]
    fn occupancy_follows_the_calculators_limits() {
        // 32 registers, 256 threads, no shared memory: 8 blocks of 8 warps fill 64.
        assert_eq!(occupancy(90, 32, 0, 256), Some(1.0));
        // 64 registers: 2,048 a warp, 32 warps fit: 4 blocks of 8.
        assert_eq!(occupancy(90, 64, 0, 256), Some(0.5));
        // 33 registers round up to 40 a thread (1,280 a warp): 51 warps fit, 6 blocks of 8.
        assert_eq!(occupancy(90, 33, 0, 256), Some(48.0 / 64.0));
        // Shared memory: 100 KiB a block (and 1 KiB reserved) leaves room for 2 on sm_90.
        assert_eq!(occupancy(90, 32, 100 * 1024, 128), Some(8.0 / 64.0));
        // Blocks of 32 threads: at most 32 blocks, half the warps.
        assert_eq!(occupancy(90, 16, 0, 32), Some(0.5));
        // sm_89: 48 warps an SM.
        assert_eq!(occupancy(89, 32, 0, 256), Some(1.0));
        assert_eq!(occupancy(75, 32, 0, 256), None);
        assert_eq!(occupancy(90, 32, 0, 2048), None);
    }
}
