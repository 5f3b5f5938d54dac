//! Check kernels: debug (printf, the panic handler, the clocks, an out-of-bounds write for
//! compute-sanitizer).

use ptxkit_device::debug::{clock, clock64, global_timer, nanosleep};
use ptxkit_device::{gpu_print, gpu_println, kernel, thread};

/// Every thread prints one line through `vprintf` with each kind of argument (32- and 64-bit
/// integers, an `f32` promoted to `double`, an `f64`, a pointer), and thread 0 a line without
/// arguments. Thread mapping: one line per thread, 1-D grid; no memory read. Bytes per thread: 0.
#[kernel]
pub unsafe fn check_printf(n: u32, value: f32) {
    let i = thread::index_1d();
    if i < n {
        gpu_println!(
            "check_printf: thread %u of %d, %llu, %lld, value %f, half %g, at %p",
            i,
            n as i32,
            u64::from(i) << 32,
            -(i64::from(i)),
            value * i as f32,
            f64::from(value) / 2.0,
            core::ptr::null::<u8>(),
        );
        if i == 0 {
            gpu_print!("check_printf: done\n");
        }
    }
}

/// The clocks: `out[0]`, `out[1]` = `clock64()` before and after a `nanosleep(sleep_ns)`,
/// `out[2]`, `out[3]` = `global_timer()` around the same, `out[4]` = `clock()`.
/// Thread mapping: thread 0 of block 0 only. Bytes: 40.
#[kernel]
pub unsafe fn check_clocks(sleep_ns: u32, out: *mut u64) {
    if thread::index_1d() == 0 {
        let (cycles_before, time_before) = (clock64(), global_timer());
        nanosleep(sleep_ns);
        let (cycles_after, time_after) = (clock64(), global_timer());
        // SAFETY: `out` holds 5 values (the caller's promise).
        unsafe {
            *out = cycles_before;
            *out.add(1) = cycles_after;
            *out.add(2) = time_before;
            *out.add(3) = time_after;
            *out.add(4) = u64::from(clock());
        }
    }
}

/// Indexes the slice `data[..n]` at `index` (safe Rust: bounds-checked): if `index >= n` the
/// kernel panics, the panic handler prints `panicked at .../debug.rs:<line>:<col>` and traps,
/// and the launch fails. `out[0] = data[index]` otherwise.
/// Thread mapping: thread 0 of block 0 only. Bytes: 8.
#[kernel]
pub unsafe fn check_panic_location(data: *const u32, n: u32, index: u32, out: *mut u32) {
    if thread::index_1d() == 0 {
        // SAFETY: `data` holds n values (the caller's promise).
        let data = unsafe { core::slice::from_raw_parts(data, n as usize) };
        let value = data[index as usize];
        // SAFETY: `out` holds one value (the caller's promise).
        unsafe { *out = value };
    }
}

/// A deliberate fault, for the line-table check under compute-sanitizer: thread 0 writes
/// through `p.add(index)` with no bounds check, so an `index` past the buffer is an invalid
/// global write that compute-sanitizer reports with this file and line (with line tables
/// on). Launched only by the ignored test `debug::oob_write_for_compute_sanitizer`.
/// Thread mapping: thread 0 of block 0 only. Bytes: 4.
#[kernel]
pub unsafe fn check_oob_write(p: *mut u32, index: u64) {
    if thread::index_1d() == 0 {
        // SAFETY: none; the fault is the point (see above). Never launched by other tests. A
        // plain store, so the line compute-sanitizer names is this one (through
        // `write_volatile` it would be core's, the innermost inlined line).
        unsafe { *p.add(index as usize) = 0xdead_beef };
    }
}
