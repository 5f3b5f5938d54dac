//! The embedded PTX, checked without a GPU: every kernel is there, and `ptxas` (from the
//! PyPI wheel `nvidia-cuda-nvcc-cu12`, installed by `scripts/setup.sh`) assembles it for
//! Volta (sm_70) and Hopper (sm_90) with no spills and no stack frame (one documented
//! exception: [`spill_allowance`]).

use std::{
    path::{Path, PathBuf},
    process::Command,
};

use host::cuda::{KERNEL_NAMES, PTX};

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

#[test]
fn ptx_has_every_kernel_and_no_other() {
    let entries: Vec<&str> = PTX
        .lines()
        .filter_map(|l| l.trim().strip_prefix(".visible .entry "))
        .map(|l| l.split('(').next().unwrap())
        .collect();
    let mut listed = KERNEL_NAMES.to_vec();
    let mut found = entries.clone();
    listed.sort();
    found.sort();
    assert_eq!(found, listed, "the kernel table must list exactly the PTX's entry points");
    assert!(PTX.contains(".target sm_70") && !PTX.contains(", debug"), "portable, optimised PTX");
}

fn assemble(arch: &str) {
    let file = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("kernels-{arch}.ptx"));
    std::fs::write(&file, PTX).unwrap();
    let out = Command::new(ptxas())
        .args([&format!("-arch={arch}"), "-v", "-o", "/dev/null"])
        .arg(&file)
        .output()
        .expect("run ptxas");
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "ptxas -arch={arch} failed:\n{log}");
    for name in KERNEL_NAMES {
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
        checked += 1;
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
    assert_eq!(checked, KERNEL_NAMES.len(), "{log}");
    eprintln!("{log}");
}

/// Spill bytes (stores or loads) a kernel may have on `arch`: none, except the single-pass
/// heat kernel on Volta. It runs 1024 threads per block, so 64 registers a thread, which
/// Hopper's uniform registers (for the loop counter and pointers) make fit; Volta has none
/// and spills a few values.
fn spill_allowance(arch: &str, name: &str) -> u32 {
    if arch == "sm_70" && name == "heat_rk4_single" { 64 } else { 0 }
}

#[test]
fn ptx_assembles_for_volta_without_spills() {
    assemble("sm_70");
}

#[test]
fn ptx_assembles_for_hopper_without_spills() {
    assemble("sm_90");
}
