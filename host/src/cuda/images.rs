//! The kernel images embedded at build time, alone in a module: a kernel edit changes only
//! this code-generation unit of the host library, which an incremental build (the
//! `kernel-dev` profile) recompiles in a fraction of a second.

/// The PTX of the `kernels` crate, compiled by `build.rs` for `sm_70` (JIT-compiled by the
/// driver on any GPU from Volta on).
pub static PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernels.ptx"));

/// Machine code of [`PTX`] for the common GPUs, `(arch, cubin)` newest first (e.g. `(90, ...)`
/// for sm_90), assembled by `ptxas` at build time; empty where the build had no `ptxas`. A
/// GPU with none matching runs the PTX, JIT-compiled by the driver (see [`super::select_image`]).
pub static CUBINS: &[(u32, &[u8])] = include!(concat!(env!("OUT_DIR"), "/kernels.cubins.rs"));
