//! Checks: debug. Without a GPU: `printf` is a `vprintf` call, the clocks read their special
//! registers, and the panic handler prints out of line (a kernel that can panic keeps no stack
//! frame). On a GPU: what `gpu_println!` prints and what a panicking kernel reports, each from
//! a child process (the output of `printf` reaches the process's stdout, and a trap spoils
//! the CUDA context of the process it happens in), and the clocks.

use std::process::Command;

use ptxkit_check_kernels::debug::{check_clocks, check_oob_write, check_panic_location, check_printf};
use ptxkit_host::grid_1d;

use crate::common::{assert_emits, assert_not_emits, gpu, kernel_ptx, ptx};

// ---- Without a GPU ----

#[test]
fn debug_printf_calls_vprintf() {
    assert_emits("check_printf", &["call.uni (retval0), vprintf,"]);
    assert!(ptx().contains(".extern .func  (.param .b32 func_retval0) vprintf"));
}

#[test]
fn debug_clocks_read_the_special_registers() {
    assert_emits("check_clocks", &["%clock64;", "%globaltimer;", "nanosleep.u32", "%clock;"]);
}

#[test]
fn debug_panic_handler_prints_out_of_line() {
    // The kernel only calls the (cold) panic path: no printing, no stack frame in it.
    assert_emits("check_panic_location", &["call.uni"]);
    assert_not_emits("check_panic_location", &["vprintf", "__local_depot"]);
    // The handler prints through vprintf, then traps.
    let ptx = ptx();
    let reporter = ptx.find("5debug12report_panic(").expect("the panic reporter in the PTX");
    let body = &ptx[reporter..];
    let body = &body[..body.find("\n}").unwrap()];
    assert!(body.contains("vprintf"), "{body}");
    assert!(ptx.contains("call.uni _RNvNtCs"), "calls into the handler");
    assert!(ptx.contains("trap; exit;"));
}

// ---- On a GPU ----

/// Runs the ignored test `name` of this binary in a child process (with `PTXKIT_CHECK_CHILD`
/// set to it); returns its stdout and stderr, after checking that it passed.
fn run_child(name: &str) -> (String, String) {
    let output = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", &format!("debug::{name}"), "--ignored", "--nocapture", "--test-threads=1"])
        .env("PTXKIT_CHECK_CHILD", name)
        .output()
        .expect("run the test binary again");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    );
    println!("{name} printed:\n{stdout}\n{stderr}");
    assert!(output.status.success(), "{name} failed:\n{stdout}\n{stderr}");
    (stdout, stderr)
}

/// Whether this process is the child that [`run_child`] started for `name`.
fn is_child(name: &str) -> bool {
    std::env::var("PTXKIT_CHECK_CHILD").is_ok_and(|child| child == name)
}

