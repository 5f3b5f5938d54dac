//! GPU tests of the device layer itself (`ptxkit_device`). A failed `device_assert!` leaves the
//! process's CUDA context unusable, which would fail any GPU test sharing it: the test runs
//! its GPU part in a child process of its own (this test binary, run for this test alone).

use std::process::Command;

use kernels::diagnostics::check_device_assert;
use simulations::cuda::grid_1d;

use crate::{
    common::test_path,
    gpu_helpers::{download, gpu, upload},
};

/// Set in the child process that does the GPU part.
const CHILD_VAR: &str = "GPU_DEVICE_LAYER_CHILD";

/// A passing `device_assert!` lets the kernel run; a failing one stops it, and the launch's
/// error reaches the host as CUDA's assertion error (the driver prints the condition, file
/// and line on stderr).
#[test]
#[ignore = "needs a CUDA GPU"]
fn device_assert_passes_or_stops_the_kernel_with_an_error() {
    if std::env::var_os(CHILD_VAR).is_none() {
        let this_test = test_path(module_path!(), "device_assert_passes_or_stops_the_kernel_with_an_error");
        let out = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", &this_test, "--ignored", "--nocapture", "--test-threads=1"])
            .env(CHILD_VAR, "1")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        eprint!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "the child process failed");
        assert!(stdout.contains("1 passed"), "the child process ran no test");
        return;
    }
    let gpu = gpu();
    let mut out = upload(&gpu, &[0u32]);
    gpu.launch(check_device_assert, grid_1d(1, 1), (7u32, 7u32, &mut out)).unwrap();
    assert_eq!(download(&gpu, &out), [7]);

    gpu.launch(check_device_assert, grid_1d(1, 1), (8u32, 7u32, &mut out)).unwrap();
    let error = gpu.synchronize().expect_err("the assertion must fail the kernel").to_string();
    assert!(error.contains("ASSERT") || error.contains("assert"), "{error}");
}
