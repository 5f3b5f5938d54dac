//! Device support for GPU kernels written in Rust: ptxkit's counterpart of rust-cuda's
//! `cuda_std`. `#![no_std]`; compiled for `nvptx64-nvidia-cuda` by `ptxkit-build` and, for
//! the host handles only, for the host.
//!
//! # From a `#[kernel]` to a typed launch
//!
//! A kernel crate (`#![no_std]`, built to PTX by `ptxkit-build` from the host crate's
//! `build.rs`) writes kernels as ordinary Rust:
//!
//! ```ignore
//! // my-kernels/src/lib.rs
//! #![no_std]
//! #![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]
//! use ptxkit_device::{kernel, thread};
//!
//! /// y ← a·x + y. Thread mapping: one thread per element. Bytes per element: 12.
//! #[kernel(launch_bounds(256))]
//! pub unsafe fn saxpy(x: *const f32, y: *mut f32, n: u32, a: f32) {
//!     let i = thread::index_1d();
//!     if i < n {
//!         unsafe { *y.add(i as usize) += a * *x.add(i as usize) };
//!     }
//! }
//! ```
//!
//! In the device build, `#[kernel]` makes `saxpy` a PTX entry point. In the host build it
//! leaves a unit struct `saxpy` implementing [`Kernel`], whose `Params` is the parameter
//! tuple, and the body as a private function that is never called, so a type error in it
//! fails `cargo check` and clippy and rust-analyzer see it. The host crate depends on the kernel crate (for these handles and any shared math),
//! `ptxkit-host` (the runtime) and, in `[build-dependencies]`, `ptxkit-build`:
//!
//! ```ignore
//! // my-app/build.rs
//! fn main() {
//!     ptxkit_build::PtxBuilder::new("../my-kernels")
//!         .cubins_from_env("MY_APP_CUBINS", ["sm_80", "sm_90"])
//!         .build_into_out_dir("kernels.ptx")
//!         .unwrap_or_else(|e| e.exit());
//! }
//! ```
//!
//! ```ignore
//! // my-app/src/main.rs
//! static KERNELS: ptxkit_host::KernelImages = ptxkit_host::include_kernels!("kernels");
//!
//! let gpu = ptxkit_host::Gpu::open(0, &KERNELS)?;
//! let x = gpu.stream().clone_htod(&host_x)?;
//! let mut y = gpu.stream().clone_htod(&host_y)?;
//! gpu.launch(my_kernels::saxpy, ptxkit_host::grid_1d(n, 256), (&x, &mut y, n, 2.0f32))?;
//! ```
//!
//! The argument tuple is checked against `saxpy`'s parameters at compile time: a missing
//! argument, a `&CudaSlice<f64>` for a `*const f32`, a shared borrow for a `*mut f32` or an
//! `i32` for a `u32` does not compile (`ptxkit-host`'s `tests/ui` hold one case each).
//!
//! # What a kernel crate needs
//! - `#![no_std]` and, for the device build,
//!   `#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]`
//!   (`abi_ptx` for the entry points `#[kernel]` emits; `asm_experimental_arch` where the
//!   shared-memory macros expand).
//! - This crate as a dependency. It provides the panic handler: a panic (a failed `assert!`,
//!   an index out of bounds, a `debug_assert!` where the builder turns debug assertions on)
//!   prints `panicked at <file>:<line>:<col>` with the block and thread through `vprintf`, then
//!   traps; the host sees an error (`CUDA_ERROR_LAUNCH_FAILED`, "unspecified launch failure", on an H200 with driver 580).
//!
//! # Modules
//! - [`kernel`](macro@kernel): the attribute (launch bounds, dynamic shared memory; `pub fn`
//!   for a safe kernel, `pub unsafe fn` for one over raw pointers).
//! - [`Kernel`], [`KernelInfo`], [`Param`], [`LaunchBounds`]: the host's view of a kernel.
//! - The device API, one module per concept, named after CUDA C:
//!   - [`thread`]: `threadIdx`, `blockIdx`, `blockDim`, `gridDim` in x, y and z, global
//!     indices, `sync_threads`;
//!   - [`warp`]: the lane (`%laneid`) and warp, shuffles idx/up/down/xor with mask and width
//!     on every 32- and 64-bit type, votes (`ballot`, `any`, `all`), `sync_warp`,
//!     `match_any`/`match_all`, `reduce_*` (`redux.sync`, sm_80+);
//!   - [`block`]: `sync_threads_count/and/or`; [`fence`]: block, device and system fences;
//!     [`grid`]: the grid-wide barrier of a cooperative launch;
//!   - [`atomic`]: add, sub, exchange, CAS, min, max, inc, dec, and, or, xor on 32- and 64-bit
//!     integers and floats, fetch and reduce forms, block/device/system scope;
//!   - shared memory: [`shared!`] and [`dynamic_shared!`] give a [`SharedArray<T>`] of any
//!     `Copy` type addressed in the shared space (`ld/st/atom.shared`, 2- and 4-wide vector
//!     access); the older [`shared_array!`], [`shared_f32!`], [`dynamic_shared_f32!`] and
//!     [`SharedF32`] stay;
//!   - [`memory`]: 8- and 16-byte vector loads and stores, read-only (`ld.global.nc`) and
//!     streaming loads of any plain type, the predicated `store_if`, volatile and
//!     acquire/release loads and stores (flags between blocks); [`vector`]: `F32x4` and
//!     the other vector types, which a host can allocate (`CudaSlice<F32x4>`, feature `host`);
//!   - [`math`]: libdevice's functions for f32 and f64 (`expf`, `sinf`, `powf`, `erff`, ...,
//!     `fmaf`) and [`math::fast`]'s approximate forms (`__expf`, `__fdividef`, `rsqrt.approx`);
//!     [`half`]: `F16` and `BF16` storage types, `F16x2` arithmetic;
//!   - [`constant`]: [`constant!`] declares a `__constant__` array (`ld.const`), which the
//!     host sets with `Gpu::set_constant`;
//!   - [`debug`]: [`gpu_print!`]/[`gpu_println!`], clocks, `%globaltimer`, `nanosleep`,
//!     [`device_assert!`]; [`unroll!`]: CUDA C's `#pragma unroll`;
//!   - [`safe`]: `DisjointSlice`, `ThreadIndex` and the safe kernel's parameter types;
//!   - asynchronous copies and tensor cores: [`async_copy`] (`cp.async`, sm_80+),
//!     [`mbarrier`] (split arrive/wait barriers, transaction counts on sm_90), [`tma`]
//!     (Hopper's bulk and tensor copies, [`tma::TensorMap`]), [`mma`] (`mma.sync` m16n8k16
//!     f16/bf16 with f32 accumulation, `ldmatrix`), [`wgmma`] (Hopper's warpgroup MMA from
//!     shared-memory descriptors, sm_90a), [`cluster`] (sm_90 thread-block clusters and
//!     distributed shared memory).
//!
//!   It exists in host builds too, as rust-cuda's `#[gpu_only]` functions do: there every
//!   device function panics if called, so that kernel bodies, which `#[kernel]` also compiles
//!   for the host (never to run), are checked by `cargo check`, clippy and rust-analyzer with
//!   the host's tools. The CUDA C → ptxkit table of every name is in the repository's
//!   `docs/kernel-authors.md`; breaking changes and their migrations in `toolkit/CHANGELOG.md`.

#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(stdarch_nvptx, asm_experimental_arch))]
// In host builds the functions' bodies are the panic of `host`: their arguments go unused.
#![cfg_attr(not(target_arch = "nvptx64"), allow(unused_variables, dead_code))]

#[macro_use]
mod gpu_only;
mod abi;
#[cfg(not(target_arch = "nvptx64"))]
mod host;

pub mod async_copy;
pub mod atomic;
pub mod block;
pub mod cluster;
pub mod constant;
pub mod debug;
pub mod fence;
pub mod grid;
pub mod half;
pub mod math;
pub mod mbarrier;
pub mod memory;
pub mod mma;
pub mod safe;
mod shared;
pub mod thread;
pub mod tma;
mod unroll;
pub mod vector;
pub mod warp;
pub mod wgmma;

pub use abi::{Kernel, KernelInfo, LaunchBounds, PTX_MARKER, Param};
pub use debug::assert_fail;
pub use ptxkit_macros::kernel;
pub use shared::*;
