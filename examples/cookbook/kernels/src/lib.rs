//! Classic GPU kernels written the natural way with ptxkit, one file each: every kernel
//! of the classic set has a CUDA C twin of the same algorithm and launch shape in `../cuda/`,
//! and a CPU reference in the host crate (`cookbook::cpu`). Each kernel's doc comment gives its
//! thread mapping, its bytes per element and what it shows.
//!
//! Two PTX modules (features): `classic` (the default; sm_80 PTX) and `hopper` (TMA,
//! `mbarrier` transactions and clusters; sm_90 PTX, built by `../build.rs` as its own module).
//! The host crate's build of this crate has both, for the kernels' handles.

#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

#[cfg(feature = "hopper")]
pub mod cluster_exchange;
#[cfg(feature = "hopper")]
pub mod cluster_reduce;
#[cfg(feature = "hopper")]
pub mod dependent_launch;
#[cfg(feature = "classic")]
pub mod elementwise;
#[cfg(feature = "classic")]
pub mod hgemm;
#[cfg(feature = "classic")]
pub mod histogram;
#[cfg(feature = "hopper")]
pub mod hopper;
#[cfg(feature = "classic")]
pub mod nbody;
#[cfg(feature = "classic")]
pub mod reduce;
#[cfg(feature = "classic")]
pub mod scan;
#[cfg(feature = "classic")]
pub mod sgemm;
#[cfg(feature = "classic")]
pub mod softmax;
#[cfg(feature = "classic")]
pub mod stencil;
#[cfg(feature = "hopper")]
pub mod tma_stencil;
#[cfg(feature = "classic")]
pub mod transpose;
#[cfg(feature = "hopper")]
pub mod wgmma_gemm;
#[cfg(feature = "hopper")]
pub mod wgmma_swizzle;

#[cfg(feature = "hopper")]
pub use cluster_exchange::{EXCHANGE_BLOCK, EXCHANGE_CLUSTER, EXCHANGE_SEGMENT, cluster_smooth_f32};
#[cfg(feature = "hopper")]
pub use cluster_reduce::{CLUSTER_REDUCE_BLOCK, CLUSTER_REDUCE_CLUSTER, cluster_reduce_f32};
#[cfg(feature = "hopper")]
pub use dependent_launch::{CHAIN_BLOCK, chain_step_f32};
#[cfg(feature = "classic")]
pub use elementwise::{ELEMENTWISE_BLOCK, saxpy, saxpy_raw};
#[cfg(feature = "classic")]
pub use hgemm::{HGEMM_BLOCK, HGEMM_TILE, hgemm_bf16, hgemm_f16};
#[cfg(feature = "classic")]
pub use histogram::{HISTOGRAM_BLOCK, histogram_256};
#[cfg(feature = "hopper")]
pub use hopper::{
    BULK_CHUNK, CLUSTER_BINS, HISTOGRAM_CLUSTER, TMA_BLOCK, TMA_TILE, WGMMA_BLOCK, WGMMA_TILE,
    bulk_scale_f32, cluster_histogram_1024, tma_transpose_f32, wgmma_gemm_bf16, wgmma_gemm_rs_bf16,
};
#[cfg(feature = "classic")]
pub use nbody::{NBODY_BLOCK, nbody_accelerations};
pub use ptxkit_device::half::{BF16, F16};
pub use ptxkit_device::vector::F32x4;
#[cfg(feature = "classic")]
pub use reduce::{REDUCE_BLOCK, reduce_sum_f32};
#[cfg(feature = "classic")]
pub use scan::{
    LOOKBACK_BLOCK, LOOKBACK_FLAG_AGGREGATE, LOOKBACK_FLAG_PREFIX, LOOKBACK_ITEMS, LOOKBACK_TILE,
    scan_lookback,
};
#[cfg(feature = "classic")]
pub use scan::{
    SCAN_BLOCK, SCAN_ITEMS, SCAN_SUMS_BLOCK, SCAN_TILE, scan_block_sums, scan_tile_sums, scan_tiles,
};
#[cfg(feature = "classic")]
pub use sgemm::{SGEMM_BLOCK, SGEMM_DEPTH, SGEMM_TILE, sgemm_64x64};
#[cfg(feature = "classic")]
pub use softmax::{SOFTMAX_BLOCK, softmax_rows};
#[cfg(feature = "classic")]
pub use stencil::{STENCIL_BLOCK, jacobi_5pt, jacobi_5pt_raw};
#[cfg(feature = "classic")]
pub use stencil::{TILED_BLOCK, TILED_TILE, jacobi_5pt_tiled, jacobi_5pt_tiled_raw};
#[cfg(feature = "hopper")]
pub use tma_stencil::{
    STENCIL3D_BOX_X, STENCIL3D_BOX_Y, STENCIL3D_BOX_Z, STENCIL3D_TILE_X, STENCIL3D_TILE_Y, STENCIL3D_TILE_Z,
    tma_stencil_7pt,
};
#[cfg(feature = "classic")]
pub use transpose::{TRANSPOSE_ROWS, TRANSPOSE_TILE, transpose_f32};
#[cfg(feature = "hopper")]
pub use wgmma_gemm::{
    GEMM_BLOCK, GEMM_DEPTH, GEMM_SHARED_BYTES, GEMM_STAGES, GEMM_TILE, gemm_tma_wgmma_bf16,
};
#[cfg(feature = "hopper")]
pub use wgmma_swizzle::{
    SWIZZLE_BLOCK, SWIZZLE_TILE, swizzle_atom_bytes, swizzle_box_bytes, swizzle_depth, swizzle_shared_bytes,
    wgmma_swizzle_gemm_bf16_32, wgmma_swizzle_gemm_bf16_64, wgmma_swizzle_gemm_bf16_128,
};
