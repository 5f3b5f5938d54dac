//! Debugging inside kernels: assertions that say where they failed, `printf`
//! ([`gpu_print!`](crate::gpu_print), [`gpu_println!`](crate::gpu_println)), a panic handler
//! that prints where the kernel panicked, and the clocks (`clock`, `clock64`, `%globaltimer`,
//! `nanosleep`) for timing inside a kernel.

/// The proc macro behind [`unroll!`](crate::unroll) (which forwards to it: the crate root
/// exports the `macro_rules!` wrapper).
#[doc(hidden)]
pub use ptxkit_macros::unroll as __unroll_proc_macro;

/// CUDA C's `assert` for kernels: when `condition` is false, the failing thread reports the
/// condition, this file and line, and its block and thread through the driver (printed on the
/// host's stderr) and stops the kernel; the launch fails with `CUDA_ERROR_ASSERT`, which the
/// host reports. Checked in release builds too (unlike `debug_assert!`, which traps without
/// saying where).
///
/// ```ignore
/// device_assert!(steps <= TEMPORAL_MAX_STEPS);
/// ```
#[macro_export]
macro_rules! device_assert {
    ($condition:expr $(,)?) => {
        if !$condition {
            // SAFETY: NUL-terminated static strings, as `__assertfail` expects.
            unsafe {
                $crate::assert_fail(
                    concat!(stringify!($condition), "\0"),
                    concat!(file!(), "\0"),
                    line!(),
                    concat!(module_path!(), "\0"),
                )
            }
        }
    };
}

unsafe extern "C" {
    /// The device runtime's assertion report (what nvcc's `assert` calls).
    fn __assertfail(assertion: *const u8, file: *const u8, line: u32, function: *const u8, char_size: usize);
}

/// Reports a failed [`device_assert!`] and stops the kernel.
///
/// # Safety
/// The strings must end with a NUL byte.
#[cold]
#[inline(never)]
pub unsafe fn assert_fail(
    assertion: &'static str,
    file: &'static str,
    line: u32,
    function: &'static str,
) -> ! {
    on_gpu!("assert_fail", {
        // SAFETY: NUL-terminated strings (the caller's promise); `trap` aborts the kernel.
        unsafe {
            __assertfail(assertion.as_ptr(), file.as_ptr(), line, function.as_ptr(), 1);
            core::arch::nvptx::trap()
        }
    })
}

/// A panic inside a kernel (a failed `debug_assert!`, an index out of bounds, an
/// `unwrap` of `None`) prints `panicked at <file>:<line>:<column>` with the block and thread
/// through `printf` (the host's stdout, at the next synchronisation), then traps: the launch
/// fails with an error (`CUDA_ERROR_LAUNCH_FAILED`, "unspecified launch failure", on an H200 with driver 580), which the host reports. The message itself is
/// not printed (formatting it would put `core::fmt` into every kernel that can panic).
#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    if let Some(location) = info.location() {
        report_panic(location.file(), location.line(), location.column());
    }
    // SAFETY: `trap` aborts the kernel; nothing after it runs.
    unsafe { core::arch::nvptx::trap() }
}

/// Prints where a kernel panicked, and which thread; out of line and cold, so that a kernel
/// that can panic only calls it (its argument block, on the stack, stays out of the kernels).
#[cfg(target_arch = "nvptx64")]
#[cold]
#[inline(never)]
fn report_panic(file: &str, line: u32, column: u32) {
    /// vprintf's arguments for the format below, in order, at their natural alignment.
    #[repr(C)]
    struct Arguments {
        file: *const u8,
        line: u32,
        column: u32,
        block: [u32; 3],
        thread: [u32; 3],
    }
    // CUDA's printf has no `%.*s` (its `*` reads nothing: the arguments after it come out
    // shifted, as an H200 showed), and the location's file name is not NUL-terminated: a
    // NUL-terminated copy, cut at 255 bytes, for a plain `%s`.
    let mut name = [0u8; 256];
    let length = file.len().min(name.len() - 1);
    name[..length].copy_from_slice(&file.as_bytes()[..length]);
    // SAFETY: reading special registers has no preconditions.
    let (block, thread) = unsafe {
        use core::arch::nvptx::*;
        (
            [_block_idx_x(), _block_idx_y(), _block_idx_z()].map(|i| i as u32),
            [_thread_idx_x(), _thread_idx_y(), _thread_idx_z()].map(|i| i as u32),
        )
    };
    let arguments = Arguments { file: name.as_ptr(), line, column, block, thread };
    // SAFETY: the format is NUL-terminated; `arguments` holds one value per conversion, in
    // order, each of the type it names (`%s`: a pointer to a NUL-terminated string).
    unsafe {
        vprintf(
            c"panicked at %s:%u:%u, block (%u, %u, %u), thread (%u, %u, %u)\n".as_ptr().cast(),
            (&raw const arguments).cast(),
        );
    }
}

