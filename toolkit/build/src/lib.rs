//! Compiles a `#![no_std]` kernel crate to PTX with rustc's NVPTX backend, from a build script.
//!
//! ptxkit's counterpart of rust-cuda's `cuda_builder`, for any crate's `build.rs`:
//! ```ignore
//! // build.rs of the crate that launches the kernels
//! fn main() {
//!     ptxkit_build::PtxBuilder::new("../my-kernels")
//!         .arch("sm_70")
//!         .cubins_from_env("MY_APP_CUBINS", ["sm_80", "sm_90"])
//!         .build_into_out_dir("kernels.ptx")
//!         .unwrap_or_else(|e| e.exit());
//! }
//! // src/main.rs: the PTX, the cubins and the kernel table, as one value
//! static KERNELS: ptxkit_host::KernelImages = ptxkit_host::include_kernels!("kernels");
//! ```
//! Next to `kernels.ptx` it writes `kernels.rs`, the table of the crate's kernels as a Rust
//! expression (`&[ptxkit_host::KernelInfo]`, for `include!`), generated from the comment
//! line `#[kernel]` emits into the PTX for each kernel (`// kernel-abi: path::name ...`); the
//! same lines carry `#[kernel(launch_bounds(...))]` and `#[kernel(block(...))]`, which the
//! builder turns into the entry's `.maxntid` (or, for a block shape, `.reqntid`) and
//! `.minnctapersm` directives (rustc cannot express them).
//!
//! With [`PtxBuilder::cubins`], the PTX is also assembled into machine code (cubin) for the
//! named architectures by `ptxas` (`$PTXAS`, else the first of [`PtxBuilder::ptxas`]'s
//! candidates that exists, else `ptxas` on the PATH), in parallel, into
//! `kernels.sm_XX.cubin`, and `kernels.cubins.rs` lists them as `&[(arch, image)]` (e.g.
//! `(90, include_bytes!(...))`) for `include!`. Without `ptxas` the list is empty and one build
//! warning says so: the program then runs from the PTX (JIT-compiled by the driver). A cubin
//! that a stamp says was assembled from the same PTX bytes by the same `ptxas` is kept, without
//! running `ptxas`. `kernels.modules.rs` puts the PTX, the cubins and the table together for
//! `include_kernels!`.
//!
//! With [`PtxBuilder::module`], the crate is built as several PTX modules, one per feature set,
//! each compiled, assembled and cached on its own (`kernels.<module>.ptx`, ...), so that an edit
//! of a file that one module alone loads rebuilds only that module; the host loads them all.
//! A module whose last nested build is current (same command and toolchain, no source,
//! manifest or lock file changed since) is not handed to cargo at all, and
//! `<stem>.build-times.txt` says where the build script's time went.
//!
//! # libdevice
//!
//! Kernels that call `ptxkit_device::math` (NVIDIA's libdevice, `__nv_*` functions) get
//! `libdevice.10.bc` linked in by the NVPTX link step ([`LINK_WRAPPER`]): only the functions
//! they call survive, inlined, with NVVMReflect's `__CUDA_FTZ` = 0 (IEEE denormals) and
//! `__CUDA_PREC_SQRT` = 1 (IEEE `sqrtf`), nvcc's defaults. The builder looks for it in
//! `$PTXKIT_LIBDEVICE` (the file or its directory), then `$CUDA_HOME` / `$CUDA_PATH`
//! (`nvvm/libdevice`), the [`PtxBuilder::libdevice`] candidates, beside `$PTXAS`, each
//! [`PtxBuilder::ptxas`] candidate and the `ptxas` on the PATH (`<toolkit>/bin/ptxas` →
//! `<toolkit>/nvvm/libdevice`, a link followed to its toolkit), the
//! copy `scripts/setup.sh` installs (`.tools/cuda-nvcc/...`, in the calling package or a
//! directory above it), and `/usr/local/cuda`. Kernels that call none of it are linked as
//! before, byte for byte; kernels that do, without a libdevice, fail the build with a message
//! that names `PTXKIT_LIBDEVICE`.
//!
//! # Line tables and debug assertions
//!
//! - **Line tables** (nvcc's `-lineinfo`): the nested build gets
//!   `debug = "line-tables-only"`; the builder then takes the DWARF sections and the `, debug`
//!   of `.target` out of the PTX ([`strip_dwarf`]), keeping `.file`/`.loc`, so the PTX stays
//!   optimised and portable, and runs `ptxas -lineinfo`: compute-sanitizer and Nsight Compute
//!   then name the source line of a fault or a hot instruction.
//! - **Debug assertions**: the nested build gets `debug-assertions = true`, so `debug_assert!`
//!   in a kernel checks (a failure prints its file and line and traps), as do `core`'s own
//!   checks (null and misaligned pointer dereferences), which make such kernels slower and
//!   bigger.
//!
//! Both are on when the outer build's profile is `kernel-dev` (the kernel author's loop: the
//! profile is read from `OUT_DIR`, `target/<profile>/build/...`) and off otherwise; the
//! setters [`PtxBuilder::line_info`] and [`PtxBuilder::debug_assertions`] override the
//! profile, and `PTXKIT_LINEINFO=0|1` and `PTXKIT_DEBUG_ASSERTIONS=0|1` override both.
//! Default (`dev`, `release`) builds are unchanged: no line table, no debug assertions.
//!
//! The crate is built with `cargo rustc --release --target nvptx64-nvidia-cuda
//! -Zbuild-std=core --crate-type cdylib` with fat LTO, in a target directory of its own (so the nested cargo
//! never waits for the lock of the outer build), with the cargo variables of the outer build
//! removed from its environment. Cargo is told to re-run the build script when any file of the
//! kernel crate changes, or any source file of its path dependencies (such as `ptxkit-device`
//! in this repository, or a crate of shared math), which the nested build's dep-info lists.

use std::{
    env, fmt, fs,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    time::{Duration, Instant},
};

pub mod resources;

/// The target triple of rustc's NVPTX backend.
pub const TARGET: &str = "nvptx64-nvidia-cuda";

/// Builder for one kernel crate.
#[derive(Clone, Debug)]
pub struct PtxBuilder {
    crate_dir: PathBuf,
    arch: String,
    watch: Vec<PathBuf>,
    rustflags: Vec<String>,
    cubins: Vec<String>,
    ptxas: Vec<PathBuf>,
    libdevice: Vec<PathBuf>,
    line_info: Option<bool>,
    debug_assertions: Option<bool>,
    modules: Vec<Module>,
    /// A configuration mistake found by a setter, reported by the build.
    invalid: Option<String>,
}

