//! `on_gpu!`: the body of a device function on the GPU, a panic naming it in host builds.

/// The body of a device function: itself in the device build; in a host build, where kernel
/// bodies are compiled only to be checked, a panic naming the function (rust-cuda's
/// `#[gpu_only]`).
macro_rules! on_gpu {
    ($name:literal, $body:block) => {{
        #[cfg(target_arch = "nvptx64")]
        $body
        #[cfg(not(target_arch = "nvptx64"))]
        $crate::host::device_only($name)
    }};
}
