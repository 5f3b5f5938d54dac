//! Compiles a `#![no_std]` kernel crate to PTX with rustc's NVPTX backend, from a build script.
//!
//! Our counterpart of rust-cuda's `cuda_builder`:
//! ```ignore
//! // build.rs
//! fn main() {
//!     ptx_builder::PtxBuilder::new("../kernels")
//!         .arch("sm_70")
//!         .build_into_out_dir("kernels.ptx")
//!         .unwrap_or_else(|e| e.exit());
//! }
//! ```
//! The crate is built with `cargo rustc --release --target nvptx64-nvidia-cuda
//! -Zbuild-std=core --crate-type cdylib` in a target directory of its own (so the nested cargo
//! never waits for the lock of the outer build), with the cargo variables of the outer build
//! removed from its environment. Cargo is told to re-run the build script when any file of the
//! kernel crate (or of its path dependencies) changes.

use std::{
    env, fmt, fs,
    path::{Path, PathBuf},
    process::Command,
};

/// The target triple of rustc's NVPTX backend.
pub const TARGET: &str = "nvptx64-nvidia-cuda";

/// Builder for one kernel crate.
#[derive(Clone, Debug)]
pub struct PtxBuilder {
    crate_dir: PathBuf,
    arch: String,
    watch: Vec<PathBuf>,
    rustflags: Vec<String>,
    launch_bounds: Vec<(String, u32, u32)>,
}

/// Why the PTX could not be built.
#[derive(Debug)]
pub enum BuildError {
    /// `cargo` could not be started.
    Spawn(std::io::Error),
    /// The device compiler rejected the crate; holds its diagnostics.
    Compile(String),
    /// The build succeeded but wrote no `.ptx` where expected.
    MissingPtx(PathBuf),
    /// Reading or copying the PTX failed.
    Io(PathBuf, std::io::Error),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Spawn(e) => write!(f, "could not run cargo to build the kernels: {e}"),
            Self::Compile(log) => write!(f, "the kernel crate failed to compile for {TARGET}:\n{log}"),
            Self::MissingPtx(p) => write!(f, "the kernel build wrote no PTX at {}", p.display()),
            Self::Io(p, e) => write!(f, "{}: {e}", p.display()),
        }
    }
}

impl std::error::Error for BuildError {}

impl BuildError {
    /// Prints the error readably for a build script and exits with failure.
    pub fn exit(self) -> ! {
        // Each line as a cargo error keeps the device compiler's diagnostics readable.
        for line in self.to_string().lines() {
            println!("cargo::error={line}");
        }
        std::process::exit(1)
    }
}

impl PtxBuilder {
    /// A builder for the kernel crate at `crate_dir` (relative to the calling package).
    pub fn new(crate_dir: impl Into<PathBuf>) -> Self {
        Self {
            crate_dir: crate_dir.into(),
            arch: "sm_70".into(),
            watch: Vec::new(),
            rustflags: Vec::new(),
            launch_bounds: Vec::new(),
        }
    }

    /// The GPU architecture the PTX targets (`.target` directive). PTX for `sm_70` is
    /// JIT-compiled by the driver on every GPU from Volta on; `sm_90` runs only on Hopper+.
    pub fn arch(mut self, arch: impl Into<String>) -> Self {
        self.arch = arch.into();
        self
    }

    /// An extra flag for rustc (e.g. `-C llvm-args=...`).
    pub fn rustflag(mut self, flag: impl Into<String>) -> Self {
        self.rustflags.push(flag.into());
        self
    }

    /// CUDA C's `__launch_bounds__(max_threads, min_blocks)` for one kernel, which rustc
    /// cannot express: adds `.maxntid max_threads, 1, 1` and `.minnctapersm min_blocks` to the
    /// kernel's PTX entry, so ptxas caps its registers to fit `min_blocks` blocks per SM.
    pub fn launch_bounds(mut self, kernel: &str, max_threads: u32, min_blocks: u32) -> Self {
        self.launch_bounds.push((kernel.into(), max_threads, min_blocks));
        self
    }

    /// Another directory whose changes must re-run the build (path dependencies are found
    /// automatically only if they sit inside the kernel crate).
    pub fn watch(mut self, dir: impl Into<PathBuf>) -> Self {
        self.watch.push(dir.into());
        self
    }

    /// Builds the PTX and copies it to `$OUT_DIR/<file_name>`; returns that path.
    pub fn build_into_out_dir(&self, file_name: &str) -> Result<PathBuf, BuildError> {
        let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR is set for build scripts"));
        let ptx = self.build(&out_dir.join("ptx-target"))?;
        let dest = out_dir.join(file_name);
        fs::copy(&ptx, &dest).map_err(|e| BuildError::Io(ptx.clone(), e))?;
        Ok(dest)
    }