/// One PTX module of a kernel crate: the crate built with some of its cargo features.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Module {
    /// The module's name, in its files' names (`kernels.<name>.ptx`); empty for the one
    /// module of a crate built whole.
    name: String,
    /// The cargo features it is built with (`--no-default-features --features ...`); `None`
    /// for the crate's default features.
    features: Option<Vec<String>>,
    /// The architecture of a module built for a newer GPU than the others
    /// ([`PtxBuilder::module_for_arch`]); `None`: the builder's.
    arch: Option<String>,
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
    /// The builder was configured wrongly (e.g. a bad architecture in the cubin variable).
    Config(String),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Spawn(e) => write!(f, "could not run cargo to build the kernels: {e}"),
            Self::Compile(log) => write!(f, "the kernel crate failed to compile for {TARGET}:\n{log}"),
            Self::MissingPtx(p) => write!(f, "the kernel build wrote no PTX at {}", p.display()),
            Self::Io(p, e) => write!(f, "{}: {e}", p.display()),
            Self::Config(message) => f.write_str(message),
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
            cubins: Vec::new(),
            ptxas: Vec::new(),
            libdevice: Vec::new(),
            line_info: None,
            debug_assertions: None,
            modules: Vec::new(),
            invalid: None,
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

    /// Also assemble machine code for these architectures (`sm_80`, `sm_90`, ...; `sm_90a` for
    /// a module using Hopper's architecture-specific `wgmma`, built with `.arch("sm_90a")`).
    pub fn cubins<S: Into<String>>(mut self, archs: impl IntoIterator<Item = S>) -> Self {
        self.cubins = archs.into_iter().map(Into::into).collect();
        self
    }

    /// The cubin architectures from the environment variable `var` if it is set (a comma
    /// list such as `sm_90`, or `none` for PTX only), else `default`. A kernel author sets it
    /// to their own GPU's architecture to shorten the edit-to-run loop; the build re-runs
    /// when it changes, and a value that is not `sm_NN` (NN ≥ 70) fails the build with a
    /// message naming the variable.
    pub fn cubins_from_env<S: Into<String>>(self, var: &str, default: impl IntoIterator<Item = S>) -> Self {
        println!("cargo::rerun-if-env-changed={var}");
        let value = env::var(var).ok();
        match parse_arch_list(var, value.as_deref()) {
            Ok(Some(archs)) => self.cubins(archs),
            Ok(None) => self.cubins(default),
            Err(message) => Self { invalid: Some(message), ..self },
        }
    }

    /// In the `kernel-dev` profile (the kernel author's loop, read from `OUT_DIR` as for line
    /// tables) and with `var` unset: cubins only for this machine's GPUs, those of the
    /// architectures already chosen that `nvidia-smi` reports, else `without_gpu` (a build
    /// machine with no GPU). Other GPUs run the PTX, JIT-compiled by the driver. `ptxas` is most
    /// of a kernel edit's rebuild, once per architecture. Call it after
    /// [`cubins`](Self::cubins) or [`cubins_from_env`](Self::cubins_from_env) with the same
    /// `var`; other profiles keep their cubins.
    pub fn kernel_dev_cubins<S: Into<String>>(
        self,
        var: &str,
        without_gpu: impl IntoIterator<Item = S>,
    ) -> Self {
        let out_dir = env::var_os("OUT_DIR").map(PathBuf::from);
        let profile = out_dir.as_deref().and_then(outer_profile);
        if env::var_os(var).is_some() || profile.as_deref() != Some(KERNEL_DEV_PROFILE) {
            return self;
        }
        let local = local_gpu_archs(out_dir.as_deref());
        let without_gpu = without_gpu.into_iter().map(Into::into).collect();
        let archs = kernel_dev_archs(&self.cubins, &local, without_gpu);
        self.cubins(archs)
    }

    /// Where to look for `ptxas` (relative to the calling package) before the PATH;
    /// `$PTXAS` comes first.
    pub fn ptxas(mut self, candidate: impl Into<PathBuf>) -> Self {
        self.ptxas.push(candidate.into());
        self
    }

    /// Where to look for NVIDIA's libdevice (`libdevice.10.bc`, or a directory holding it;
    /// relative to the calling package), after `$PTXKIT_LIBDEVICE` and `$CUDA_HOME` /
    /// `$CUDA_PATH` and before the default places (see the crate documentation).
    pub fn libdevice(mut self, candidate: impl Into<PathBuf>) -> Self {
        self.libdevice.push(candidate.into());
        self
    }

    /// Line tables in the PTX (`.file`/`.loc`, nvcc's `-lineinfo`) and `ptxas -lineinfo`, so
    /// that compute-sanitizer and Nsight name a kernel's source lines; the code stays
    /// optimised. Default: on in the `kernel-dev` profile, off otherwise; `$PTXKIT_LINEINFO`
    /// (`0` or `1`) overrides both.
    pub fn line_info(mut self, on: bool) -> Self {
        self.line_info = Some(on);
        self
    }

    /// `debug_assert!` (and `core`'s own debug checks) kept in the kernels
    /// (`-C debug-assertions=on`). Default: on in the `kernel-dev` profile, off otherwise;
    /// `$PTXKIT_DEBUG_ASSERTIONS` (`0` or `1`) overrides both.
    pub fn debug_assertions(mut self, on: bool) -> Self {
        self.debug_assertions = Some(on);
        self
    }

    /// Another directory whose changes must re-run the build (the kernel crate and the source
    /// files of its path dependencies are watched without it).
    pub fn watch(mut self, dir: impl Into<PathBuf>) -> Self {
        self.watch.push(dir.into());
        self
    }

    /// Builds the crate as one PTX module of several: the crate with only `features` on
    /// (`--no-default-features --features ...`), compiled in a target directory of its own,
    /// and assembled and cached on its own. rustc reads only the files a feature set's `mod`
    /// items load, so an edit of a file that one module alone loads rebuilds only that module
    /// (its PTX and its cubins); the other modules' builds find themselves fresh. Without any
    /// `module`, the crate is built whole, with its default features, as one module. Each
    /// kernel must be in exactly one module (the build fails otherwise); the host loads every
    /// module and finds each kernel in its own ([`build_into_out_dir`](Self::build_into_out_dir)
    /// says which files hold what).
    pub fn module<S: Into<String>>(
        mut self,
        name: impl Into<String>,
        features: impl IntoIterator<Item = S>,
    ) -> Self {
        let name = name.into();
        let valid = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid || self.modules.iter().any(|m| m.name == name) {
            self.invalid.get_or_insert(format!(
                "PTX module {name:?}: a module needs a name of its own, of letters, digits and `_`"
            ));
        }
        self.modules.push(Module {
            name,
            features: Some(features.into_iter().map(Into::into).collect()),
            arch: None,
        });
        self
    }

    /// A [`module`](Self::module) for a newer GPU than the others: its PTX targets `arch`
    /// (e.g. `sm_90`, for Hopper's `griddepcontrol`, clusters or TMA, beside `sm_70` modules),
    /// and its only cubin is for `arch` (where the builder assembles cubins at all). The host
    /// loads it only on a GPU of that architecture or newer (`ptxkit_host::Gpu::can_launch`
    /// tells), from its own cubin or its PTX, and the other modules' image choice ignores it.
    /// It is built in a target directory of its own architecture (`core` compiled once per
    /// architecture), and its kernels need names of their own, as every module's do.
    pub fn module_for_arch<S: Into<String>>(
        self,
        name: impl Into<String>,
        features: impl IntoIterator<Item = S>,
        arch: impl Into<String>,
    ) -> Self {
        let arch = arch.into();
        let mut builder = self.module(name, features);
        // `sm_XXa` code runs on that architecture alone, which `requires` cannot say.
        if arch.ends_with('a') || arch_number(&arch).is_none() {
            builder.invalid.get_or_insert(format!(
                "module architecture {arch:?} is not of the form sm_XX (an architecture-specific sm_XXa \
                 module needs a builder of its own, `.arch(\"sm_90a\")`)"
            ));
        }
        if let Some(module) = builder.modules.last_mut() {
            module.arch = Some(arch);
        }
        builder
    }

    /// Builds the PTX and copies it to `$OUT_DIR/<file_name>`, and writes the kernel table
    /// next to it (the same name with the extension `rs`); returns the PTX's path.
    ///
    /// Every file it writes, for `file_name` `kernels.ptx` and one module (the crate built
    /// whole): `kernels.ptx`; `kernels.rs`, the kernel table; `kernels.sm_XX.cubin` and
    /// `kernels.cubins.rs`, the cubins and their table; `kernels.modules.rs`, the list of
    /// modules (here one) with their images, which `ptxkit_host::include_kernels!` embeds.
    /// With [`module`](Self::module)s, each module `m` has its `kernels.m.ptx`,
    /// `kernels.m.rs`, `kernels.m.sm_XX.cubin` and `kernels.m.cubins.rs`, `kernels.rs` is the
    /// table of every module's kernels, and the returned path is the first module's PTX.
    ///
    /// The modules are built one after another in one target directory (`core` and the
    /// proc-macros compiled once for all), and a module for a newer GPU in a directory of its
    /// own, beside them; each module's `ptxas` runs, one per architecture, start as soon as
    /// its PTX is written, beside the next module's build, except where a cubin was already
    /// assembled from the same PTX bytes by the same `ptxas` (a stamp next to each cubin
    /// records both).
    pub fn build_into_out_dir(&self, file_name: &str) -> Result<PathBuf, BuildError> {
        if let Some(message) = &self.invalid {
            return Err(BuildError::Config(message.clone()));
        }
        let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR is set for build scripts"));
        let stem = file_name.strip_suffix(".ptx").unwrap_or(file_name);
        let whole = [Module { name: String::new(), features: None, arch: None }];
        let modules: &[Module] = if self.modules.is_empty() { &whole } else { &self.modules };
        let module_file = |module: &Module, extension: &str| match module.name.as_str() {
            "" => out_dir.join(format!("{stem}.{extension}")),
            name => out_dir.join(format!("{stem}.{name}.{extension}")),
        };
        // One target directory for every module, and for every package of the outer build
        // ([`shared_target_dir`]), built one after another: `core` (built from source for the
        // GPU target) and the host's proc-macro dependencies are compiled once, not once per
        // module and package (the simulations' build script on a cold build, 2 cores: 54 s
        // with a directory per module), and each module's artifacts stay fresh beside the
        // others' (cargo keeps one per feature set). Cargo locks the directory, so the builds
        // could not overlap anyway (a module for a newer GPU has a directory of its own, and
        // builds beside them); a lock of our own keeps another package's build script from
        // writing a crate's `.ptx` between a module's build and its copy here.
        println!("cargo::rerun-if-env-changed={TARGET_DIR_VAR}");
        let target_dir = nested_target_dir(env::var_os(TARGET_DIR_VAR), &out_dir)?;
        fs::create_dir_all(&target_dir).map_err(|e| BuildError::Io(target_dir.clone(), e))?;
        let lock_path = target_dir.join("ptxkit-build.lock");
        let lock = fs::File::create(&lock_path).map_err(|e| BuildError::Io(lock_path.clone(), e))?;
        lock.lock().map_err(|e| BuildError::Io(lock_path.clone(), e))?;
        let settings = self.settings()?;
        let mut ptx_files = Vec::new();
        let mut all_markers: Vec<(&str, Marker)> = Vec::new();
        // Where the build script's time goes, for a kernel author's edit-to-run loop.
        let mut times =
            String::from("# ptxkit-build: seconds per step of the last build (docs/startup.md)\n");
        let ptxas = if self.cubins.is_empty() { None } else { self.find_ptxas() };
        if !self.cubins.is_empty() && ptxas.is_none() {
            println!(
                "cargo::warning=ptxas not found ($PTXAS, {:?}, PATH): embedding PTX only, which the driver \
                 JIT-compiles at first use (scripts/setup.sh installs ptxas)",
                self.ptxas
            );
        }
        let assembler = ptxas.map(|ptxas| Assembler::new(ptxas, settings.line_info));
        // Each module's `ptxas` runs start as soon as its PTX is written, beside the cargo build
        // of the next module (a nested rustc is mostly one thread; `ptxas` fills the other cores).
        // The modules of one target directory build one after another (cargo locks it); a
        // module for a newer GPU builds in a directory of its own ([`Self::build_module`]), so
        // each directory's modules build in a thread of their own, beside the others'.
        let directories = modules_by_directory(modules, &self.arch);
        let images = std::thread::scope(|scope| -> Result<Vec<Vec<(u32, PathBuf)>>, BuildError> {
            let (settings, assembler, target_dir) = (&settings, &assembler, &target_dir);
            let module_file = &module_file;
            let builders: Vec<_> = directories
                .iter()
                .map(|members| {
                    scope.spawn(move || {
                        let mut built = Vec::new();
                        for &i in members {
                            let module = &modules[i];
                            let clock = Instant::now();
                            let (ptx, ran) = self.build_module(target_dir, module, settings)?;
                            let took = clock.elapsed();
                            let dest = module_file(module, "ptx");
                            let text =
                                fs::read_to_string(&ptx).map_err(|e| BuildError::Io(ptx.clone(), e))?;
                            write_if_changed(&dest, &text)?;
                            let jobs = match assembler {
                                Some(assembler) => {
                                    assembler.spawn(scope, &dest, &text, &self.cubin_archs_of(module))?
                                }
                                None => Vec::new(),
                            };
                            built.push((i, ran, took, dest, text, jobs));
                        }
                        Ok::<_, BuildError>(built)
                    })
                })
                .collect();
            // Back in the modules' order, whichever thread built them (an error: the first
            // directory's that has one).
            let mut built = Vec::new();
            for builder in builders {
                built.extend(builder.join().expect("module build thread")?);
            }
            built.sort_by_key(|(i, ..)| *i);
            let mut jobs = Vec::new();
            for (i, ran, took, dest, text, module_jobs) in built {
                let module = &modules[i];
                let what = if ran { "compiled by cargo" } else { "current, cargo not run" };
                times.push_str(&format!("module {:?}: {what}, {:.2} s\n", module.name, took.as_secs_f64()));
                let markers = markers(&text);
                write_if_changed(&module_file(module, "rs"), &kernel_table(&markers))?;
                for marker in markers {
                    if let Some((other, _)) = all_markers.iter().find(|(_, m)| m.entry() == marker.entry()) {
                        return Err(BuildError::Config(format!(
                            "kernel {} is in two PTX modules, {other:?} and {:?}: each kernel must be in one \
                             module only (the host finds a kernel by its name)",
                            marker.path, module.name
                        )));
                    }
                    all_markers.push((&module.name, marker));
                }
                if assembler.is_some() {
                    jobs.push(module_jobs);
                }
                ptx_files.push((dest, text));
            }
            let clock = Instant::now();
            let mut images = Vec::new();
            for (module, (ptx, _)) in jobs.into_iter().zip(&ptx_files) {
                let mut cubins = Vec::new();
                for job in module {
                    let (number, cubin, took) = job.join().expect("ptxas thread")?;
                    if let Some(took) = took {
                        let name = ptx.file_name().unwrap_or_default().display();
                        times.push_str(&format!("ptxas sm_{number} {name}: {:.2} s\n", took.as_secs_f64()));
                    }
                    cubins.push((number, cubin));
                }
                images.push(cubins);
            }
            if assembler.is_some() {
                times.push_str(&format!(
                    "ptxas, after the last module: {:.2} s\n",
                    clock.elapsed().as_secs_f64()
                ));
            }
            Ok(images)
        })?;
        if !self.modules.is_empty() {
            let all: Vec<Marker> = all_markers.into_iter().map(|(_, m)| m).collect();
            write_if_changed(&out_dir.join(format!("{stem}.rs")), &kernel_table(&all))?;
        }
        let images = if assembler.is_some() {
            report_resources(&out_dir.join(format!("{stem}.resources.txt")), &images)?;
            images
        } else {
            vec![Vec::new(); modules.len()]
        };
        let mut list = String::from(
            "// Generated by ptxkit-build: the kernel crate's PTX modules, each with its cubins and its kernels.\n&[\n",
        );
        for (module, images) in modules.iter().zip(&images) {
            let cubins = module_file(module, "cubins.rs");
            write_if_changed(&cubins, &cubin_table(images))?;
            let name = if module.name.is_empty() { stem } else { &module.name };
            let requires = module.arch.as_deref().and_then(arch_number).unwrap_or(0);
            list.push_str(&format!(
                "    ::ptxkit_host::KernelModule {{\n        name: {name:?},\n        ptx: include_str!({:?}),\n        \
                 cubins: include!({:?}),\n        kernels: include!({:?}),\n        requires: {requires},\n    }},\n",
                module_file(module, "ptx").display().to_string(),
                cubins.display().to_string(),
                module_file(module, "rs").display().to_string(),
            ));
        }
        list.push_str("]\n");
        write_if_changed(&out_dir.join(format!("{stem}.modules.rs")), &list)?;
        let times_file = out_dir.join(format!("{stem}.build-times.txt"));
        fs::write(&times_file, times).map_err(|e| BuildError::Io(times_file.clone(), e))?;
        Ok(ptx_files.swap_remove(0).0)
    }

    /// `$PTXAS`, the first candidate that exists, or `ptxas` if the PATH has one.
    fn find_ptxas(&self) -> Option<PathBuf> {
        println!("cargo::rerun-if-env-changed=PTXAS");
        if let Some(path) = env::var_os("PTXAS") {
            return Some(path.into());
        }
        for candidate in &self.ptxas {
            println!("cargo::rerun-if-changed={}", candidate.display());
            if candidate.is_file() {
                return Some(candidate.clone());
            }
        }
        let on_path = Command::new("ptxas").arg("--version").output().is_ok_and(|o| o.status.success());
        on_path.then(|| "ptxas".into())
    }

    /// The cubin architectures of `module`: the builder's [`cubins`](Self::cubins), or for a
    /// module of its own architecture that one alone, where the builder assembles any of its
    /// major version (not where a kernel author narrowed the list to an older GPU's).
    fn cubin_archs_of(&self, module: &Module) -> Vec<String> {
        match &module.arch {
            None => self.cubins.clone(),
            Some(arch) => own_arch_cubins(arch, &self.cubins),
        }
    }

    /// The nested build's `RUSTFLAGS`: the target GPU, the extra flags, and (on Unix) the link
    /// wrapper [`LINK_WRAPPER`], written into `target_dir`.
    fn device_rustflags(&self, target_dir: &Path, arch: &str) -> Result<String, BuildError> {
        let mut flags = format!("-C target-cpu={arch} {}", self.rustflags.join(" "));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::create_dir_all(target_dir).map_err(|e| BuildError::Io(target_dir.to_path_buf(), e))?;
            let wrapper = target_dir.join("link-without-builtins.sh");
            write_if_changed(&wrapper, LINK_WRAPPER)?;
            fs::set_permissions(&wrapper, fs::Permissions::from_mode(0o755))
                .map_err(|e| BuildError::Io(wrapper.clone(), e))?;
            flags.push_str(&format!(" -C linker={}", wrapper.display()));
        }
        Ok(flags)
    }

    /// Builds the PTX of the crate whole (its default features) into `target_dir`; returns the
    /// path of the `.ptx` file.
    pub fn build(&self, target_dir: &Path) -> Result<PathBuf, BuildError> {
        let whole = Module { name: String::new(), features: None, arch: None };
        Ok(self.build_module(target_dir, &whole, &self.settings()?)?.0)
    }

    /// What every module's build shares: libdevice, line tables, debug assertions.
    fn settings(&self) -> Result<Settings, BuildError> {
        for var in [LINEINFO_VAR, DEBUG_ASSERTIONS_VAR] {
            println!("cargo::rerun-if-env-changed={var}");
        }
        let profile = env::var_os("OUT_DIR").and_then(|dir| outer_profile(Path::new(&dir)));
        let profile = profile.as_deref();
        let line_info =
            resolve_switch(LINEINFO_VAR, env::var(LINEINFO_VAR).ok().as_deref(), self.line_info, profile)
                .map_err(BuildError::Config)?;
        let debug_assertions = resolve_switch(
            DEBUG_ASSERTIONS_VAR,
            env::var(DEBUG_ASSERTIONS_VAR).ok().as_deref(),
            self.debug_assertions,
            profile,
        )
        .map_err(BuildError::Config)?;
        Ok(Settings { libdevice: self.find_libdevice()?, line_info, debug_assertions })
    }

    /// `$PTXKIT_LIBDEVICE` (a file, or a directory holding `libdevice.10.bc`); else the first
    /// that exists of `$CUDA_HOME` / `$CUDA_PATH`'s `nvvm/libdevice`, the [`libdevice`]
    /// candidates, the `nvvm/libdevice` beside `$PTXAS`, each [`ptxas`] candidate and the
    /// `ptxas` on the PATH (links followed), the `.tools` copy of
    /// `scripts/setup.sh` in the calling package or a directory above it, and
    /// `/usr/local/cuda`.
    ///
    /// [`libdevice`]: Self::libdevice
    /// [`ptxas`]: Self::ptxas
    fn find_libdevice(&self) -> Result<Option<PathBuf>, BuildError> {
        let in_dir = |path: PathBuf| if path.is_dir() { path.join(LIBDEVICE_FILE) } else { path };
        println!("cargo::rerun-if-env-changed={LIBDEVICE_VAR}");
        if let Some(path) = env::var_os(LIBDEVICE_VAR).filter(|p| !p.is_empty()) {
            let file = in_dir(PathBuf::from(path));
            if !file.is_file() {
                return Err(BuildError::Config(format!(
                    "{LIBDEVICE_VAR}={}: no such file (name libdevice.10.bc or the directory holding it)",
                    file.display()
                )));
            }
            return Ok(Some(fs::canonicalize(&file).unwrap_or(file)));
        }
        let mut candidates = Vec::new();
        for var in ["CUDA_HOME", "CUDA_PATH"] {
            println!("cargo::rerun-if-env-changed={var}");
            if let Some(home) = env::var_os(var).filter(|p| !p.is_empty()) {
                candidates.push(Path::new(&home).join("nvvm/libdevice").join(LIBDEVICE_FILE));
            }
        }
        candidates.extend(self.libdevice.iter().cloned().map(in_dir));
        // Beside the ptxas the build may use: `$PTXAS`, the candidates, the one on the PATH.
        let on_path = which(Path::new("ptxas"));
        let from_env = env::var_os("PTXAS").filter(|p| !p.is_empty()).map(PathBuf::from);
        let assemblers = from_env.iter().chain(&self.ptxas).chain(on_path.is_absolute().then_some(&on_path));
        candidates.extend(assemblers.filter_map(|ptxas| libdevice_beside(ptxas)));
        let package = env::var_os("CARGO_MANIFEST_DIR").map_or_else(|| PathBuf::from("."), PathBuf::from);
        candidates.extend(package.ancestors().map(|dir| dir.join(SETUP_LIBDEVICE)));
        candidates.push(Path::new("/usr/local/cuda/nvvm/libdevice").join(LIBDEVICE_FILE));
        // Absolute: the link wrapper runs in another directory.
        Ok(candidates.into_iter().find(|c| c.is_file()).map(|c| fs::canonicalize(&c).unwrap_or(c)))
    }

    /// Builds one module's PTX into `target_dir`; returns the path of the `.ptx` file, and
    /// whether cargo ran (`false`: the last build is current, [`fresh_sources`]).
    fn build_module(
        &self,
        target_dir: &Path,
        module: &Module,
        settings: &Settings,
    ) -> Result<(PathBuf, bool), BuildError> {
        for dir in std::iter::once(&self.crate_dir).chain(&self.watch) {
            println!("cargo::rerun-if-changed={}", dir.display());
        }
        // A module of its own architecture builds in a directory of that architecture: the
        // builds' `RUSTFLAGS` differ, and in one directory each would rebuild `core` for the
        // other.
        let arch = module.arch.as_deref().unwrap_or(&self.arch);
        let own_dir;
        let target_dir = if arch == self.arch {
            target_dir
        } else {
            own_dir = target_dir.join(arch);
            &own_dir
        };
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
            .args(["-Zbuild-std=core", "--message-format=short", "--color=never"]);
        if let Some(features) = &module.features {
            cmd.arg("--no-default-features");
            if !features.is_empty() {
                cmd.arg("--features").arg(features.join(","));
            }
        }
        cmd.arg("--target-dir")
            .arg(target_dir)
            .env("RUSTFLAGS", self.device_rustflags(target_dir, arch)?)
            // Line tables only (`.file`/`.loc`) when asked for: the DWARF sections and the
            // `, debug` of `.target` that come with them are taken out below
            // ([`strip_dwarf`]), so the kernels stay optimised and portable.
            .env("CARGO_PROFILE_RELEASE_DEBUG", if settings.line_info { "line-tables-only" } else { "false" })
            .env(
                "CARGO_PROFILE_RELEASE_DEBUG_ASSERTIONS",
                if settings.debug_assertions { "true" } else { "false" },
            )
            // The NVPTX link step (llvm-bitcode-linker) runs `default<O3>` over everything it
            // is given before dropping what no kernel uses: without LTO that is all of `core`
            // (9 of the 11.5 s a kernel crate's rebuild took). Fat LTO lets rustc drop the
            // unused code first, so the linker optimises only the kernels (5.3 s in all).
            .env("CARGO_PROFILE_RELEASE_LTO", "fat");
        // The link wrapper adds libdevice when the kernels call it (and fails, naming
        // PTXKIT_LIBDEVICE, when there is none).
        match &settings.libdevice {
            Some(path) => cmd.env(WRAPPER_LIBDEVICE_VAR, path),
            None => cmd.env_remove(WRAPPER_LIBDEVICE_VAR),
        };
        let link_error = target_dir.join("link-error.txt");
        cmd.env("PTXKIT_LINK_ERROR_FILE", &link_error);
        let crate_name = package_name(&manifest).replace('-', "_");
        // A module's own copies: the modules share `target_dir`.
        let own = |extension: &str| match module.name.as_str() {
            "" => target_dir.join(format!("{crate_name}.{extension}")),
            name => target_dir.join(format!("{crate_name}.{name}.{extension}")),
        };
        let finished = own("ptx");
        let (stamp, sources_copy) = (own("fresh"), own("d"));
        let key = fresh_key(&cmd);
        if let Some(sources) = fresh_sources(&stamp, &key, &sources_copy, &finished) {
            for source in sources {
                println!("cargo::rerun-if-changed={}", source.display());
            }
            return Ok((finished, false));
        }
        let _ = fs::remove_file(&stamp);
        let _ = fs::remove_file(&link_error);
        // Files changed after this instant are newer than the stamp, even if cargo read them
        // before they changed.
        let started = std::time::SystemTime::now();
        let output = cmd.output().map_err(BuildError::Spawn)?;
        if !output.status.success() {
            let log = String::from_utf8_lossy(&output.stderr);
            if fs::read_to_string(&link_error).is_ok_and(|e| e.contains(NO_LIBDEVICE_MARKER)) {
                return Err(BuildError::Config(no_libdevice_message()));
            }
            let relevant: Vec<&str> = log
                .lines()
                .filter(|l| {
                    !l.trim_start().starts_with("Compiling") && !l.trim_start().starts_with("Blocking")
                })
                .collect();
            let log = relevant.join("\n");
            return Err(BuildError::Compile(match module.name.as_str() {
                "" => log,
                name => format!("(PTX module {name:?})\n{log}"),
            }));
        }
        let ptx = target_dir.join(TARGET).join("release").join(format!("{crate_name}.ptx"));
        if !ptx.is_file() {
            return Err(BuildError::MissingPtx(ptx));
        }
        // Every source file of the crate and of its path dependencies, as cargo's dep-info lists
        // them (not the sysroot's): a change to any re-runs the build script.
        let dep_info = fs::read_to_string(ptx.with_extension("d")).unwrap_or_default();
        for source in dep_info_sources(&dep_info) {
            println!("cargo::rerun-if-changed={}", source.display());
        }
        // The launch bounds go into a copy: cargo's own output stays as rustc wrote it, so a
        // build that finds the crate fresh does not add them twice.
        let text = strip_dwarf(&fs::read_to_string(&ptx).map_err(|e| BuildError::Io(ptx.clone(), e))?);
        if let Some(name) = extern_funcs(&text).find(|f| f.starts_with("__nv_") || *f == "__nvvm_reflect") {
            return Err(BuildError::Config(match &settings.libdevice {
                Some(path) => {
                    format!("{name} is left undefined in the PTX: {} does not define it", path.display())
                }
                None => format!("{name} is left undefined in the PTX: {}", no_libdevice_message()),
            }));
        }
        let with_bounds = add_launch_bounds(&text, &markers(&text))?;
        write_if_changed(&finished, &with_bounds)?;
        write_if_changed(&sources_copy, &dep_info)?;
        write_stamp(&stamp, &key, started)?;
        Ok((finished, true))
    }
}

