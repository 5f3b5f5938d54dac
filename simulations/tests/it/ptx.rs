//! The embedded PTX modules, checked without a GPU: every kernel is in one, and `ptxas` (from
//! the PyPI wheel `nvidia-cuda-nvcc-cu12`, installed by `scripts/setup.sh`) assembles each for
//! Volta (sm_70) and Hopper (sm_90) with no spills and no stack frame (one documented
//! exception: [`spill_allowance`]).

use std::{
    path::{Path, PathBuf},
    process::Command,
};

use simulations::cuda::{kernels, modules};

/// `$PTXAS`, else the copy `scripts/setup.sh` installs, else `ptxas` on the PATH.
fn ptxas() -> PathBuf {
    if let Some(path) = std::env::var_os("PTXAS") {
        return path.into();
    }
    let installed =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../.tools/cuda-nvcc/nvidia/cuda_nvcc/bin/ptxas");
    if installed.is_file() {
        return installed;
    }
    if Command::new("ptxas").arg("--version").output().is_ok() {
        return "ptxas".into();
    }
    panic!(
        "ptxas not found: run scripts/setup.sh (it installs the nvidia-cuda-nvcc-cu12 wheel), or set PTXAS"
    );
}

/// The `.entry` names of one module's PTX.
fn entries(ptx: &str) -> Vec<&str> {
    ptx.lines()
        .filter_map(|l| l.trim().strip_prefix(".visible .entry "))
        .map(|l| l.split('(').next().unwrap())
        .collect()
}

#[test]
fn ptx_has_every_kernel_and_no_other() {
    let names: Vec<&str> = modules().iter().map(|m| m.name).collect();
    assert_eq!(
        names,
        [
            "heat",
            "grayscott",
            "grayscott_streaming",
            "grayscott_streaming_c1",
            "grayscott_pdl",
            "physarum",
            "common"
        ]
    );
    let mut in_modules = Vec::new();
    for module in modules() {
        let mut listed: Vec<&str> = module.kernels.iter().map(|k| k.name).collect();
        let mut found = entries(module.ptx);
        listed.sort();
        found.sort();
        assert_eq!(
            found, listed,
            "{}: the module's table must list exactly its PTX's entry points",
            module.name
        );
        // Portable (sm_70) but for the one module of Hopper's programmatic launches.
        let target = if module.name == "grayscott_pdl" { ".target sm_90" } else { ".target sm_70" };
        assert_eq!(module.requires, if module.name == "grayscott_pdl" { 90 } else { 0 }, "{}", module.name);
        assert!(
            module.ptx.contains(target) && !module.ptx.contains(", debug"),
            "{}: {target}, optimised PTX",
            module.name
        );
        in_modules.extend(listed);
    }
    let mut listed: Vec<&str> = kernels().iter().map(|k| k.name).collect();
    listed.sort();
    in_modules.sort();
    assert_eq!(in_modules, listed, "the kernel table must list each module's kernels, each once");
}

/// The one-cell streaming kernels for programmatic dependent launch wait for the launch
/// before them (`griddepcontrol.wait`) before any access to global memory, on every path (the
/// wait is in the entry block, ahead of every branch), and never trigger the next launch early.
#[test]
fn programmatic_streaming_kernels_wait_before_they_touch_the_fields() {
    let module = modules().iter().find(|m| m.name == "grayscott_pdl").expect("the grayscott_pdl module");
    let mut checked = 0;
    for entry in module.ptx.split(".visible .entry ").skip(1) {
        let name = entry.split('(').next().unwrap();
        let body = &entry[entry.find('{').expect("a body")..];
        let wait = body.find("griddepcontrol.wait;").unwrap_or_else(|| panic!("{name}: no wait"));
        let before = &body[..wait];
        for first in ["ld.global", "st.global", "atom.global", "red.global", "bra", "ret;", "@"] {
            assert!(!before.contains(first), "{name}: `{first}` before the wait");
        }
        assert!(!body.contains("launch_dependents"), "{name}: triggers the next launch");
        checked += 1;
    }
    assert_eq!(checked, 8, "the kernels for 1 to 8 steps");
}

