//! The library's error type: every message says what went wrong and what the user can do.

use std::path::PathBuf;

/// Everything that can go wrong in a simulation run.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A parameter is out of range; the message names it and the valid range.
    #[error("{0}")]
    InvalidInput(String),

    /// The run would need more memory than the device has.
    #[error(
        "a {width}x{height} grid needs {need} of {device} memory, but only {available} is free; use a smaller --size",
        need = human_bytes(*.need),
        available = human_bytes(*.available)
    )]
    TooBig { width: u32, height: u32, need: u64, available: u64, device: &'static str },

    /// No usable CUDA GPU (no driver, no device, or the context could not be created).
    #[error("no usable CUDA GPU: {0}")]
    NoGpu(String),

    /// A CUDA driver call failed.
    #[error("CUDA error in {context}: {source}")]
    Cuda {
        context: String,
        #[source]
        source: cudarc::driver::DriverError,
    },

    /// Reading an input file failed.
    #[error("cannot read {}: {reason}", .path.display())]
    Input { path: PathBuf, reason: String },

    /// Writing an output file failed.
    #[error("cannot write {}: {reason}", .path.display())]
    Output { path: PathBuf, reason: String },
}

/// Results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// `1.5 GiB`, `300.0 MiB`, `12 B`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 { format!("{bytes} B") } else { format!("{value:.1} {}", UNITS[unit]) }
}

impl From<ptxkit_host::Error> for Error {
    fn from(e: ptxkit_host::Error) -> Self {
        match e {
            ptxkit_host::Error::NoGpu(why) => Error::NoGpu(why),
            ptxkit_host::Error::Driver { context, source } => Error::Cuda { context, source },
            ptxkit_host::Error::InvalidLaunch(why) => Error::InvalidInput(why),
        }
    }
}

/// Attaches a description of the failing step to a CUDA driver error.
pub(crate) trait CudaContext<T> {
    fn context(self, what: impl FnOnce() -> String) -> Result<T>;
}

impl<T> CudaContext<T> for std::result::Result<T, cudarc::driver::DriverError> {
    fn context(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|source| Error::Cuda { context: what(), source })
    }
}