/// What the modules of one build share (see [`PtxBuilder::settings`]).
#[derive(Clone, Debug)]
struct Settings {
    libdevice: Option<PathBuf>,
    line_info: bool,
    debug_assertions: bool,
}

/// The nested GPU builds' target directory (default: [`shared_target_dir`]); several
/// workspaces may share one, as they may share a `CARGO_TARGET_DIR`.
pub const TARGET_DIR_VAR: &str = "PTXKIT_TARGET_DIR";
/// Overrides [`PtxBuilder::line_info`]: `0` or `1`.
pub const LINEINFO_VAR: &str = "PTXKIT_LINEINFO";
/// Overrides [`PtxBuilder::debug_assertions`]: `0` or `1`.
pub const DEBUG_ASSERTIONS_VAR: &str = "PTXKIT_DEBUG_ASSERTIONS";
/// NVIDIA's libdevice, the file or its directory (see [`PtxBuilder::libdevice`]).
pub const LIBDEVICE_VAR: &str = "PTXKIT_LIBDEVICE";
/// The profile in which line tables and debug assertions are on by default.
pub const KERNEL_DEV_PROFILE: &str = "kernel-dev";
/// libdevice's file name in the CUDA toolkit's `nvvm/libdevice`.
const LIBDEVICE_FILE: &str = "libdevice.10.bc";
/// Where `scripts/setup.sh` installs libdevice (the pip wheel `nvidia-cuda-nvcc`).
const SETUP_LIBDEVICE: &str = ".tools/cuda-nvcc/nvidia/cuda_nvcc/nvvm/libdevice/libdevice.10.bc";
/// The variable through which the builder gives [`LINK_WRAPPER`] libdevice's path.
const WRAPPER_LIBDEVICE_VAR: &str = "PTXKIT_LINK_LIBDEVICE";
/// What [`LINK_WRAPPER`] prints when the kernels call libdevice and it has none.
const NO_LIBDEVICE_MARKER: &str = "ptxkit-build: libdevice needed but not found";

