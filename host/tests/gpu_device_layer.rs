//! GPU tests of the device layer itself (`ptxkit_device`). In a test binary of its own:
//! a failed `device_assert!` leaves the process's CUDA context unusable, which would fail
//! any GPU test sharing it.

mod common;

use common::gpu::{download, gpu, upload};
use kernels::diagnostics::check_device_assert;
use simulations::cuda::grid_1d;

/// A passing `device_assert!` lets the kernel run; a failing one stops it, and the launch's
/// error reaches the host as CUDA's assertion error (the driver prints the condition, file
/// and line on stderr).
#[test]
#[ignore = "needs a CUDA GPU"]
fn device_assert_passes_or_stops_the_kernel_with_an_error() {
    let gpu = gpu();
    let mut out = upload(&gpu, &[0u32]);
    gpu.launch(check_device_assert, grid_1d(1, 1), (7u32, 7u32, &mut out)).unwrap();
    assert_eq!(download(&gpu, &out), [7]);

    gpu.launch(check_device_assert, grid_1d(1, 1), (8u32, 7u32, &mut out)).unwrap();
    let error = gpu.synchronize().expect_err("the assertion must fail the kernel").to_string();
    assert!(error.contains("ASSERT") || error.contains("assert"), "{error}");
}
