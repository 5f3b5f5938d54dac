//! The toolkit's intrinsics, checked. Each area's module has PTX tests (run in CI: the
//! instruction each intrinsic promises is in its kernel's PTX, and `ptxas` assembles it) and
//! GPU tests (`#[ignore = "needs a CUDA GPU"]`: values against expected ones, odd block shapes,
//! partial warps). One test binary for all of them.

mod common;

mod cluster;
mod constant;
mod debug;
mod generic;
mod host_api;
mod math;
mod memory;
mod safe;
mod thread_warp;
