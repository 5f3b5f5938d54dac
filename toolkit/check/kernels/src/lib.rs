//! One small kernel per intrinsic of `ptxkit-device`: each writes what the intrinsic returned
//! to an output buffer, so the GPU tests compare it with the expected values, and the PTX
//! tests find the instruction it promises in the kernel's body. One module per area.

#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

pub mod constant;
pub mod debug;
pub mod generic;
pub mod host_api;
pub mod math;
pub mod memory;
pub mod safe;
pub mod thread_warp;
