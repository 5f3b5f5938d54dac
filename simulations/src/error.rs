//! The library's error type: every message says what went wrong and what the user can do.

use std::path::PathBuf;

/// Everything that can go wrong in a simulation run.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A parameter is out of range; the message names it and the valid range.
    #[error("{0}")]
    InvalidInput(String),

    /// A refusal that every process of a launcher job (`mpirun`, `srun`) finds alike, such as
    /// more processes on a host than it has GPUs: only rank 0 reports it.
    #[error("{0}")]
    SameOnEveryRank(String),

    /// The run would need more memory than the device has.
    #[error(
        "a {grid} grid needs {need} of {device} memory, but only {available} is free; use a smaller --size",
        grid = if *.depth > 1 { format!("{width}x{height}x{depth}") } else { format!("{width}x{height}") },
        need = human_bytes(*.need),
        available = human_bytes(*.available)
    )]
    TooBig { width: u32, height: u32, depth: u32, need: u64, available: u64, device: &'static str },

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

    /// An allocation failed although the check before the run found room: another process
    /// took the memory in between (or the pinned host memory limit was reached).
    #[error("{}", out_of_memory_line(.what, .memory, *.need, *.free))]
    OutOfMemory {
        /// What was being allocated ("allocating fields").
        what: String,
        /// Which memory: "GPU" or "pinned host".
        memory: &'static str,
        /// The run's grid and need as checked before it started: (width, height, need, free then).
        need: Option<(u32, u32, u64, u64)>,
        /// Free and total bytes of that memory when the allocation failed, if known.
        free: Option<(u64, u64)>,
    },

    /// A kernel faulted (an illegal address, a failed `device_assert!`, ...): the process's
    /// CUDA context is lost, so the run stops. Faults are reported at the next
    /// synchronisation, so the kernel named is the one launched last; with
    /// `CUDA_LAUNCH_BLOCKING=1` each launch waits, and it is the one at fault.
    #[error(
        "a GPU kernel failed{}: {driver}; the run stopped (outputs of earlier steps are kept, \
         unfinished ones removed)",
        kernel.map(|k| format!(" (the last launched was {k}; CUDA_LAUNCH_BLOCKING=1 names the one at fault)")).unwrap_or_default()
    )]
    KernelFault {
        /// The kernel launched last before the fault was reported.
        kernel: Option<&'static str>,
        /// The driver's error (in the message itself, so it is not repeated as a cause).
        driver: cudarc::driver::DriverError,
    },

    /// Writing an output file failed.
    #[error("cannot write {}: {reason}", .path.display())]
    Output { path: PathBuf, reason: String },
}

/// Results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// `text` safe to print on one line of a terminal: control characters (a newline, a carriage
/// return, an escape sequence's ESC, ...) written as escapes (`\n`, `\u{1b}`), an I/O
/// error's ` (os error N)` left out ([`without_os_error`]), everything else as it is. Messages quote text from files (a preset, a path, a checkpoint's names): through
/// this, such text can neither forge another `error:` line nor drive the terminal.
pub fn printable(text: &str) -> String {
    let text = without_os_error(text);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// `text` without the ` (os error N)` an I/O error's text carries, wherever a library quoted
/// it (the MP4 muxer's errors wrap the I/O error's own text).
pub fn without_os_error(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(" (os error ") {
        let after = &rest[at + " (os error ".len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && after[digits..].starts_with(')') {
            out.push_str(&rest[..at]);
            rest = &after[digits + 1..];
        } else {
            out.push_str(&rest[..at + 1]);
            rest = &rest[at + 1..];
        }
    }
    out + rest
}

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
            ptxkit_host::Error::Driver { context, source } => classify(context, source),
            ptxkit_host::Error::InvalidLaunch(why) => Error::InvalidInput(why),
        }
    }
}

/// The one line for [`Error::OutOfMemory`].
fn out_of_memory_line(
    what: &str,
    memory: &str,
    need: Option<(u32, u32, u64, u64)>,
    free: Option<(u64, u64)>,
) -> String {
    let mut line = format!("out of {memory} memory while {what}");
    if let Some((width, height, need, free_then)) = need.filter(|_| memory == "GPU") {
        line += &format!(
            ": the {width}x{height} run needs {} ({} was free when it started)",
            human_bytes(need),
            human_bytes(free_then)
        );
    }
    match free {
        Some((free, total)) => {
            line += &format!(", but only {} of {} is free now", human_bytes(free), human_bytes(total))
        }
        None => line += ", and it cannot be had now",
    }
    line + "; another process is using it: run again when it is free, or use a smaller --size"
}

/// Whether `e` reports a kernel's fault, after which the context cannot be used.
fn is_kernel_fault(e: &cudarc::driver::DriverError) -> bool {
    use cudarc::driver::sys::CUresult::*;
    matches!(
        e.0,
        CUDA_ERROR_ILLEGAL_ADDRESS
            | CUDA_ERROR_ASSERT
            | CUDA_ERROR_LAUNCH_FAILED
            | CUDA_ERROR_ILLEGAL_INSTRUCTION
            | CUDA_ERROR_MISALIGNED_ADDRESS
            | CUDA_ERROR_INVALID_ADDRESS_SPACE
            | CUDA_ERROR_INVALID_PC
            | CUDA_ERROR_HARDWARE_STACK_ERROR
            | CUDA_ERROR_LAUNCH_TIMEOUT
    )
}