fn no_libdevice_message() -> String {
    format!(
        "the kernels call NVIDIA's libdevice (`__nv_*` functions: ptxkit_device::math), but no {LIBDEVICE_FILE} was \
         found: set {LIBDEVICE_VAR} to it (or to its directory), or CUDA_HOME to a CUDA toolkit \
         (scripts/setup.sh installs one in .tools/)"
    )
}

/// The outer build's profile, from its `OUT_DIR` (`target/<profile>/build/<pkg>-<hash>/out`,
/// or `.../build/<pkg>/<hash>/out` in newer cargo's layout, with `target/<triple>/<profile>/...`
/// when cross-compiling): `debug` for `dev`, `release`, or a custom profile's name such as
/// `kernel-dev`.
pub fn outer_profile(out_dir: &Path) -> Option<String> {
    if out_dir.file_name()? != "out" {
        return None;
    }
    // The nearest `build` above the package's directory (one or two levels up).
    let build =
        out_dir.ancestors().skip(2).take(2).find(|dir| dir.file_name().is_some_and(|n| n == "build"))?;
    Some(build.parent()?.file_name()?.to_string_lossy().into_owned())
}

/// The nested builds' target directory: `$PTXKIT_TARGET_DIR` (`from_env`; refused if it names
/// something that is not a directory), else [`shared_target_dir`] of `out_dir`, else
/// `out_dir/ptx-target`.
fn nested_target_dir(from_env: Option<std::ffi::OsString>, out_dir: &Path) -> Result<PathBuf, BuildError> {
    match from_env {
        Some(dir) if !dir.is_empty() => {
            let dir = PathBuf::from(dir);
            if dir.exists() && !dir.is_dir() {
                return Err(BuildError::Config(format!(
                    "{TARGET_DIR_VAR}={} is not a directory: name a directory for the GPU builds (or unset it)",
                    dir.display()
                )));
            }
            Ok(dir)
        }
        _ => Ok(shared_target_dir(out_dir).unwrap_or_else(|| out_dir.join("ptx-target"))),
    }
}

/// The nested builds' target directory shared by every package of the outer build's profile:
/// `ptxkit-target` beside the outer `build` directory above `out_dir` (`target/debug/ptxkit-target`
/// for `target/debug/build/<package>/<hash>/out`), or `None` for an `out_dir` not laid out so.
pub fn shared_target_dir(out_dir: &Path) -> Option<PathBuf> {
    if out_dir.file_name()? != "out" {
        return None;
    }
    let build =
        out_dir.ancestors().skip(2).take(2).find(|dir| dir.file_name().is_some_and(|n| n == "build"))?;
    Some(build.parent()?.join("ptxkit-target"))
}

/// A switch that is on in the `kernel-dev` profile: `env_value` (`0`/`1`, else an error naming
/// `var`) wins, then the builder's `setting`, then the profile.
pub fn resolve_switch(
    var: &str,
    env_value: Option<&str>,
    setting: Option<bool>,
    profile: Option<&str>,
) -> Result<bool, String> {
    match env_value.map(str::trim) {
        Some("1") => Ok(true),
        Some("0") => Ok(false),
        Some(other) => Err(format!("{var}={other:?}: write 0 (off) or 1 (on)")),
        None => Ok(setting.unwrap_or(profile == Some(KERNEL_DEV_PROFILE))),
    }
}

/// The modules (by index, in order) grouped by the target directory each builds in: one for
/// the builder's architecture `arch`, one for each other architecture a module is built for
/// ([`PtxBuilder::module_for_arch`]); the groups in the order of their first module.
fn modules_by_directory(modules: &[Module], arch: &str) -> Vec<Vec<usize>> {
    let mut directories: Vec<(&str, Vec<usize>)> = Vec::new();
    for (i, module) in modules.iter().enumerate() {
        let own = module.arch.as_deref().unwrap_or(arch);
        match directories.iter_mut().find(|(a, _)| *a == own) {
            Some((_, members)) => members.push(i),
            None => directories.push((own, vec![i])),
        }
    }
    directories.into_iter().map(|(_, members)| members).collect()
}

/// What a cubin comes from, assembled in the background ([`Assembler::spawn`]): its
/// architecture's number, the cubin's path, and how long `ptxas` took (`None`: the stamp said
/// it was current).
type Assembled = (u32, PathBuf, Option<Duration>);

/// `ptxas` with the builder's flags, and what identifies it in the cubins' stamps.
struct Assembler {
    ptxas: PathBuf,
    extra: Vec<&'static str>,
    /// The assembler's path, size and modification time.
    identity: String,
}

impl Assembler {
    fn new(ptxas: PathBuf, line_info: bool) -> Self {
        let mut extra: Vec<&'static str> = Vec::new();
        // `-lineinfo`: the cubin keeps the PTX's line table (for compute-sanitizer, Nsight).
        if line_info {
            extra.push("-lineinfo");
        }
        // One module's kernels optimised on every core (`-split-compile 0`, CUDA 12.9's
        // ptxas: the same SASS, checked for every module and architecture of the simulations;
        // the largest module's 2.35 s took 1.29 s on two cores), where this ptxas takes it.
        if takes_split_compile(&ptxas) {
            extra.extend(["-split-compile", "0"]);
        }
        let identity = match fs::metadata(&ptxas).or_else(|_| fs::metadata(which(&ptxas))) {
            Ok(meta) => format!(
                "{} {} {:?}",
                ptxas.display(),
                meta.len(),
                meta.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            ),
            Err(_) => ptxas.display().to_string(),
        };
        Self { ptxas, extra, identity }
    }

    /// Starts assembling the PTX at `ptx` (whose text is `text`) for each of `archs`, one
    /// thread each, except where the cubin's stamp says it was assembled from these very bytes
    /// by this `ptxas` already; the threads' results are the cubins.
    fn spawn<'scope>(
        &'scope self,
        scope: &'scope std::thread::Scope<'scope, '_>,
        ptx: &Path,
        text: &str,
        archs: &[String],
    ) -> Result<Vec<std::thread::ScopedJoinHandle<'scope, Result<Assembled, BuildError>>>, BuildError> {
        let content = format!("{:016x} {}", fnv1a(text.as_bytes()), text.len());
        // What each kernel takes is read from ptxas's report (`-v`), with the launch bounds.
        let bounds = std::sync::Arc::new(resources::launch_bounds(text));
        let mut jobs = Vec::new();
        for arch in archs {
            let number = arch_number(arch).ok_or_else(|| {
                BuildError::Compile(format!("cubin architecture {arch:?} is not of the form sm_XX or sm_XXa"))
            })?;
            let stamp_text = format!("{}\n-arch={arch}{}\n{content}\n", self.identity, self.extra.concat());
            let (ptx, arch, bounds) = (ptx.to_path_buf(), arch.clone(), bounds.clone());
            jobs.push(scope.spawn(move || {
                let cubin = ptx.with_extension(format!("{arch}.cubin"));
                let stamp = ptx.with_extension(format!("{arch}.cubin.stamp"));
                let used = cubin.with_extension("resources");
                if cubin.is_file()
                    && used.is_file()
                    && fs::read_to_string(&stamp).is_ok_and(|s| s == stamp_text)
                {
                    return Ok((number, cubin, None));
                }
                let clock = Instant::now();
                let _ = fs::remove_file(&stamp);
                let output = Command::new(&self.ptxas)
                    .arg(format!("-arch={arch}"))
                    .arg("-v")
                    .args(&self.extra)
                    .arg("-o")
                    .arg(&cubin)
                    .arg(&ptx)
                    .output()
                    .map_err(BuildError::Spawn)?;
                if !output.status.success() {
                    return Err(BuildError::Compile(format!(
                        "{} -arch={arch} {} failed:\n{}",
                        self.ptxas.display(),
                        ptx.display(),
                        String::from_utf8_lossy(&output.stderr)
                    )));
                }
                let kernels = resources::parse(&String::from_utf8_lossy(&output.stderr), number, &bounds);
                let lines: String = kernels.iter().map(|k| k.line() + "\n").collect();
                fs::write(&used, lines).map_err(|e| BuildError::Io(used.clone(), e))?;
                fs::write(&stamp, &stamp_text).map_err(|e| BuildError::Io(stamp.clone(), e))?;
                Ok((number, cubin, Some(clock.elapsed())))
            }));
        }
        Ok(jobs)
    }
}