/// The child of [`gpu_debug_printf_prints_every_argument`]: 100 threads in blocks of 96 (a
/// partial second block) print a line each. In a `--ignored` run of its own it does nothing.
#[test]
#[ignore = "needs a CUDA GPU (run by gpu_debug_printf_prints_every_argument)"]
fn gpu_debug_child_printf() {
    if !is_child("gpu_debug_child_printf") {
        return;
    }
    let gpu = gpu();
    gpu.launch(check_printf, grid_1d(100, 96), (100u32, 1.5f32)).unwrap();
    gpu.synchronize().unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_debug_printf_prints_every_argument() {
    let (stdout, _) = run_child("gpu_debug_child_printf");
    // The first line may follow libtest's `test ... ` on the same line (printed without a
    // newline before the test runs): each line from where the kernel's text starts.
    let lines: Vec<&str> =
        stdout.lines().filter_map(|l| l.find("check_printf: thread ").map(|at| &l[at..])).collect();
    assert_eq!(lines.len(), 100, "{stdout}");
    for i in [0u64, 5, 95, 96, 99] {
        // `%u`, `%d`, `%llu`, `%lld`, `%f` (an f32 promoted), `%g` (an f64), `%p`.
        let expected = format!(
            "check_printf: thread {i} of 100, {}, {}, value {:.6}, half 0.75, at ",
            i << 32,
            -(i as i64),
            1.5 * i as f64
        );
        assert!(lines.iter().any(|l| l.starts_with(&expected)), "no line {expected:?} in:\n{stdout}");
    }
    assert_eq!(stdout.lines().filter(|l| l.ends_with("check_printf: done")).count(), 1, "{stdout}");
}

/// The child of [`gpu_debug_panic_prints_its_location`]: an in-bounds index, then one out of
/// bounds, whose launch must fail. In a `--ignored` run of its own it does nothing.
#[test]
#[ignore = "needs a CUDA GPU (run by gpu_debug_panic_prints_its_location)"]
fn gpu_debug_child_panic() {
    if !is_child("gpu_debug_child_panic") {
        return;
    }
    let gpu = gpu();
    let stream = gpu.stream();
    let data = stream.clone_htod(&[10u32, 11, 12, 13]).unwrap();
    let mut out = stream.alloc_zeros::<u32>(1).unwrap();
    gpu.launch(check_panic_location, grid_1d(1, 32), (&data, 4u32, 2u32, &mut out)).unwrap();
    assert_eq!(stream.clone_dtoh(&out).unwrap(), [12]);
    let launched = gpu.launch(check_panic_location, grid_1d(1, 32), (&data, 4u32, 9u32, &mut out));
    let result = launched.and_then(|()| gpu.synchronize());
    eprintln!("the driver reports: {result:?}");
    assert!(result.is_err(), "an out-of-bounds index must fail the launch");
    // The context is spoiled: leave the buffers and the context to the process's exit.
    std::mem::forget((data, out, gpu));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_debug_panic_prints_its_location() {
    let (stdout, stderr) = run_child("gpu_debug_child_panic");
    // Where `data[index as usize]` is in the kernel's source.
    let source = include_str!("../../kernels/src/debug.rs");
    let (line, column) = source
        .lines()
        .enumerate()
        .find_map(|(n, text)| text.find("data[index as usize]").map(|c| (n + 1, c + 1)))
        .unwrap();
    let expected = format!(
        "panicked at toolkit/check/kernels/src/debug.rs:{line}:{column}, block (0, 0, 0), thread (0, 0, 0)"
    );
    assert!(stdout.contains(&expected), "expected {expected:?} in:\n{stdout}");
    assert!(stderr.contains("the driver reports: Err("), "{stderr}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_debug_clocks_advance_across_a_sleep() {
    let gpu = gpu();
    let stream = gpu.stream();
    let mut out = stream.alloc_zeros::<u64>(5).unwrap();
    gpu.launch(check_clocks, grid_1d(1, 32), (100_000u32, &mut out)).unwrap();
    let [cycles_before, cycles_after, time_before, time_after, _clock] = stream.clone_dtoh(&out).unwrap()[..]
    else {
        unreachable!()
    };
    println!(
        "nanosleep(100 µs): {} cycles, {} ns of %globaltimer",
        cycles_after - cycles_before,
        time_after - time_before
    );
    assert!(cycles_after > cycles_before);
    assert!(time_after > time_before, "%globaltimer did not move across a 100 µs sleep");
    assert!(time_after - time_before < 1_000_000_000, "a 100 µs sleep took a second");
}

/// A deliberate invalid write (`check_oob_write`, 4 TiB past a buffer) for the line-table
/// check: under `compute-sanitizer` it must name `toolkit/check/kernels/src/debug.rs` and the
/// line of the write. It faults the CUDA context, so it runs only when
/// `PTXKIT_CHECK_FAULT=1` (alone, by name):
/// `PTXKIT_LINEINFO=1 PTXKIT_CHECK_FAULT=1 compute-sanitizer <test binary> --ignored --exact
/// debug::gpu_debug_oob_write_for_compute_sanitizer`.
#[test]
#[ignore = "needs a CUDA GPU; faults on purpose (PTXKIT_CHECK_FAULT=1, under compute-sanitizer)"]
fn gpu_debug_oob_write_for_compute_sanitizer() {
    if std::env::var("PTXKIT_CHECK_FAULT").as_deref() != Ok("1") {
        println!("skipped: set PTXKIT_CHECK_FAULT=1 and run it alone (it faults the CUDA context)");
        return;
    }
    assert!(kernel_ptx("check_oob_write").contains("st.global.b32"));
    let gpu = gpu();
    let stream = gpu.stream();
    let mut buffer = stream.alloc_zeros::<u32>(16).unwrap();
    let launched = gpu.launch(check_oob_write, grid_1d(1, 32), (&mut buffer, 1u64 << 40));
    let result = launched.and_then(|()| gpu.synchronize());
    println!("the driver reports: {result:?}");
    assert!(result.is_err(), "a write 4 TiB past the buffer must fault");
}
