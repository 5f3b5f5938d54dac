//! The device API in host builds: kernel bodies are compiled for the host too (by
//! `#[kernel]`, so that `cargo check`, clippy and rust-analyzer see them), but only run on the
//! GPU; a device function called on the host stops with this panic.

/// Panics: `name` is a device function, called on the host.
#[cold]
#[inline(never)]
#[track_caller]
pub(crate) fn device_only(name: &str) -> ! {
    panic!(
        "ptxkit-device: {name} runs on the GPU only (on the host, kernel bodies are compiled to be checked, not run)"
    )
}