fn is_out_of_memory(e: &cudarc::driver::DriverError) -> bool {
    e.0 == cudarc::driver::sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY
}

/// A driver error of the step `context` (device work or a device allocation): out of memory
/// becomes [`Error::OutOfMemory`] with the run's need and what is free now, a kernel's fault
/// [`Error::KernelFault`] naming the kernel launched last, anything else [`Error::Cuda`].
fn classify(context: String, source: cudarc::driver::DriverError) -> Error {
    if is_out_of_memory(&source) {
        // The failing call made the context current on this thread.
        let free = cudarc::driver::result::mem_get_info().ok().map(|(f, t)| (f as u64, t as u64));
        let need = crate::resources::checked_gpu_need();
        return Error::OutOfMemory { what: context, memory: "GPU", need, free };
    }
    if is_kernel_fault(&source) {
        return Error::KernelFault { kernel: ptxkit_host::last_launched(), driver: source };
    }
    Error::Cuda { context, source }
}

/// Attaches a description of the failing step to a CUDA driver error ([`classify`]).
pub(crate) trait CudaContext<T> {
    /// For device work and device allocations.
    fn context(self, what: impl FnOnce() -> String) -> Result<T>;
    /// For pinned (page-locked) host allocations.
    fn pinned_context(self, what: impl FnOnce() -> String) -> Result<T>;
}

impl<T> CudaContext<T> for std::result::Result<T, cudarc::driver::DriverError> {
    fn context(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|source| classify(what(), source))
    }

    fn pinned_context(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|source| {
            if is_out_of_memory(&source) {
                let free = crate::resources::available_host_bytes().zip(crate::resources::total_host_bytes());
                return Error::OutOfMemory { what: what(), memory: "pinned host", need: None, free };
            }
            Error::Cuda { context: what(), source }
        })
    }
}

/// `eprintln!` that never panics: a line to standard error, lost (and nothing else) where it
/// is closed or full. Every progress line, warning and notice of the library and the command
/// goes through it.
#[macro_export]
macro_rules! stderr_line {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

/// `Error::InvalidInput(format!(...))`: a user's mistake, in one line.
macro_rules! invalid {
    ($($arg:tt)*) => {
        $crate::error::Error::InvalidInput(format!($($arg)*))
    };
}
pub(crate) use invalid;

/// Refuses a non-finite `value` of `option`, or one beyond ±`max` (where the model would
/// leave float32), saying why.
pub fn at_most(option: &str, value: f64, max: f64, why: &str) -> Result<()> {
    if !value.is_finite() || value.abs() > max {
        return Err(Error::InvalidInput(format!(
            "{option} must be a finite number within ±{max:e}, got {value:e}: {why}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_os_error_number_is_left_out_wherever_it_is_quoted() {
        assert_eq!(without_os_error("Illegal seek (os error 29)"), "Illegal seek");
        assert_eq!(
            without_os_error("mp4: Illegal seek (os error 29) while muxing"),
            "mp4: Illegal seek while muxing"
        );
        assert_eq!(without_os_error("a (os error 5) b (os error 61)"), "a b");
        // Not an errno: kept as written.
        assert_eq!(without_os_error("x (os error ) y (os error 7"), "x (os error ) y (os error 7");
        // Every line printed: the MP4 muxer's errors quote the I/O error's text.
        let e = Error::Output { path: "v.mp4".into(), reason: "Illegal seek (os error 29)".into() };
        assert!(!printable(&e.to_string()).contains("os error"), "{e}");
    }

    /// Control characters become escapes; quotes, backslashes and other scripts stay.
    #[test]
    fn printable_text_has_no_control_characters() {
        assert_eq!(printable("coral\nerror: forged"), "coral\\nerror: forged");
        assert_eq!(printable("\u{1b}[31mred\r\t"), "\\u{1b}[31mred\\r\\t");
        assert_eq!(printable("it's \"x\" a\\b é 漢"), "it's \"x\" a\\b é 漢");
        assert_eq!(printable("\u{85}"), "\\u{85}");
    }

    #[test]
    fn out_of_memory_is_one_line_with_the_need_and_what_is_free() {
        let e = Error::OutOfMemory {
            what: "allocating fields".into(),
            memory: "GPU",
            need: Some((4096, 4096, 3 << 28, 70 << 30)),
            free: Some((300 << 20, 80 << 30)),
        };
        assert_eq!(
            e.to_string(),
            "out of GPU memory while allocating fields: the 4096x4096 run needs 768.0 MiB (70.0 GiB was \
             free when it started), but only 300.0 MiB of 80.0 GiB is free now; another process is using \
             it: run again when it is free, or use a smaller --size"
        );
        let pinned = Error::OutOfMemory {
            what: "allocating pinned host memory for frames".into(),
            memory: "pinned host",
            need: None,
            free: None,
        };
        assert!(!pinned.to_string().contains('\n'));
        assert!(
            pinned.to_string().starts_with("out of pinned host memory while allocating pinned host memory")
        );
    }
}