/// Whether `ptxas` takes `-split-compile` (its `--help` names it; older ones do not).
fn takes_split_compile(ptxas: &Path) -> bool {
    Command::new(ptxas)
        .arg("--help")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).contains("-split-compile"))
}

/// The PTX without its DWARF: the `, debug` of `.target` and the `.section .debug_*` blocks,
/// keeping the line table (`.file`, `.loc`), which is what nvcc's `-lineinfo` writes. The
/// code is the same optimised code; `ptxas` then needs no `-g`-style debug build. For PTX
/// ISA 7.2 and later (an `sm_90` module) LLVM's `.loc` also names the inlined function and
/// where it was inlined (`, function_name $L__info_stringN, inlined_at F L C`), the name a
/// label in the `.debug_str` section removed here: that part goes too (ptxas rejects the
/// label otherwise), and a line keeps its file, line and column. PTX without DWARF comes back
/// unchanged.
pub fn strip_dwarf(ptx: &str) -> String {
    let mut out = String::with_capacity(ptx.len());
    let mut lines = ptx.lines();
    while let Some(line) = lines.next() {
        let code = line.trim();
        if code.starts_with(".section") && code[".section".len()..].trim_start().starts_with(".debug_") {
            // `.section .debug_x` then `{`, the contents, `}`.
            let mut depth = 0;
            for section_line in std::iter::once(line).chain(lines.by_ref()) {
                depth += section_line.matches('{').count() as i64 - section_line.matches('}').count() as i64;
                if depth <= 0 && section_line.contains('}') {
                    break;
                }
            }
            continue;
        }
        if code.starts_with(".loc")
            && let Some(at) = line.find(", function_name")
        {
            out.push_str(&line[..at]);
            out.push('\n');
            continue;
        }
        match code.strip_prefix(".target ") {
            Some(target) if target.contains(", debug") || target.ends_with(",debug") => {
                let kept: Vec<&str> = target.split(',').map(str::trim).filter(|t| *t != "debug").collect();
                let indent = &line[..line.len() - line.trim_start().len()];
                out.push_str(&format!("{indent}.target {}\n", kept.join(", ")));
            }
            _ => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    if !ptx.ends_with('\n') {
        out.pop();
    }
    out
}

/// The names of the functions `ptx` declares `.extern .func` (defined elsewhere).
pub fn extern_funcs(ptx: &str) -> impl Iterator<Item = &str> {
    ptx.lines().filter_map(|line| {
        let rest = line.trim().strip_prefix(".extern")?.trim_start().strip_prefix(".func")?.trim_start();
        // An optional return parameter list `(.param ...)` comes before the name.
        let rest = match rest.strip_prefix('(') {
            Some(params) => params.split_once(')')?.1.trim_start(),
            None => rest,
        };
        rest.split(|c: char| c == '(' || c.is_whitespace()).next().filter(|name| !name.is_empty())
    })
}

/// FNV-1a (64 bit) of `bytes`: fixed by its definition, so a stamp written by one build of the
/// builder reads the same in the next.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// Where the PATH finds `program` (itself if it names a directory or is found nowhere).
/// The libdevice of the CUDA toolkit a `ptxas` belongs to: `<toolkit>/bin/ptxas` →
/// `<toolkit>/nvvm/libdevice/libdevice.10.bc` (a link followed to the toolkit it is in).
fn libdevice_beside(ptxas: &Path) -> Option<PathBuf> {
    let ptxas = fs::canonicalize(ptxas).unwrap_or_else(|_| ptxas.to_path_buf());
    let toolkit = ptxas.parent().and_then(Path::parent)?;
    Some(toolkit.join("nvvm/libdevice").join(LIBDEVICE_FILE))
}

fn which(program: &Path) -> PathBuf {
    if program.components().count() == 1
        && let Some(path) = env::var_os("PATH")
    {
        for dir in env::split_paths(&path) {
            let candidate = dir.join(program);
            if candidate.is_file() {
                return candidate;
            }
        }
    }
    program.to_path_buf()
}

/// The prerequisites of the first rule of a Makefile-style dep-info file
/// (`target: a.rs b\ c.rs ...`, a space in a name escaped by a backslash).
pub fn dep_info_sources(dep_info: &str) -> Vec<PathBuf> {
    let first_rule = dep_info.lines().next().unwrap_or_default();
    let Some((_, prerequisites)) = first_rule.split_once(": ") else { return Vec::new() };
    let mut sources = Vec::new();
    let mut name = String::new();
    let mut chars = prerequisites.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&' ') => name.push(chars.next().unwrap_or(' ')),
            ' ' if !name.is_empty() => sources.push(PathBuf::from(std::mem::take(&mut name))),
            ' ' => {}
            c => name.push(c),
        }
    }
    if !name.is_empty() {
        sources.push(PathBuf::from(name));
    }
    sources
}

/// The architectures a cubin variable names: `None` when it is unset (use the default), an
/// empty list for `none`, else the comma list, each `sm_NN` with NN ≥ 70.
pub fn parse_arch_list(var: &str, value: Option<&str>) -> Result<Option<Vec<String>>, String> {
    let Some(list) = value else { return Ok(None) };
    if list.trim() == "none" {
        return Ok(Some(Vec::new()));
    }
    let archs: Vec<String> =
        list.split(',').map(|a| a.trim().to_string()).filter(|a| !a.is_empty()).collect();
    for arch in &archs {
        let number = arch.strip_prefix("sm_").and_then(|n| n.parse::<u32>().ok());
        if !number.is_some_and(|n| n >= 70) {
            return Err(format!(
                "{var}: {arch:?} is not an architecture from sm_70 on (write e.g. sm_90, a comma list, or none)"
            ));
        }
    }
    Ok(Some(archs))
}

/// This machine's GPUs' architectures (`sm_90` for compute capability 9.0), as
/// `nvidia-smi --query-gpu=compute_cap` reports them; none without NVIDIA's driver
/// (`/proc/driver/nvidia/gpus`) or where `nvidia-smi` fails. The answer is kept in `out_dir`
/// with the driver's list of GPUs (their PCI addresses) and reused while that list is the
/// same: `nvidia-smi` is not run on every kernel edit.
fn local_gpu_archs(out_dir: Option<&Path>) -> Vec<String> {
    let Ok(entries) = fs::read_dir("/proc/driver/nvidia/gpus") else { return Vec::new() };
    let mut gpus: Vec<String> =
        entries.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    gpus.sort();
    let key = gpus.join(" ");
    let cache = out_dir.map(|dir| dir.join("kernel-dev-gpus.txt"));
    if let Some(archs) =
        cache.as_ref().and_then(|c| fs::read_to_string(c).ok()).and_then(|text| cached_archs(&text, &key))
    {
        return archs;
    }
    let archs = Command::new("nvidia-smi")
        .args(["--query-gpu=compute_cap", "--format=csv,noheader"])
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| archs_of_compute_caps(&String::from_utf8_lossy(&out.stdout)))
        .unwrap_or_default();
    if let Some(cache) = cache {
        // A cache that cannot be written only costs the next build a query.
        let _ = fs::write(cache, format!("{key}\n{}\n", archs.join(",")));
    }
    archs
}

/// The architectures a `kernel-dev-gpus.txt` holds (its first line the driver's list of GPUs,
/// its second the architectures), if it was written for the GPUs `key` lists.
pub fn cached_archs(text: &str, key: &str) -> Option<Vec<String>> {
    let mut lines = text.lines();
    (lines.next()? == key)
        .then(|| lines.next().unwrap_or("").split(',').filter(|a| !a.is_empty()).map(String::from).collect())
}

/// `sm_XY` for each `X.Y` line of `nvidia-smi`'s compute capabilities, in order, once each;
/// lines that are not one are skipped.
pub fn archs_of_compute_caps(listing: &str) -> Vec<String> {
    let mut archs: Vec<String> = Vec::new();
    for line in listing.lines() {
        let Some((major, minor)) = line.trim().split_once('.') else { continue };
        let (Ok(major), Ok(minor)) = (major.parse::<u32>(), minor.parse::<u32>()) else { continue };
        let arch = format!("sm_{major}{minor}");
        if !archs.contains(&arch) {
            archs.push(arch);
        }
    }
    archs
}

/// The kernel-dev profile's cubins ([`PtxBuilder::kernel_dev_cubins`]): those of `chosen` that
/// a local GPU has, else `without_gpu`.
pub fn kernel_dev_archs(chosen: &[String], local: &[String], without_gpu: Vec<String>) -> Vec<String> {
    let mine: Vec<String> = chosen.iter().filter(|arch| local.contains(arch)).cloned().collect();
    if mine.is_empty() { without_gpu } else { mine }
}

/// rustc's NVPTX link step, without `compiler_builtins` when the kernels need none of it, with
/// NVIDIA's libdevice when they call it.
///
/// The linker (`llvm-bitcode-linker`) runs `default<O3>` over every module it is given before
/// dropping what no kernel uses; `compiler_builtins` (which `-Zbuild-std=core` always links,
/// outside LTO) cost 1.7 s of every kernel rebuild for no code. The wrapper links without it;
/// if the PTX then declares a function that nothing defines other than the CUDA runtime's
/// (`vprintf`, `__assertfail`, `malloc`, `free`), e.g. a 128-bit division helper, it links
/// again with everything rustc passed.
///
/// When an input object names a libdevice function (`__nv_`), the wrapper adds
/// `$PTXKIT_LINK_LIBDEVICE` (the `libdevice.10.bc` the builder found) to the inputs: the linker
/// internalizes it with everything but the kernels, so only the functions the kernels call
/// survive, inlined, and the NVPTX backend's NVVMReflect pass resolves its
/// `__nvvm_reflect("__CUDA_FTZ")` queries to 0 (IEEE denormals). Kernels that call no
/// libdevice function are linked exactly as before. Without a libdevice the link fails with
/// a message the builder turns into one naming `PTXKIT_LIBDEVICE`.
pub const LINK_WRAPPER: &str = r#"#!/bin/sh
# Written by ptxkit-build (see LINK_WRAPPER there): rustc's NVPTX link step, first without the
# compiler_builtins rlib; again with it if the PTX then lacks a function. Adds libdevice
# ($PTXKIT_LINK_LIBDEVICE) when an input object calls an __nv_ function.
out=
previous=
libdevice=
for arg in "$@"; do
    [ "$previous" = "-o" ] && out=$arg
    previous=$arg
    case $arg in
        *.o)
            if [ -z "$libdevice" ] && [ -f "$arg" ] && grep -q __nv_ "$arg"; then
                libdevice=${PTXKIT_LINK_LIBDEVICE:-missing}
            fi
            ;;
    esac
done
if [ "$libdevice" = missing ]; then
    message="ptxkit-build: libdevice needed but not found (the kernels call __nv_ functions; set PTXKIT_LIBDEVICE)"
    echo "$message" >&2
    # rustc's short messages drop the linker's output: the builder reads this file instead.
    [ -n "$PTXKIT_LINK_ERROR_FILE" ] && echo "$message" > "$PTXKIT_LINK_ERROR_FILE"
    exit 1