    /// Builds the PTX into `target_dir`; returns the path of the `.ptx` file.
    pub fn build(&self, target_dir: &Path) -> Result<PathBuf, BuildError> {
        for dir in std::iter::once(&self.crate_dir).chain(&self.watch) {
            println!("cargo::rerun-if-changed={}", dir.display());
        }
        let manifest = self.crate_dir.join("Cargo.toml");
        let mut cmd = Command::new(env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
        // The outer build's variables would otherwise leak in: its rustflags and wrappers
        // (clippy sets RUSTC_WORKSPACE_WRAPPER), its target, its jobserver.
        for (key, _) in env::vars_os() {
            let key = key.to_string_lossy();
            if key.starts_with("CARGO_") && key != "CARGO_HOME"
                || key.starts_with("RUSTC")
                || key == "RUSTFLAGS"
                || key == "RUSTDOCFLAGS"
                || key == "MAKEFLAGS"
                || key == "MFLAGS"
                || key == "__CARGO_FIX_PLZ"
            {
                cmd.env_remove(key.as_ref());
            }
        }
        cmd.arg("rustc")
            .arg("--manifest-path")
            .arg(&manifest)
            .args(["--lib", "--release", "--crate-type", "cdylib", "--target", TARGET])
            .args(["-Zbuild-std=core", "--message-format=short", "--color=never"])
            .arg("--target-dir")
            .arg(target_dir)
            .env("RUSTFLAGS", format!("-C target-cpu={} {}", self.arch, self.rustflags.join(" ")))
            // DWARF in the PTX turns its `.target` into `sm_XX, debug`; keep kernels optimised.
            .env("CARGO_PROFILE_RELEASE_DEBUG", "false");
        let output = cmd.output().map_err(BuildError::Spawn)?;
        if !output.status.success() {
            let log = String::from_utf8_lossy(&output.stderr);
            let relevant: Vec<&str> = log
                .lines()
                .filter(|l| {
                    !l.trim_start().starts_with("Compiling") && !l.trim_start().starts_with("Blocking")
                })
                .collect();
            return Err(BuildError::Compile(relevant.join("\n")));
        }
        let crate_name = package_name(&manifest).replace('-', "_");
        let ptx = target_dir.join(TARGET).join("release").join(format!("{crate_name}.ptx"));
        if !ptx.is_file() {
            return Err(BuildError::MissingPtx(ptx));
        }
        if !self.launch_bounds.is_empty() {
            let text = fs::read_to_string(&ptx).map_err(|e| BuildError::Io(ptx.clone(), e))?;
            let text = add_launch_bounds(&text, &self.launch_bounds)?;
            fs::write(&ptx, text).map_err(|e| BuildError::Io(ptx.clone(), e))?;
        }
        Ok(ptx)
    }
}

/// Inserts `.maxntid`/`.minnctapersm` after each named kernel's parameter list.
fn add_launch_bounds(ptx: &str, bounds: &[(String, u32, u32)]) -> Result<String, BuildError> {
    let mut out = String::with_capacity(ptx.len() + 64 * bounds.len());
    let mut pending: Option<&(String, u32, u32)> = None;
    let mut applied = 0;
    for line in ptx.lines() {
        out.push_str(line);
        out.push('\n');
        if let Some(name) = line.trim().strip_prefix(".visible .entry ").and_then(|l| l.split('(').next()) {
            pending = bounds.iter().find(|b| b.0 == name);
        }
        if let Some((_, threads, blocks)) = pending
            && line.split("//").next().is_some_and(|code| code.trim() == ")")
        {
            out.push_str(&format!(".maxntid {threads}, 1, 1\n.minnctapersm {blocks}\n"));
            pending = None;
            applied += 1;
        }
    }
    if applied != bounds.len() {
        let names: Vec<&str> = bounds.iter().map(|b| b.0.as_str()).collect();
        return Err(BuildError::Compile(format!(
            "launch bounds for {names:?}: not every kernel was found in the PTX"
        )));
    }
    Ok(out)
}

/// The `name` of the `[package]` in a manifest (a minimal reader: `name = "..."`).
fn package_name(manifest: &Path) -> String {
    let text = fs::read_to_string(manifest).unwrap_or_default();
    text.lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix("name").map(|r| r.trim_start()).and_then(|r| r.strip_prefix('=')))
        .map(|r| r.trim().trim_matches('"').to_string())
        .unwrap_or_else(|| "kernels".into())
}
