//! Eight classic GPU kernels written the natural way with ptxkit, one file each: every kernel
//! has a CUDA C twin of the same algorithm and launch shape in `../cuda/`, and a CPU reference
//! in the host crate (`cookbook::cpu`). Each kernel's doc comment gives its thread mapping,
//! its bytes per element and what it shows.

#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

pub mod elementwise;
pub mod histogram;
pub mod nbody;
pub mod reduce;
pub mod scan;
pub mod sgemm;
pub mod softmax;
pub mod stencil;
pub mod transpose;

pub use elementwise::{ELEMENTWISE_BLOCK, saxpy, saxpy_raw};
pub use histogram::{HISTOGRAM_BLOCK, histogram_256};
pub use nbody::{NBODY_BLOCK, nbody_accelerations};
pub use ptxkit_device::vector::F32x4;
pub use reduce::{REDUCE_BLOCK, reduce_sum_f32};
pub use scan::{
    SCAN_BLOCK, SCAN_ITEMS, SCAN_SUMS_BLOCK, SCAN_TILE, scan_block_sums, scan_tile_sums, scan_tiles,
};
pub use sgemm::{SGEMM_BLOCK, SGEMM_DEPTH, SGEMM_TILE, sgemm_64x64};
pub use softmax::{SOFTMAX_BLOCK, softmax_rows};
pub use stencil::{STENCIL_BLOCK, jacobi_5pt, jacobi_5pt_raw};
pub use transpose::{TRANSPOSE_ROWS, TRANSPOSE_TILE, transpose_f32};
