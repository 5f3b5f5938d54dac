//! Eight classic GPU kernels written with ptxkit (`kernels/`), each with a host function that
//! allocates and launches it ([`gpu`]), a CPU reference ([`cpu`]) and a CUDA C twin of the same
//! algorithm and launch shape (`cuda/`, built by nvcc and compared by `cookbook-bench`).

pub mod cpu;
pub mod gpu;
pub mod hopper;
pub mod random;

use ptxkit_host::KernelImages;

/// The PTX and cubins of `kernels/`' classic kernels, built by `build.rs`.
pub static IMAGES: KernelImages = ptxkit_host::include_kernels!("cookbook");

/// The PTX (sm_90) and cubin of `kernels/`' Hopper kernels ([`hopper`]), built by `build.rs`:
/// a `Gpu` opened with them runs on sm_90 and later only.
pub static HOPPER_IMAGES: KernelImages = ptxkit_host::include_kernels!("cookbook-hopper");