fi
if [ -n "$libdevice" ] && real_opt=$(command -v opt); then
    # libdevice asks NVVMReflect for __CUDA_PREC_SQRT (IEEE sqrtf, as nvcc's default
    # -prec-sqrt=true) and __CUDA_ARCH: the linker's `opt` gets both through this shim.
    cpu=
    previous=
    for arg in "$@"; do
        [ "$previous" = "--target-cpu" ] && cpu=$arg
        previous=$arg
    done
    shim=$(dirname "$out")/ptxkit-libdevice-opt
    mkdir -p "$shim" || exit
    printf '#!/bin/sh\nexec "%s" --nvvm-reflect-add=__CUDA_PREC_SQRT=1 %s "$@"\n' \
        "$real_opt" "${cpu:+--mcpu=$cpu}" > "$shim/opt" && chmod +x "$shim/opt" || exit
    PATH=$shim:$PATH
    export PATH
fi
(
    for arg in "$@"; do
        shift
        case $arg in
            *libcompiler_builtins-*.rlib) ;;
            *) set -- "$@" "$arg" ;;
        esac
    done
    exec llvm-bitcode-linker "$@" ${libdevice:+"$libdevice"}
) || exit
if grep -E '^\.extern \.func' "$out" | sed -E 's/^\.extern \.func +(\([^)]*\) *)?//; s/[ (].*//' |
    grep -vqxE 'vprintf|__assertfail|malloc|free'; then
    exec llvm-bitcode-linker "$@" ${libdevice:+"$libdevice"}
fi
"#;

/// The number of a cubin architecture: 90 for `sm_90` and for `sm_90a` (Hopper's
/// architecture-specific features, `wgmma` and `setmaxnreg`: its cubin runs on compute
/// capability 9.0 only, which is where the host's choice of image by number puts it).
pub fn arch_number(arch: &str) -> Option<u32> {
    let digits = arch.strip_prefix("sm_")?;
    let digits = digits.strip_suffix('a').unwrap_or(digits);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The cubins of a module built for `arch` ([`PtxBuilder::module_for_arch`]) among the
/// builder's `cubins`: `arch` itself where the list has an architecture of its major version
/// (`sm_90` for a list with `sm_90`), else none (its PTX is JIT-compiled where it runs).
pub fn own_arch_cubins(arch: &str, cubins: &[String]) -> Vec<String> {
    let major = |a: &str| arch_number(a).map(|n| n / 10);
    let wanted = major(arch).is_some_and(|m| cubins.iter().any(|c| major(c) == Some(m)));
    if wanted { vec![arch.to_string()] } else { Vec::new() }
}

/// The comment line `#[kernel]` emits for each kernel (`ptxkit_device::PTX_MARKER`).
const MARKER: &str = "// kernel-abi: ";

/// One kernel as its PTX marker describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Marker {
    /// The kernel's Rust path, e.g. `kernels::grayscott::gray_scott_fused`.
    pub path: String,
    /// `(max_threads, min_blocks)` from `#[kernel(launch_bounds(...))]` (or `block(...)`).
    pub launch_bounds: Option<(u32, u32)>,
    /// `[x, y, z]` from `#[kernel(block(...))]`: the entry gets `.reqntid` instead of
    /// `.maxntid`.
    pub block: Option<[u32; 3]>,
}

impl Marker {
    /// The entry point's name (the path's last segment).
    pub fn entry(&self) -> &str {
        self.path.rsplit("::").next().unwrap_or(&self.path)
    }
}

/// Every kernel marker in `ptx`, in order.
pub fn markers(ptx: &str) -> Vec<Marker> {
    ptx.lines()
        .filter_map(|l| l.trim().strip_prefix(MARKER))
        .map(|rest| {
            let mut words = rest.split_whitespace();
            let path = words.next().unwrap_or_default().to_string();
            let launch_bounds = match (words.next(), words.next(), words.next()) {
                (Some("launch_bounds"), Some(t), Some(b)) => t.parse().ok().zip(b.parse().ok()),
                _ => None,
            };
            let block = match (words.next(), words.next(), words.next(), words.next()) {
                (Some("block"), Some(x), Some(y), Some(z)) => {
                    match (x.parse().ok(), y.parse().ok(), z.parse().ok()) {
                        (Some(x), Some(y), Some(z)) => Some([x, y, z]),
                        _ => None,
                    }
                }
                _ => None,
            };
            Marker { path, launch_bounds, block }
        })
        .collect()
}

/// The kernel table: a Rust expression of type `&[ptxkit_host::KernelInfo]` (the crate that
/// includes it depends on `ptxkit-host` and on the kernel crate).
pub fn kernel_table(markers: &[Marker]) -> String {
    let mut out = String::from("// Generated by ptxkit-build from the `#[kernel]` markers in the PTX.\n&[\n");
    for m in markers {
        out.push_str(&format!("    ::ptxkit_host::KernelInfo::of::<::{}>(),\n", m.path));
    }
    out.push_str("]\n");
    out
}

/// The cubin table: a Rust expression of type `&[(u32, &[u8])]`, newest architecture first.
pub fn cubin_table(images: &[(u32, PathBuf)]) -> String {
    let mut sorted = images.to_vec();
    sorted.sort_by_key(|image| std::cmp::Reverse(image.0));
    let mut out =
        String::from("// Generated by ptxkit-build: machine code assembled from the PTX by ptxas.\n&[\n");
    for (arch, path) in sorted {
        out.push_str(&format!(
            "    ({arch}u32, include_bytes!({:?}) as &[u8]),\n",
            path.display().to_string()
        ));
    }
    out.push_str("]\n");
    out
}

/// Writes every kernel's resources of `images` (each module's cubins, whose `.resources`
/// files the assembly wrote) into `report`, one line per kernel and architecture, and makes
/// each kernel that spills a build warning (`cargo::warning`) naming its spills.
fn report_resources(report: &Path, images: &[Vec<(u32, PathBuf)>]) -> Result<(), BuildError> {
    let mut text = String::from(
        "# What each kernel takes (ptxas -v): registers, stack, spills, static shared memory, and the\n\
         # occupancy at its launch bounds (docs/kernel-authors.md, section 6, says how to read them).\n",
    );
    for (_, cubin) in images.iter().flatten() {
        let used = cubin.with_extension("resources");
        let lines = fs::read_to_string(&used).map_err(|e| BuildError::Io(used.clone(), e))?;
        for line in lines.lines() {
            if !line.contains(" 0 B spill stores, 0 B spill loads") {
                println!(
                    "cargo::warning=ptxas spilled registers: {line} (all kernels: {})",
                    report.display()
                );
            }
        }
        text.push_str(&lines);
    }
    write_if_changed(report, &text)
}

/// What a module's nested build depends on besides its source files: the command (its
/// arguments, features, flags and profile settings), the environment it sets, the toolchain
/// (the outer cargo, the rustup toolchain, the link wrapper's and libdevice's paths are among
/// the variables), and this builder itself (the running build script: a new builder may
/// finish the PTX differently, as when [`strip_dwarf`] learned `.loc`'s `function_name`, and
/// the finished copy of an unchanged module must not outlive it).
fn fresh_key(cmd: &Command) -> String {
    let mut key = format!("{:?}", cmd.get_program());
    for arg in cmd.get_args() {
        key.push_str(&format!(" {arg:?}"));
    }
    for (name, value) in cmd.get_envs() {
        key.push_str(&format!("\n{name:?}={value:?}"));
    }
    for name in ["CARGO", "RUSTUP_TOOLCHAIN", "RUSTUP_HOME"] {
        let value = env::var_os(name);
        let modified = value.as_ref().and_then(|v| fs::metadata(v).ok()).and_then(|m| m.modified().ok());
        key.push_str(&format!("\n{name}={value:?} {modified:?}"));
    }
    let builder = env::current_exe().ok();
    let meta = builder.as_ref().and_then(|exe| fs::metadata(exe).ok());
    let identity = meta.map(|m| (m.len(), m.modified().ok()));
    key.push_str(&format!("\nbuilder={builder:?} {identity:?}\n"));
    key
}

/// The source files of a module whose last nested build is still current, without running
/// cargo (each fresh run of it costs about 0.3 s, six modules one after another): its stamp
/// holds `key`, its PTX is there, and no file its dep-info lists (nor the `Cargo.toml` of
/// the package holding each, nor a `Cargo.lock` or `rust-toolchain.toml` above the crate)
/// changed since the stamp's time, the instant that build started. `None`: build.
fn fresh_sources(stamp: &Path, key: &str, dep_info: &Path, ptx: &Path) -> Option<Vec<PathBuf>> {
    if !fs::read_to_string(stamp).is_ok_and(|s| s == key) || !ptx.is_file() {
        return None;
    }
    let built = fs::metadata(stamp).ok()?.modified().ok()?;
    let sources = dep_info_sources(&fs::read_to_string(dep_info).ok()?);
    if sources.is_empty() {
        return None;
    }
    let mut inputs: Vec<PathBuf> = sources.clone();
    for source in &sources {
        let manifest = source.ancestors().skip(1).map(|d| d.join("Cargo.toml")).find(|m| m.is_file());
        if let Some(manifest) = manifest.filter(|m| !inputs.contains(m)) {
            inputs.push(manifest);
        }
    }
    let first = sources.first()?;
    for dir in first.ancestors().skip(1) {
        for name in ["Cargo.lock", "rust-toolchain.toml", "rust-toolchain"] {
            let file = dir.join(name);
            if file.is_file() {
                inputs.push(file);
            }
        }
    }
    let unchanged = |file: &PathBuf| fs::metadata(file).and_then(|m| m.modified()).is_ok_and(|t| t <= built);
    inputs.iter().all(unchanged).then_some(sources)
}

/// Writes a module's stamp (`key`) and gives it the time its build started.
fn write_stamp(stamp: &Path, key: &str, started: std::time::SystemTime) -> Result<(), BuildError> {
    let io = |e| BuildError::Io(stamp.to_path_buf(), e);
    fs::write(stamp, key).map_err(io)?;
    fs::File::options().write(true).open(stamp).and_then(|f| f.set_modified(started)).map_err(io)
}

/// Writes `text` unless the file already holds it (keeps its time stamp for cargo).
fn write_if_changed(path: &Path, text: &str) -> Result<(), BuildError> {
    if fs::read_to_string(path).is_ok_and(|old| old == text) {
        return Ok(());
    }
    fs::write(path, text).map_err(|e| BuildError::Io(path.to_path_buf(), e))
}

