//! The kernel images embedded at build time, alone in a module: a kernel edit changes only
//! this code-generation unit of the host library, which an incremental build (the
//! `kernel-dev` profile) recompiles in a fraction of a second.

/// The `kernels` crate's PTX modules (one per simulation, and one of the kernels they share;
/// for `sm_70`, JIT-compiled by the driver on any GPU from Volta on), each with its cubins for
/// the common GPUs, and the table of every kernel, written by `build.rs`.
pub static IMAGES: ptxkit_host::KernelImages = ptxkit_host::include_kernels!("kernels");
