//! What the checks share: the PTX of one kernel, `ptxas`, and a GPU to run on.

#![allow(dead_code)]

use std::{
    path::{Path, PathBuf},
    process::Command,
    sync::Arc,
};

use ptxkit_check::KERNELS;
use ptxkit_host::Gpu;

/// All of the check kernels' PTX.
pub fn ptx() -> &'static str {
    KERNELS.modules[0].ptx
}

/// The PTX of the entry point `name` (from `.entry name(` to its body's closing brace at the
/// start of a line), so that a test looks for an instruction in that kernel alone, not in
/// the functions LLVM happens to place after it. Panics if there is none.
pub fn kernel_ptx(name: &str) -> &'static str {
    entry_ptx(ptx(), name)
}

/// [`kernel_ptx`] in the module PTX `ptx` (the classic module's, or the Hopper module's).
pub fn entry_ptx(ptx: &'static str, name: &str) -> &'static str {
    let start = ptx
        .find(&format!(".entry {name}("))
        .unwrap_or_else(|| panic!("no entry point {name} in the check kernels' PTX"));
    let rest = &ptx[start..];
    let end = rest.find("\n}\n").map_or(rest.len(), |i| i + 3);
    &rest[..end]
}

/// Asserts that the kernel `name`'s PTX contains every one of `needles`.
#[track_caller]
pub fn assert_emits(name: &str, needles: &[&str]) {
    assert_emits_in(ptx(), name, needles);
}

/// [`assert_emits`] in the module PTX `ptx`.
#[track_caller]
pub fn assert_emits_in(ptx: &'static str, name: &str, needles: &[&str]) {
    let body = entry_ptx(ptx, name);
    for needle in needles {
        assert!(body.contains(needle), "{name}: expected `{needle}` in its PTX:\n{body}");
    }
}

/// Asserts that the kernel `name`'s PTX contains none of `needles`.
#[track_caller]
pub fn assert_not_emits(name: &str, needles: &[&str]) {
    let body = kernel_ptx(name);
    for needle in needles {
        assert!(!body.contains(needle), "{name}: `{needle}` must not be in its PTX:\n{body}");
    }
}

/// `$PTXAS`, else the copy `scripts/setup.sh` installs, else `ptxas` on the PATH.
pub fn ptxas() -> PathBuf {
    if let Some(path) = std::env::var_os("PTXAS") {
        return path.into();
    }
    let installed =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools/cuda-nvcc/nvidia/cuda_nvcc/bin/ptxas");
    if installed.is_file() {
        return installed;
    }
    "ptxas".into()
}

/// Assembles `ptx` for `arch` (e.g. `sm_90`) with `ptxas`; panics with its diagnostics if it fails.
pub fn assemble(ptx: &str, arch: &str) {
    let dir = std::env::temp_dir().join(format!("ptxkit-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // One file per call: tests run in parallel, and two may assemble for the same `arch`.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let file = dir.join(format!("{arch}.{call}.ptx"));
    std::fs::write(&file, ptx).unwrap();
    let output = Command::new(ptxas())
        .args(["-arch", arch, "-o", "/dev/null"])
        .arg(&file)
        .output()
        .expect("run ptxas (scripts/setup.sh installs it)");
    assert!(output.status.success(), "ptxas -arch {arch}: {}", String::from_utf8_lossy(&output.stderr));
}

/// GPU 0 with the check kernels (the GPU tests only).
pub fn gpu() -> Arc<Gpu> {
    Gpu::open(0, &KERNELS).expect("a CUDA GPU (these tests are ignored without one)")
}

/// A well-mixed `u32` of `i` and `seed` (test data: deterministic for a fixed seed).
pub fn mix(i: u32, seed: u32) -> u32 {
    let mut x = i.wrapping_mul(0x9E37_79B9) ^ seed ^ 0x85EB_CA6B;
    x ^= x >> 15;
    x = x.wrapping_mul(0x2C1B_3C6D);
    x ^= x >> 12;
    x = x.wrapping_mul(0x297A_2D39);
    x ^ (x >> 15)
}