/// Inserts `.maxntid`/`.minnctapersm` after the parameter list of each kernel whose marker
/// has launch bounds; `.reqntid x, y, z` instead of `.maxntid` for a block shape (PTX allows
/// one or the other).
fn add_launch_bounds(ptx: &str, markers: &[Marker]) -> Result<String, BuildError> {
    let bounds: Vec<(&str, String, u32)> = markers
        .iter()
        .filter_map(|m| {
            let (threads, blocks) = m.launch_bounds?;
            let shape = match m.block {
                Some([x, y, z]) => format!(".reqntid {x}, {y}, {z}"),
                None => format!(".maxntid {threads}, 1, 1"),
            };
            Some((m.entry(), shape, blocks))
        })
        .collect();
    let mut out = String::with_capacity(ptx.len() + 64 * bounds.len());
    let mut pending: Option<&(&str, String, u32)> = None;
    let mut applied = 0;
    for line in ptx.lines() {
        out.push_str(line);
        out.push('\n');
        if let Some(name) = line.trim().strip_prefix(".visible .entry ").and_then(|l| l.split('(').next()) {
            pending = bounds.iter().find(|b| b.0 == name);
        }
        if let Some((_, shape, blocks)) = pending
            && line.split("//").next().is_some_and(|code| code.trim() == ")")
        {
            out.push_str(&format!("{shape}\n.minnctapersm {blocks}\n"));
            pending = None;
            applied += 1;
        }
    }
    if applied != bounds.len() {
        let names: Vec<&str> = bounds.iter().map(|b| b.0).collect();
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

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_module_for_a_newer_gpu_gets_its_cubin_only_where_its_major_version_is_assembled() {
        let list = |archs: &[&str]| archs.iter().map(|a| a.to_string()).collect::<Vec<_>>();
        assert_eq!(own_arch_cubins("sm_90", &list(&["sm_80", "sm_86", "sm_89", "sm_90"])), ["sm_90"]);
        // A kernel author's loop narrowed to an A100, or PTX only: no sm_90 cubin to assemble.
        assert!(own_arch_cubins("sm_90", &list(&["sm_80"])).is_empty());
        assert!(own_arch_cubins("sm_90", &[]).is_empty());
        assert_eq!(own_arch_cubins("sm_90", &list(&["sm_90a"])), ["sm_90"]);
    }

    #[test]
    fn a_module_for_a_newer_gpu_needs_a_plain_architecture() {
        let refused = |arch: &str| {
            let builder = PtxBuilder::new("k").module("a", ["a"]).module_for_arch("b", ["b"], arch);
            builder.invalid.clone()
        };
        assert_eq!(refused("sm_90"), None);
        assert!(
            refused("sm_90a").is_some_and(|m| m.contains("architecture-specific")),
            "{:?}",
            refused("sm_90a")
        );
        assert!(refused("compute_90").is_some());
        let built = PtxBuilder::new("k").module_for_arch("b", ["b"], "sm_90");
        assert_eq!(built.modules[0].arch.as_deref(), Some("sm_90"));
        assert_eq!(built.modules[0].features.as_deref(), Some(&["b".to_string()][..]));
    }

    #[test]
    fn libdevice_is_looked_for_in_the_toolkit_of_a_ptxas_link_included() {
        let dir = std::env::temp_dir().join(format!("ptxkit-libdevice-{}", std::process::id()));
        let toolkit = dir.join("cuda-12");
        fs::create_dir_all(toolkit.join("bin")).unwrap();
        fs::write(toolkit.join("bin/ptxas"), "").unwrap();
        let found = libdevice_beside(&toolkit.join("bin/ptxas")).unwrap();
        assert_eq!(found, fs::canonicalize(&toolkit).unwrap().join("nvvm/libdevice/libdevice.10.bc"));
        // A link elsewhere (a `bin` of links, as distributions make) leads to the toolkit.
        fs::create_dir_all(dir.join("links")).unwrap();
        let link = dir.join("links/ptxas");
        let _ = fs::remove_file(&link);
        std::os::unix::fs::symlink(toolkit.join("bin/ptxas"), &link).unwrap();
        assert_eq!(libdevice_beside(&link).unwrap(), found);
        fs::remove_dir_all(&dir).unwrap();
    }

    /// Modules build in one directory per architecture, each directory's in the modules' order:
    /// a module for the builder's own architecture joins the others, one for a newer GPU
    /// gets a directory (and a thread) of its own, shared with any other of that architecture.
    #[test]
    fn modules_group_by_their_directory() {
        let module = |name: &str, arch: Option<&str>| Module {
            name: name.into(),
            features: Some(vec![name.into()]),
            arch: arch.map(Into::into),
        };
        let modules = [
            module("a", None),
            module("b", Some("sm_90")),
            module("c", None),
            module("d", Some("sm_70")),
            module("e", Some("sm_100")),
            module("f", Some("sm_90")),
        ];
        assert_eq!(modules_by_directory(&modules, "sm_70"), vec![vec![0, 2, 3], vec![1, 5], vec![4]]);
        assert_eq!(modules_by_directory(&modules[..1], "sm_70"), vec![vec![0]]);
        assert!(modules_by_directory(&[], "sm_70").is_empty());
    }

    /// The markers' launch bounds become `.maxntid`, a block shape `.reqntid` instead (PTX
    /// refuses both on one entry), each with `.minnctapersm`; a marker whose entry is missing
    /// from the PTX is an error.
    #[test]
    fn markers_give_maxntid_or_reqntid() {
        let ptx = "// kernel-abi: k::plain\n// kernel-abi: k::bounded launch_bounds 256 2\n\
                   // kernel-abi: k::tiled launch_bounds 256 1 block 32 8 1\n\
                   .visible .entry plain(\n)\n{\n}\n.visible .entry bounded(\n.param .u64 p\n)\n{\n}\n\
                   .visible .entry tiled(\n.param .u64 p\n)  // @tiled\n{\n}\n";
        let found = markers(ptx);
        assert_eq!(
            found.iter().map(|m| (m.entry(), m.launch_bounds, m.block)).collect::<Vec<_>>(),
            [
                ("plain", None, None),
                ("bounded", Some((256, 2)), None),
                ("tiled", Some((256, 1)), Some([32, 8, 1]))
            ]
        );
        let out = add_launch_bounds(ptx, &found).unwrap();
        assert!(out.contains(".param .u64 p\n)\n.maxntid 256, 1, 1\n.minnctapersm 2\n{"), "{out}");
        assert!(out.contains(")  // @tiled\n.reqntid 32, 8, 1\n.minnctapersm 1\n{"), "{out}");
        assert_eq!(out.matches(".maxntid").count() + out.matches(".reqntid").count(), 2, "{out}");
        assert!(add_launch_bounds(".visible .entry other(\n)\n{\n}\n", &found).is_err());
    }

    #[test]
    fn dep_info_lists_the_sources_of_the_first_rule() {
        let dep_info =
            "/t/k.ptx: /w/k/src/lib.rs /w/my\\ dir/device.rs  /w/macros/lib.rs\n\n/w/k/src/lib.rs:\n";
        let sources: Vec<PathBuf> =
            ["/w/k/src/lib.rs", "/w/my dir/device.rs", "/w/macros/lib.rs"].map(PathBuf::from).into();
        assert_eq!(dep_info_sources(dep_info), sources);
        assert!(dep_info_sources("").is_empty() && dep_info_sources("/t/k.ptx:\n").is_empty());
    }

    #[test]
    fn cubin_variable_is_parsed_and_checked() {
        let parse = |value| parse_arch_list("CUBINS", value);
        assert_eq!(parse(None), Ok(None));
        assert_eq!(parse(Some("none")), Ok(Some(vec![])));
        assert_eq!(parse(Some(" sm_90, sm_80 ,")), Ok(Some(vec!["sm_90".into(), "sm_80".into()])));
        assert_eq!(
            (arch_number("sm_90"), arch_number("sm_90a"), arch_number("sm_86")),
            (Some(90), Some(90), Some(86))
        );
        assert_eq!(
            (arch_number("sm_"), arch_number("sm_a"), arch_number("90"), arch_number("sm_9x")),
            (None, None, None, None)
        );
        for bad in ["sm_60", "90", "sm_x", "compute_90"] {
            let message = parse(Some(bad)).unwrap_err();
            assert!(message.starts_with("CUBINS: ") && message.contains(bad), "{message}");
        }
    }

    #[test]
    fn the_nested_target_is_shared_by_the_outer_profiles_packages() {
        let shared = |dir: &str| shared_target_dir(Path::new(dir));
        let expected = Some(PathBuf::from("/w/target/debug/ptxkit-target"));
        assert_eq!(shared("/w/target/debug/build/simulations/0123abcd/out"), expected);
        assert_eq!(shared("/w/target/debug/build/simulations-0123abcd/out"), expected);
        assert_eq!(shared("/w/target/debug/build/barkley-4567/out"), expected);
        assert_eq!(shared("/w/target/debug/build/simulations/0123abcd/elsewhere"), None);
        assert_eq!(shared("/tmp/out"), None);
    }

    #[test]
    fn the_variable_names_a_directory_or_is_refused() {
        let out = Path::new("/w/target/debug/build/simulations/0123abcd/out");
        let shared = PathBuf::from("/w/target/debug/ptxkit-target");
        assert_eq!(nested_target_dir(None, out).unwrap(), shared);
        assert_eq!(nested_target_dir(Some("".into()), out).unwrap(), shared);
        assert_eq!(
            nested_target_dir(Some("/tmp/elsewhere".into()), out).unwrap(),
            PathBuf::from("/tmp/elsewhere")
        );
        for not_a_dir in ["/dev/null", "/proc/self/status"] {
            let Err(BuildError::Config(message)) = nested_target_dir(Some(not_a_dir.into()), out) else {
                panic!("{not_a_dir} was taken as the nested target directory")
            };
            assert!(
                message.starts_with(&format!("PTXKIT_TARGET_DIR={not_a_dir} is not a directory")),
                "{message}"
            );
        }
        assert_eq!(
            nested_target_dir(None, Path::new("/tmp/out")).unwrap(),
            PathBuf::from("/tmp/out/ptx-target")
        );
    }

    #[test]
    fn the_outer_profile_comes_from_out_dir() {
        let profile = |dir: &str| outer_profile(Path::new(dir));
        assert_eq!(profile("/w/target/kernel-dev/build/host-0123/out").as_deref(), Some("kernel-dev"));
        assert_eq!(profile("/w/target/debug/build/host-0123/out").as_deref(), Some("debug"));
        assert_eq!(
            profile("/w/target/x86_64-unknown-linux-gnu/release/build/host-0123/out").as_deref(),
            Some("release")
        );
        assert_eq!(profile("/w/target/kernel-dev/build/host/0123abcd/out").as_deref(), Some("kernel-dev"));
        assert_eq!(profile("/w/target/release/build/host/0123abcd/out").as_deref(), Some("release"));
        assert_eq!(profile("/tmp/somewhere"), None);
        assert_eq!(profile("/tmp/a/b/c/out"), None);
    }

    #[test]
    fn compute_capabilities_become_architectures() {
        assert_eq!(archs_of_compute_caps("9.0\n8.6\n9.0\n"), ["sm_90", "sm_86"]);
        assert_eq!(archs_of_compute_caps(" 10.0 \n"), ["sm_100"]);
        assert!(archs_of_compute_caps("").is_empty());
        assert!(archs_of_compute_caps("[N/A]\nNo devices were found\n").is_empty());
    }

    #[test]
    fn the_gpu_query_is_reused_only_for_the_same_gpus() {
        let key = "0000:18:00.0 0000:2a:00.0";
        assert_eq!(
            cached_archs("0000:18:00.0 0000:2a:00.0\nsm_90,sm_80\n", key),
            Some(vec!["sm_90".into(), "sm_80".into()])
        );
        assert_eq!(cached_archs("0000:18:00.0 0000:2a:00.0\n\n", key), Some(vec![]));
        // Another GPU list, or a file from before: asked again.
        assert_eq!(cached_archs("0000:18:00.0\nsm_90\n", key), None);
        assert_eq!(cached_archs("", key), None);
    }

    #[test]
    fn kernel_dev_cubins_are_the_local_gpus_of_those_chosen() {
        let chosen: Vec<String> = ["sm_80", "sm_86", "sm_89", "sm_90"].map(String::from).to_vec();
        let fallback = || vec!["sm_90".to_string()];
        let local = |archs: &[&str]| archs.iter().map(|a| a.to_string()).collect::<Vec<_>>();
        assert_eq!(kernel_dev_archs(&chosen, &local(&["sm_86"]), fallback()), ["sm_86"]);
        assert_eq!(kernel_dev_archs(&chosen, &local(&["sm_90", "sm_80"]), fallback()), ["sm_80", "sm_90"]);
        // No GPU, or only GPUs the build does not assemble for: the fallback.
        assert_eq!(kernel_dev_archs(&chosen, &[], fallback()), ["sm_90"]);
        assert_eq!(kernel_dev_archs(&chosen, &local(&["sm_100"]), fallback()), ["sm_90"]);
    }

    #[test]
    fn switches_follow_the_variable_then_the_setter_then_the_profile() {
        let switch = |env, setting, profile| resolve_switch("PTXKIT_LINEINFO", env, setting, profile);
        assert_eq!(switch(None, None, Some("kernel-dev")), Ok(true));
        assert_eq!(switch(None, None, Some("release")), Ok(false));
        assert_eq!(switch(None, None, None), Ok(false));
        assert_eq!(switch(None, Some(true), Some("debug")), Ok(true));
        assert_eq!(switch(None, Some(false), Some("kernel-dev")), Ok(false));
        assert_eq!(switch(Some("1"), Some(false), Some("release")), Ok(true));
        assert_eq!(switch(Some("0"), None, Some("kernel-dev")), Ok(false));
        let message = switch(Some("yes"), None, None).unwrap_err();
        assert!(message.starts_with("PTXKIT_LINEINFO=") && message.contains("yes"), "{message}");
    }

    #[test]
    fn dwarf_is_stripped_and_the_line_table_kept() {
        let ptx = ".version 8.0\n.target sm_80, debug\n.address_size 64\n\t.loc\t1 5 0\n\tret;\n\
                   \t.file\t1 \"/w/src/lib.rs\"\n\t.section\t.debug_abbrev\n\t{\n.b8 1\n.b8 17\n\t}\n\
                   \t.section\t.debug_info\n\t{\n.b32 50\n\t}\n\t.section\t.debug_macinfo\t{\t}\n";
        let stripped = strip_dwarf(ptx);
        assert_eq!(
            stripped,
            ".version 8.0\n.target sm_80\n.address_size 64\n\t.loc\t1 5 0\n\tret;\n\t.file\t1 \"/w/src/lib.rs\"\n"
        );
        // An sm_90 module's `.loc` names the inlined function by a `.debug_str` label.
        let inlined = ".version 7.8\n.target sm_90, debug\n\t.loc\t1 164 9, function_name $L__info_string0, \
                       inlined_at 1 253 22 // src/a.rs:164:9\n\tret;\n\t.section\t.debug_str\n\t{\n\
                       $L__info_string0:\n.b8 102\n\t}\n";
        assert_eq!(strip_dwarf(inlined), ".version 7.8\n.target sm_90\n\t.loc\t1 164 9\n\tret;\n");
        // PTX without DWARF is left as it is, byte for byte.
        let plain = ".version 8.0\n.target sm_70\n.address_size 64\n\tret;\n";
        assert_eq!(strip_dwarf(plain), plain);
        assert_eq!(strip_dwarf(plain.trim_end()), plain.trim_end());
    }

    #[test]
    fn extern_funcs_are_named() {
        let ptx = ".extern .func  (.param .b32 func_retval0) vprintf\n(\n.extern .func __assertfail\n(\n\
                   .extern .shared .align 16 .b8 planes[];\n.func  (.param .b32 func_retval0) __nv_expf(\n";
        assert_eq!(extern_funcs(ptx).collect::<Vec<_>>(), ["vprintf", "__assertfail"]);
    }

    /// Runs [`LINK_WRAPPER`] with a stand-in `llvm-bitcode-linker` that records its arguments
    /// and writes a PTX declaring `extern_func` when it was given no compiler_builtins; returns
    /// the argument lists of its calls.
    fn run_wrapper(extern_func: &str) -> Vec<String> {
        run_wrapper_with(extern_func, "kernels", None).unwrap()
    }

    /// [`run_wrapper`] with an input object `a.o` holding `object`, and
    /// `$PTXKIT_LINK_LIBDEVICE` set to `libdevice` if given; `Err` with its stderr if it fails.
    fn run_wrapper_with(
        extern_func: &str,
        object: &str,
        libdevice: Option<&str>,
    ) -> Result<Vec<String>, String> {
        // One at a time: a script being written while another test forks stays open in the
        // child until it execs, and executing it then fails with "text file busy".
        static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let dir = env::temp_dir().join(format!("ptxkit-build-wrapper-{}-{extern_func}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let executable = |path: &Path, text: &str| {
            fs::write(path, text).unwrap();
            fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
        };
        executable(
            &dir.join("llvm-bitcode-linker"),
            &format!(
                r#"#!/bin/sh
echo "$* [opt: $(command -v opt)]" >> "{log}"
out=; previous=
for arg in "$@"; do [ "$previous" = "-o" ] && out=$arg; previous=$arg; done
printf '.version 7.0\n.extern .func  (.param .b32 func_retval0) vprintf\n(\n' > "$out"
case "$*" in *compiler_builtins*) ;; *) printf '.extern .func {extern_func}\n(\n' >> "$out" ;; esac
"#,
                log = dir.join("calls").display()
            ),
        );
        let wrapper = dir.join("wrapper.sh");
        executable(&wrapper, LINK_WRAPPER);
        fs::write(dir.join("a.o"), object).unwrap();
        // The `opt` that llvm-bitcode-linker runs (the shim wraps whichever the PATH has).
        executable(&dir.join("opt"), "#!/bin/sh\n");
        let path = format!("{}:{}", dir.display(), env::var("PATH").unwrap_or_default());
        let mut command = Command::new(&wrapper);
        command
            .arg(dir.join("a.o"))
            .args(["/x/libcompiler_builtins-0123.rlib", "--target", TARGET, "-o"])
            .arg(dir.join("out.ptx"))
            .env("PATH", path)
            .env(
                "PTXKIT_LINK_ERROR_FILE",
                env::temp_dir().join(format!("ptxkit-link-error-{}", std::process::id())),
            )
            .env_remove(WRAPPER_LIBDEVICE_VAR);
        if let Some(libdevice) = libdevice {
            command.env(WRAPPER_LIBDEVICE_VAR, libdevice);
        }
        let output = command.output().unwrap();
        let calls = fs::read_to_string(dir.join("calls")).unwrap_or_default();
        let _ = fs::remove_dir_all(&dir);
        if !output.status.success() {
            return Err(String::from_utf8_lossy(&output.stderr).into_owned());
        }
        Ok(calls.lines().map(String::from).collect())
    }

    #[test]
    fn the_link_wrapper_adds_libdevice_when_an_object_calls_it() {
        let calls =
            run_wrapper_with("__assertfail", "bitcode naming __nv_expf", Some("/cuda/libdevice.10.bc"));
        let calls = calls.unwrap();
        assert_eq!(calls.len(), 1, "{calls:?}");
        assert!(calls[0].contains(" /cuda/libdevice.10.bc ["), "{calls:?}");
        // The linker's `opt` is the shim that sets __CUDA_PREC_SQRT for NVVMReflect.
        assert!(calls[0].contains("/ptxkit-libdevice-opt/opt]"), "{calls:?}");
        // Not for objects that call none; not even when one is known.
        let calls = run_wrapper_with("__assertfail", "kernels", Some("/cuda/libdevice.10.bc")).unwrap();
        assert!(!calls[0].contains("libdevice"), "{calls:?}");
        assert!(calls[0].ends_with("/opt]"), "{calls:?}");
        // Both links get it when compiler_builtins is needed too.
        let calls =
            run_wrapper_with("__udivti3", "bitcode naming __nv_sinf", Some("/cuda/libdevice.10.bc")).unwrap();
        assert_eq!(calls.len(), 2, "{calls:?}");
        assert!(calls.iter().all(|c| c.contains(" /cuda/libdevice.10.bc [")), "{calls:?}");
    }

    #[test]
    fn the_link_wrapper_fails_naming_the_variable_when_libdevice_is_missing() {
        let stderr = run_wrapper_with("__assertfail", "bitcode naming __nv_expf", None).unwrap_err();
        assert!(stderr.contains(NO_LIBDEVICE_MARKER) && stderr.contains(LIBDEVICE_VAR), "{stderr}");
        // The builder finds the message in the file it names (rustc's short messages drop it).
        let written =
            fs::read_to_string(env::temp_dir().join(format!("ptxkit-link-error-{}", std::process::id())));
        assert!(written.is_ok_and(|w| w.contains(NO_LIBDEVICE_MARKER)));
    }

    #[test]
    fn the_link_wrapper_leaves_out_compiler_builtins_when_nothing_is_missing() {
        // `__assertfail` comes with the CUDA runtime, like `vprintf`.
        let calls = run_wrapper("__assertfail");
        assert_eq!(calls.len(), 1, "{calls:?}");
        assert!(!calls[0].contains("compiler_builtins") && calls[0].contains("a.o"), "{calls:?}");
        assert!(!calls[0].contains("libdevice"), "{calls:?}");
    }

    #[test]
    fn the_link_wrapper_links_again_with_compiler_builtins_when_a_function_is_missing() {
        let calls = run_wrapper("__udivti3");
        assert_eq!(calls.len(), 2, "{calls:?}");
        assert!(!calls[0].contains("compiler_builtins"), "{calls:?}");
        assert!(
            calls[1].contains("/x/libcompiler_builtins-0123.rlib") && calls[1].contains("a.o"),
            "{calls:?}"
        );
    }

    /// A module's nested build is skipped only while its stamp's key matches and nothing it
    /// was built from (a source, a package's manifest, the lock file) changed since.
    #[test]
    fn a_module_is_current_until_a_source_a_manifest_or_the_key_changes() {
        use std::time::{Duration, SystemTime};
        let dir = env::temp_dir().join(format!("ptxkit-fresh-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("k/src")).unwrap();
        let (lib, manifest, lock) =
            (dir.join("k/src/lib.rs"), dir.join("k/Cargo.toml"), dir.join("Cargo.lock"));
        for file in [&lib, &manifest, &lock] {
            fs::write(file, "x").unwrap();
        }
        let (stamp, dep_info, ptx) = (dir.join("k.fresh"), dir.join("k.d"), dir.join("k.ptx"));
        fs::write(&dep_info, format!("{}: {}\n", ptx.display(), lib.display())).unwrap();
        fs::write(&ptx, "ptx").unwrap();
        let set_time = |file: &Path, at: SystemTime| {
            fs::File::options().write(true).open(file).unwrap().set_modified(at).unwrap();
        };
        let start = SystemTime::now() - Duration::from_secs(100);
        for file in [&lib, &manifest, &lock] {
            set_time(file, start - Duration::from_secs(10));
        }
        write_stamp(&stamp, "key", start).unwrap();
        assert_eq!(fresh_sources(&stamp, "key", &dep_info, &ptx), Some(vec![lib.clone()]));
        assert_eq!(fresh_sources(&stamp, "other flags", &dep_info, &ptx), None, "a changed command builds");
        for changed in [&lib, &manifest, &lock] {
            set_time(changed, start + Duration::from_secs(1));
            assert_eq!(fresh_sources(&stamp, "key", &dep_info, &ptx), None, "{} changed", changed.display());
            set_time(changed, start - Duration::from_secs(10));
        }
        fs::remove_file(&ptx).unwrap();
        assert_eq!(fresh_sources(&stamp, "key", &dep_info, &ptx), None, "no PTX");
        fs::write(&ptx, "ptx").unwrap();
        fs::remove_file(&lib).unwrap();
        assert_eq!(fresh_sources(&stamp, "key", &dep_info, &ptx), None, "a source gone");
        let _ = fs::remove_dir_all(&dir);
    }
}
