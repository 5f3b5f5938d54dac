//! Eight classic GPU kernels written with ptxkit (`kernels/`), each with a host function that
//! allocates and launches it ([`gpu`]), a CPU reference ([`cpu`]) and a CUDA C twin of the same
//! algorithm and launch shape (`cuda/`, built by nvcc and compared by `cookbook-bench`).

pub mod cpu;
pub mod gpu;
pub mod random;

use ptxkit_host::KernelImages;

/// The PTX and cubins of `kernels/`, built by `build.rs`.
pub static IMAGES: KernelImages = ptxkit_host::include_kernels!("cookbook");