/// The Gray-Scott modules' float arithmetic is the CPU's: no instruction flushes subnormals
/// (`.ftz`), none is left to `ptxas` to contract or approximate (every f32 add, subtract and
/// multiply rounds to nearest, `.rn`, which ptxas does not fuse). The bit-identical results,
/// and the streaming kernels' copy for dt = 1 (`x · 1.0` is `x` for every non-NaN `x` only
/// without a flush), rest on it; fields in [0, 1] never hold subnormals, so the GPU tests
/// could not see a flush.
#[test]
fn grayscott_arithmetic_rounds_like_the_cpu() {
    let mut checked = 0;
    for module in modules().iter().filter(|m| m.name.starts_with("grayscott")) {
        for line in module.ptx.lines().map(str::trim) {
            let op = line.split_whitespace().next().unwrap_or("");
            assert!(!op.contains(".ftz"), "{}: `{line}` flushes subnormals", module.name);
            if ["add.f32", "sub.f32", "mul.f32"].contains(&op) {
                panic!("{}: `{line}` may be contracted (no .rn)", module.name);
            }
            checked += usize::from(op.starts_with("add.rn.f32") || op.starts_with("mul.rn.f32"));
        }
    }
    assert!(checked > 1000, "{checked} rounded adds and multiplies: the modules' float code was not found");
}

/// The streaming kernels publish their outer cells as `float2`s (`st.shared.v2.f32`), the
/// two-cell kernels' first and last columns in the two halves of a plane, so that the
/// neighbours' `float2` reads are consecutive (no bank conflicts); a `float4` slot, read back
/// as two `float2`s 16 bytes apart, was 4-way conflicted.
#[test]
fn streaming_kernels_publish_float2_slots() {
    let mut stores = 0;
    for module in modules()
        .iter()
        .filter(|m| ["grayscott_streaming", "grayscott_streaming_c1", "grayscott_pdl"].contains(&m.name))
    {
        for line in module.ptx.lines().map(str::trim).filter(|l| l.starts_with("st.shared")) {
            assert!(line.starts_with("st.shared.v2.f32"), "{}: `{line}` is not a float2 store", module.name);
            stores += 1;
        }
    }
    assert!(stores > 100, "{stores} shared stores: the streaming modules were not found");
}

/// One `.param` of a PTX entry: its size, and its alignment if it is an aggregate.
type PtxParam = (usize, Option<usize>);

/// Each entry's `.param` list in the PTX of every module.
fn ptx_params() -> Vec<(String, Vec<PtxParam>)> {
    let mut entries = Vec::new();
    let mut lines = modules().iter().flat_map(|m| m.ptx.lines()).map(str::trim);
    while let Some(line) = lines.next() {
        let Some(name) = line.strip_prefix(".visible .entry ").and_then(|l| l.split('(').next()) else {
            continue;
        };
        let mut params = Vec::new();
        for param in lines.by_ref().take_while(|l| !l.starts_with(')')) {
            let words: Vec<&str> = param.trim_end_matches(',').split_whitespace().collect();
            assert_eq!(words.first(), Some(&".param"), "{name}: {param}");
            let align = words.iter().position(|w| *w == ".align").map(|i| words[i + 1].parse().unwrap());
            let size = if words.contains(&".b8") {
                // `.align A .b8 name[N]`: an aggregate of N bytes passed by value.
                let last = words.last().unwrap();
                last[last.find('[').unwrap() + 1..last.len() - 1].parse().unwrap()
            } else {
                let ty = words[1];
                match &ty[2..] {
                    "64" => 8,
                    "32" => 4,
                    "16" => 2,
                    "8" => 1,
                    other => panic!("{name}: parameter type {ty} ({other})"),
                }
            };
            // `.ptr .align 1` describes the pointee, not the parameter.
            let aggregate_align = if words.contains(&".ptr") { None } else { align };
            params.push((size, aggregate_align));
        }
        entries.push((name.to_string(), params));
    }
    entries
}

/// Every kernel's generated parameter list (from its Rust signature, through `#[kernel]`)
/// has the PTX's count, sizes and aggregate alignments: the host's typed launches push
/// exactly what each entry point reads.
#[test]
fn generated_parameter_lists_match_the_ptx() {
    let entries = ptx_params();
    assert_eq!(entries.len(), kernels().len());
    for kernel in kernels() {
        let (_, ptx) = entries.iter().find(|(name, _)| name == kernel.name).expect(kernel.name);
        let rust: Vec<usize> = kernel.params.iter().map(|p| p.size).collect();
        let sizes: Vec<usize> = ptx.iter().map(|p| p.0).collect();
        assert_eq!(rust, sizes, "{}: parameter sizes, Rust signature vs PTX", kernel.name);
        for (param, (_, align)) in kernel.params.iter().zip(ptx) {
            if let Some(align) = align {
                assert_eq!(param.align, *align, "{}: alignment of {}", kernel.name, param.name);
            }
        }
    }
}