#[cfg(target_arch = "nvptx64")]
unsafe extern "C" {
    /// The CUDA runtime's `printf` (what nvcc's `printf` calls): a C format string and a
    /// buffer holding the arguments, each at its natural alignment as in a C struct.
    fn vprintf(format: *const u8, arguments: *const u8) -> i32;
}

/// CUDA's device `printf` with the arguments already packed: `format` is a NUL-terminated C
/// format string and `arguments` points to the values it converts, in order, each at its
/// natural alignment (a `#[repr(C)]` struct of them; `float` promoted to `double`). Returns
/// the number of arguments, or a negative value on error. [`gpu_print!`](crate::gpu_print)
/// does the packing. The output reaches the host's stdout at the next synchronisation
/// (`cudaDeviceSynchronize`, a blocking copy, ...), from a 1 MiB buffer by default.
///
/// # Safety
/// `format` must be NUL-terminated, and `arguments` must point to one value per conversion
/// of the type it names (`%d`/`%u`/`%x`: 32-bit integers, `%ld`/`%lu`/`%llx`: 64-bit ones,
/// `%f`/`%e`/`%g`: `f64`, `%s`: a pointer to a NUL-terminated string, `%p`: a pointer), or be
/// null when there is none.
#[inline(always)]
pub unsafe fn vprintf_packed(format: *const u8, arguments: *const u8) -> i32 {
    on_gpu!("vprintf_packed", {
        // SAFETY: the caller's promise.
        unsafe { vprintf(format, arguments) }
    })
}

/// A value `gpu_print!` can pass to `printf`: its C varargs form (integers narrower than
/// 32 bits widened to 32, `f32` promoted to `f64`, as C does for variadic arguments).
pub trait PrintfArg: Copy {
    /// How the value is stored in the argument block.
    type Packed: Copy;
    /// The value in its varargs form.
    fn packed(self) -> Self::Packed;
}

macro_rules! printf_arg {
    ($($from:ty => $to:ty),* $(,)?) => {
        $(
            impl PrintfArg for $from {
                type Packed = $to;
                #[inline(always)]
                fn packed(self) -> $to {
                    <$to>::from(self)
                }
            }
        )*
    };
}

printf_arg!(
    u8 => u32, u16 => u32, u32 => u32, u64 => u64,
    i8 => i32, i16 => i32, i32 => i32, i64 => i64,
    f32 => f64, f64 => f64, bool => u32, char => u32,
);

impl PrintfArg for usize {
    type Packed = u64;
    #[inline(always)]
    fn packed(self) -> u64 {
        self as u64
    }
}

impl PrintfArg for isize {
    type Packed = i64;
    #[inline(always)]
    fn packed(self) -> i64 {
        self as i64
    }
}

impl<T> PrintfArg for *const T {
    type Packed = *const T;
    #[inline(always)]
    fn packed(self) -> *const T {
        self
    }
}

impl<T> PrintfArg for *mut T {
    type Packed = *mut T;
    #[inline(always)]
    fn packed(self) -> *mut T {
        self
    }
}

impl PrintfArg for &core::ffi::CStr {
    type Packed = *const u8;
    #[inline(always)]
    fn packed(self) -> *const u8 {
        self.as_ptr().cast()
    }
}

/// CUDA C's `printf` in a kernel: a C format string literal (the NUL is added) and up to 16
/// arguments, each a [`PrintfArg`](crate::debug::PrintfArg) (`u32`/`i32`/`u64`/`i64`/`usize`,
/// `f32`/`f64`, `bool`, raw pointers, `&CStr` for `%s`). The conversions must match the
/// packed types: `%d`/`%u`/`%x` for 32-bit integers (and `u8`, `u16`, `bool`, `char`),
/// `%ld`/`%lu`/`%lld` for 64-bit ones and `usize`, `%f`/`%g`/`%e` for both floats, `%p` for
/// pointers. Every thread that runs it prints; the host sees the lines at its next
/// synchronisation. Returns nothing; a format without arguments passes a null block.
///
/// ```ignore
/// gpu_print!("block %u: sum %f\n", block_idx_x(), sum);
/// ```
#[macro_export]
macro_rules! gpu_print {
    ($format:literal $(, $argument:expr)* $(,)?) => {
        $crate::__gpu_print_pack!(
            [$format] [] [$($argument,)*]
            [A0 A1 A2 A3 A4 A5 A6 A7 A8 A9 A10 A11 A12 A13 A14 A15]
        )
    };
}