/// The launch bounds declared on the kernels (`#[kernel(launch_bounds(...))]`) are in the
/// PTX, right after their entry's parameter list, and no other entry has any; a declared
/// block shape (`#[kernel(block(...))]`) is there as `.reqntid` instead of `.maxntid`.
#[test]
fn launch_bounds_come_from_the_kernels() {
    let bounded: Vec<_> =
        kernels().iter().filter_map(|k| Some((k.name, k.launch_bounds?, k.block))).collect();
    assert!(bounded.iter().any(|(name, _, _)| *name == "gray_scott_temporal"), "{bounded:?}");
    assert!(
        bounded.iter().any(|(name, _, block)| *name == "heat_rk4_single" && block.is_some()),
        "{bounded:?}"
    );
    let declared = |needle: &str| modules().iter().map(|m| m.ptx.matches(needle).count()).sum::<usize>();
    assert_eq!(declared(".maxntid") + declared(".reqntid"), bounded.len());
    for (name, bounds, block) in bounded {
        let header = format!(".visible .entry {name}(");
        let ptx = modules().iter().map(|m| m.ptx).find(|ptx| ptx.contains(&header)).expect(name);
        let body = &ptx[ptx.find(&header).unwrap()..];
        let close = body.find("\n)").unwrap() + 1;
        let after: Vec<&str> = body[close..].lines().skip(1).take(2).collect();
        let threads = match block {
            Some([x, y, z]) => format!(".reqntid {x}, {y}, {z}"),
            None => format!(".maxntid {}, 1, 1", bounds.max_threads),
        };
        assert_eq!(after, [threads, format!(".minnctapersm {}", bounds.min_blocks)], "{name}");
    }
}

/// Assembles every module for `arch`, checking each kernel's stack and spills; a module built
/// for a newer architecture (the sm_90 `grayscott_pdl`) is assembled for its own instead.
fn assemble(arch: &str) {
    let mut checked = 0;
    for module in modules() {
        let own = format!("sm_{}", module.requires);
        let arch = if module.requires == 0 { arch } else { own.as_str() };
        checked += assemble_module(arch, module.name, module.ptx, module.kernels);
    }
    assert_eq!(checked, kernels().len());
}

/// Assembles one module for `arch`; returns how many of its kernels' properties it checked
/// (all, or it fails).
fn assemble_module(arch: &str, module: &str, ptx: &str, kernels: &[simulations::cuda::KernelInfo]) -> usize {
    let file = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("kernels-{module}-{arch}.ptx"));
    std::fs::write(&file, ptx).unwrap();
    let out = Command::new(ptxas())
        .args([&format!("-arch={arch}"), "-v", "-o", "/dev/null"])
        .arg(&file)
        .output()
        .expect("run ptxas");
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "ptxas -arch={arch} failed on module {module}:\n{log}");
    for name in kernels.iter().map(|k| k.name) {
        assert!(
            log.contains(&format!("Compiling entry function '{name}' for '{arch}'")),
            "{name} for {arch}:\n{log}"
        );
    }
    // "Function properties for NAME" is followed by its stack and spill line.
    let mut checked = 0;
    let mut lines = log.lines();
    while let Some(line) = lines.next() {
        let Some(name) = line.split("Function properties for ").nth(1) else { continue };
        let properties = lines.next().unwrap_or_default();
        // Device functions that are not entry points (a cold `assert_fail`) are checked too.
        checked += usize::from(kernels.iter().any(|k| k.name == name.trim()));
        if properties.contains("0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads") {
            continue;
        }
        let allowance = spill_allowance(arch, name.trim());
        let spilled: u32 = properties
            .split(',')
            .filter(|part| part.contains("spill"))
            .filter_map(|part| part.split_whitespace().next()?.parse::<u32>().ok())
            .max()
            .unwrap_or(u32::MAX);
        assert!(spilled <= allowance, "{arch}: {name}: {properties}\n{log}");
    }
    assert_eq!(checked, kernels.len(), "{log}");
    eprintln!("{log}");
    checked
}

/// Spill bytes (stores or loads) a kernel may have on `arch`: none, except the single-pass
/// heat kernel on Volta. It runs 1024 threads per block, so 64 registers a thread, which
/// Hopper's uniform registers (for the loop counters and pointers) make fit; Volta has none
/// and spills a few values (48 four-byte values since the exchange by rounds added its
/// signals; about 30 since the whole-column rounds added their counters; 13 before).
fn spill_allowance(arch: &str, name: &str) -> u32 {
    if arch == "sm_70" && name == "heat_rk4_single" { 200 } else { 0 }
}

#[test]
fn ptx_assembles_for_volta_without_spills() {
    assemble("sm_70");
}

#[test]
fn ptx_assembles_for_hopper_without_spills() {
    assemble("sm_90");
}