/// [`gpu_print!`] with a newline after the format.
#[macro_export]
macro_rules! gpu_println {
    () => {
        $crate::gpu_print!("\n")
    };
    ($format:literal $(, $argument:expr)* $(,)?) => {
        $crate::__gpu_print_pack!(
            [concat!($format, "\n")] [] [$($argument,)*]
            [A0 A1 A2 A3 A4 A5 A6 A7 A8 A9 A10 A11 A12 A13 A14 A15]
        )
    };
}

/// `gpu_print!`'s packing: pairs each argument with a type parameter name, then stores the
/// arguments in a `#[repr(C)]` struct of those parameters (C's layout, as `vprintf` reads).
#[doc(hidden)]
#[macro_export]
macro_rules! __gpu_print_pack {
    ([$format:expr] [] [] [$($unused:ident)*]) => {{
        // SAFETY: a NUL-terminated format literal without arguments (the format's
        // conversions are the caller's to match: none here).
        unsafe { $crate::debug::vprintf_packed(concat!($format, "\0").as_ptr(), ::core::ptr::null()) };
    }};
    ([$format:expr] [$(($argument:expr, $parameter:ident))+] [] [$($unused:ident)*]) => {{
        #[repr(C)]
        struct PrintfArguments<$($parameter),+>($($parameter),+);
        let arguments = PrintfArguments($($crate::debug::PrintfArg::packed($argument)),+);
        // SAFETY: a NUL-terminated format literal; `arguments` holds the arguments in order,
        // each in its C varargs form at its natural alignment (`#[repr(C)]`).
        unsafe {
            $crate::debug::vprintf_packed(
                concat!($format, "\0").as_ptr(),
                (&raw const arguments).cast::<u8>(),
            )
        };
    }};
    ([$format:expr] [$($done:tt)*] [$argument:expr, $($rest:expr,)*] [$parameter:ident $($parameters:ident)*]) => {
        $crate::__gpu_print_pack!([$format] [$($done)* ($argument, $parameter)] [$($rest,)*] [$($parameters)*])
    };
    ([$format:expr] [$($done:tt)*] [$($rest:expr,)+] []) => {
        compile_error!("gpu_print!: at most 16 arguments")
    };
}

/// The SM's cycle counter, 32 bits (`%clock`; CUDA's `clock()`): wraps every few seconds;
/// differences of two readings in one thread time a stretch of its code.
#[inline(always)]
pub fn clock() -> u32 {
    on_gpu!("clock", {
        let cycles: u32;
        // SAFETY: reading a special register; not `pure`, so each call reads it anew.
        unsafe { core::arch::asm!("mov.u32 {c}, %clock;", c = out(reg32) cycles, options(nomem, nostack)) };
        cycles
    })
}

/// The SM's cycle counter, 64 bits (`%clock64`; CUDA's `clock64()`).
#[inline(always)]
pub fn clock64() -> u64 {
    on_gpu!("clock64", {
        let cycles: u64;
        // SAFETY: reading a special register; not `pure`, so each call reads it anew.
        unsafe { core::arch::asm!("mov.u64 {c}, %clock64;", c = out(reg64) cycles, options(nomem, nostack)) };
        cycles
    })
}

/// The GPU's global nanosecond timer (`%globaltimer`; CUDA's `__globaltimer()`): the same on
/// every SM; updated every microsecond or so (the resolution depends on the GPU).
#[inline(always)]
pub fn global_timer() -> u64 {
    on_gpu!("global_timer", {
        let nanoseconds: u64;
        // SAFETY: reading a special register; not `pure`, so each call reads it anew.
        unsafe {
            core::arch::asm!("mov.u64 {t}, %globaltimer;", t = out(reg64) nanoseconds, options(nomem, nostack))
        };
        nanoseconds
    })
}

/// Suspends the thread for about `nanoseconds` (at most 1 ms; the hardware may wake it
/// earlier or later): `nanosleep.u32`, CUDA's `__nanosleep`, sm_70 on. For back-off in spin
/// loops.
#[inline(always)]
pub fn nanosleep(nanoseconds: u32) {
    on_gpu!("nanosleep", {
        // SAFETY: suspends this thread only; touches no memory.
        unsafe { core::arch::asm!("nanosleep.u32 {n};", n = in(reg32) nanoseconds, options(nomem, nostack)) }
    })
}
