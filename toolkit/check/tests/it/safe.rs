//! Checks: safe kernels (`ptxkit_device::safe`: `&[T]` inputs, `DisjointSlice` outputs). PTX
//! tests: each slice is a pointer and a length, checked once per access and never trapping in
//! the hot path, at a few instructions over the same kernel on raw pointers. GPU tests: values
//! against the host on odd sizes (1 000 003 elements, a 333 × 517 grid), launches with more
//! threads than elements (the extra threads write nothing), and the launch shapes refused.

use crate::common;
use ptxkit_check_kernels::safe as kernels;
use ptxkit_host::cudarc::driver::LaunchConfig;
use ptxkit_host::{Error, Kernel, Rows, RowsMut, grid_1d, grid_2d};

// ---------------------------------------------------------------------------------------------
// PTX.

/// The entry point's own body, `{` to its closing `}` (without the functions after it).
fn entry_body(kernel: &str) -> &'static str {
    let ptx = common::kernel_ptx(kernel);
    let start = ptx.find("\n{").expect("a kernel body");
    let end = ptx[start..].find("\n}").map_or(ptx.len(), |i| start + i + 2);
    &ptx[start..end]
}

/// Asserts that the entry point's own body contains none of `needles`.
#[track_caller]
fn assert_entry_lacks(kernel: &str, needles: &[&str]) {
    let body = entry_body(kernel);
    for needle in needles {
        assert!(!body.contains(needle), "{kernel}: `{needle}` must not be in its body:\n{body}");
    }
}

/// The instructions of a kernel's own PTX body: statements ending in `;`, without
/// declarations (`.reg`) and comments.
fn instructions(kernel: &str) -> Vec<&'static str> {
    entry_body(kernel)
        .lines()
        .map(|line| line.split("//").next().unwrap_or("").trim())
        .filter(|line| line.ends_with(';') && !line.starts_with('.'))
        .collect()
}

fn count(kernel: &str, opcode: &str) -> usize {
    instructions(kernel).iter().filter(|i| i.starts_with(opcode)).count()
}

#[test]
fn ptx_safe_saxpy_passes_each_slice_as_global_pointer_and_length() {
    common::assert_emits(
        "safe_saxpy",
        &[
            ".param .u64 .ptr .align 1 safe_saxpy_param_0",
            ".param .u64 safe_saxpy_param_1",
            ".param .u64 .ptr .align 1 safe_saxpy_param_2",
            ".param .u64 safe_saxpy_param_3",
            ".param .f32 safe_saxpy_param_4",
            "ld.global.b32",
            "st.global.b32",
        ],
    );
    let names: Vec<&str> = kernels::safe_saxpy::PARAMS.iter().map(|p| p.name).collect();
    assert_eq!(names, ["x", "x.len", "y", "y.len", "a"]);
    let sizes: Vec<usize> = kernels::safe_saxpy::PARAMS.iter().map(|p| p.size).collect();
    assert_eq!(sizes, [8, 8, 8, 8, 4]);
}

#[test]
fn ptx_safe_saxpy_checks_each_slice_once_and_never_traps() {
    // One compare per slice (x's `get`, y's `get_mut`), the index computed once.
    assert_eq!(count("safe_saxpy", "setp."), 2, "{}", common::kernel_ptx("safe_saxpy"));
    assert_entry_lacks("safe_saxpy", &["trap", "call", "%ntid.y", "%nctaid.y"]);
}

#[test]
fn ptx_safe_saxpy_costs_a_few_instructions_over_raw_pointers() {
    let (safe, raw) = (instructions("safe_saxpy").len(), instructions("raw_saxpy").len());
    // The raw kernel trusts one `n` for both buffers; the safe one loads two lengths and
    // checks x too (a `setp`, a branch, the 0.0 a missing x gives), and widens the index to 64
    // bits before the add (so it never wraps): 6 in all, measured 27 against 21.
    assert!(safe <= raw + 6, "safe_saxpy has {safe} instructions, raw_saxpy {raw}");
    assert_eq!(count("safe_saxpy", "ld.global"), count("raw_saxpy", "ld.global"));
    assert_eq!(count("safe_saxpy", "st.global"), count("raw_saxpy", "st.global"));
}

#[test]
fn ptx_safe_indexing_reports_out_of_bounds_off_the_hot_path() {
    // `out[i] = v`: one compare; out of bounds, a call to the cold reporter (`printf` of the
    // kernel, index and length, then `__assertfail`) instead of a trap in the kernel.
    assert_eq!(count("safe_fill_indexed", "setp."), 1, "{}", common::kernel_ptx("safe_fill_indexed"));
    common::assert_emits("safe_fill_indexed", &["call.uni", "out_of_bounds"]);
    assert_entry_lacks("safe_fill_indexed", &["trap"]);
    assert!(common::ptx().contains("__assertfail"), "the reporter calls the device runtime's __assertfail");
    assert!(common::ptx().contains("vprintf"), "the reporter prints the index and length");
    // The kernel's name, NUL-terminated, as the report's function name: a byte array in the PTX
    // (its initialiser leaves the trailing zero out).
    let name = b"safe_fill_indexed";
    let bytes: Vec<String> = name.iter().map(|b| b.to_string()).collect();
    let array = format!("[{}] = {{{}}}", name.len() + 1, bytes.join(", "));
    assert!(common::ptx().contains(&array), "the kernel's name for the report: expected `{array}`");
}

#[test]
fn ptx_safe_stencil_checks_the_grid_and_stores_once() {
    common::assert_emits(
        "safe_stencil_5pt",
        &[
            ".param .u64 .ptr .align 1 safe_stencil_5pt_param_0",
            ".param .u64 .ptr .align 1 safe_stencil_5pt_param_2",
            ".param .u64 safe_stencil_5pt_param_3",
            ".param .u64 safe_stencil_5pt_param_4",
            "%tid.y",
            "%ctaid.y",
        ],
    );
    assert_eq!(count("safe_stencil_5pt", "st.global"), 1);
    assert_entry_lacks("safe_stencil_5pt", &["trap", "call"]);
    let names: Vec<&str> = kernels::safe_stencil_5pt::PARAMS.iter().map(|p| p.name).collect();
    assert_eq!(names, ["input", "input.len", "out", "out.width", "out.height", "k"]);
}

#[test]
fn ptx_grid_window_is_three_params_and_reads_with_no_failure_path() {
    common::assert_emits(
        "safe_window_sum",
        &[
            ".param .u64 .ptr .align 1 safe_window_sum_param_0",
            ".param .u64 safe_window_sum_param_1",
            ".param .u64 safe_window_sum_param_2",
            ".param .u64 .ptr .align 1 safe_window_sum_param_3",
        ],
    );
    // Nine reads of the window and one of the cell itself, one store, and no bounds failure:
    // `window` and `get` answer with `Option`s, checked once each.
    assert_eq!(count("safe_window_sum", "ld.global"), 10, "{}", common::kernel_ptx("safe_window_sum"));
    assert_eq!(count("safe_window_sum", "st.global"), 1);
    assert_entry_lacks("safe_window_sum", &["trap", "call"]);
    let names: Vec<&str> = kernels::safe_window_sum::PARAMS.iter().map(|p| p.name).collect();
    assert_eq!(names, ["input", "input.width", "input.height", "out", "out.width", "out.height"]);
}

#[test]
fn ptx_contract_drops_the_check_the_launch_proved_and_keeps_the_others() {
    // `y` is a GridSlice: the host checked one element per thread, so `y[i]` has no compare;
    // `x` has no contract, so `x.get(i)` keeps its one. `safe_saxpy` (the same work with a
    // DisjointSlice `y`) has two.
    assert_eq!(count("contract_saxpy", "setp."), 1, "{}", common::kernel_ptx("contract_saxpy"));
    assert_eq!(count("safe_saxpy", "setp."), 2);
    // The one compare is against x's length (param 1); y has no length to compare with.
    let setp = instructions("contract_saxpy").into_iter().find(|i| i.starts_with("setp.")).unwrap();
    let x_len = instructions("contract_saxpy")
        .into_iter()
        .find(|i| i.contains("contract_saxpy_param_1"))
        .and_then(|i| i.split_whitespace().nth(1))
        .map(|reg| reg.trim_end_matches(','))
        .expect("x's length loaded");
    assert!(setp.contains(x_len), "the compare `{setp}` is against x's length {x_len}");
    common::assert_emits(
        "contract_saxpy",
        &[".param .u64 .ptr .align 1 contract_saxpy_param_2", "ld.global.b32", "st.global.b32"],
    );
    assert_entry_lacks("contract_saxpy", &["trap", "call", "contract_saxpy_param_4"]);
    let names: Vec<&str> = kernels::contract_saxpy::PARAMS.iter().map(|p| p.name).collect();
    assert_eq!(names, ["x", "x.len", "y", "a"]);
}

#[test]
fn ptx_block_and_warp_outputs_are_a_global_pointer_with_no_length() {
    for (kernel, output) in [("safe_block_sum", "sums"), ("safe_warp_sum", "sums")] {
        let params = match kernel {
            "safe_block_sum" => kernels::safe_block_sum::PARAMS,
            _ => kernels::safe_warp_sum::PARAMS,
        };
        let names: Vec<&str> = params.iter().map(|p| p.name).collect();
        assert_eq!(names, ["x", "x.len", output], "{kernel}");
        common::assert_emits(kernel, &[&format!(".param .u64 .ptr .align 1 {kernel}_param_2")]);
        // One store, to global memory, by the leader; nothing reports or traps.
        assert_eq!(count(kernel, "st.global"), 1, "{}", common::kernel_ptx(kernel));
        assert_entry_lacks(kernel, &["trap", "call", "st.b32"]);
    }
    // The warp's index: lane 0 of each warp, warps numbered through the linear block index.
    common::assert_emits("safe_warp_sum", &["%nctaid.x", "%nctaid.y", "%ctaid.z", "%ntid.z"]);
}

#[test]
fn ptx_shared_tile_is_write_barrier_read_in_the_shared_space() {
    // The block sum: the tile's barrier (the end of earlier reads), lane 0's store, the
    // barrier of `sync()`, warp 0's load: relaxed CTA-scope shared accesses (a race is no data
    // race) and the non-`.aligned` barrier.
    let kernel = "safe_block_sum";
    common::assert_emits(kernel, &[".shared .align 16 .b8 safe_block_sum_warps[128]"]);
    assert_eq!(count(kernel, "barrier.sync 0"), 2, "{}", common::kernel_ptx(kernel));
    assert_eq!(count(kernel, "st.relaxed.cta.shared.b32"), 1);
    assert_eq!(count(kernel, "ld.relaxed.cta.shared.b32"), 1);
    assert_entry_lacks(kernel, &["bar.sync", "ld.shared", "st.shared", "ld.global.nc"]);
    // The box filter fills its 264 slots in a loop and reads 9 per thread, bounds-checked
    // against the slots written (no report: `get` gives `None`).
    let kernel = "safe_box_filter";
    common::assert_emits(kernel, &[".shared .align 16 .b8 safe_box_filter_window[1056]"]);
    assert_eq!(count(kernel, "barrier.sync 0"), 2, "{}", common::kernel_ptx(kernel));
    assert!(count(kernel, "ld.relaxed.cta.shared.b32") >= 1);
    assert!(count(kernel, "st.relaxed.cta.shared.b32") >= 1);
    assert_entry_lacks(kernel, &["trap"]);
}

#[test]
fn ptx_safe_kernels_assemble() {
    for arch in ["sm_80", "sm_90"] {
        common::assemble(common::ptx(), arch);
    }
}

// ---------------------------------------------------------------------------------------------
// GPU.

/// Deterministic values in [-1, 1): a small LCG, so the host and the GPU see the same inputs.
fn values(n: usize, seed: u32) -> Vec<f32> {
    let mut state = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    (0..n)
        .map(|_| {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (state >> 8) as f32 / (1u32 << 23) as f32 - 1.0
        })
        .collect()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_safe_saxpy_matches_host_and_raw_on_odd_length() {
    let gpu = common::gpu();
    let n = 1_000_003usize;
    let (host_x, host_y, a) = (values(n, 1), values(n, 2), 1.75f32);
    let x = gpu.stream().clone_htod(&host_x).unwrap();
    let mut safe_y = gpu.stream().clone_htod(&host_y).unwrap();
    let mut raw_y = gpu.stream().clone_htod(&host_y).unwrap();
    gpu.launch(kernels::safe_saxpy, grid_1d(n as u32, 256), (&x, &mut safe_y, a)).unwrap();
    gpu.launch(kernels::raw_saxpy, grid_1d(n as u32, 256), (&x, &mut raw_y, n as u32, a)).unwrap();
    let (safe_y, raw_y) =
        (gpu.stream().clone_dtoh(&safe_y).unwrap(), gpu.stream().clone_dtoh(&raw_y).unwrap());
    for i in 0..n {
        let expected = host_y[i] + a * host_x[i];
        assert_eq!(safe_y[i], expected, "safe_saxpy y[{i}]");
        assert_eq!(raw_y[i], expected, "raw_saxpy y[{i}]");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_safe_saxpy_extra_threads_and_short_input_get_none() {
    let gpu = common::gpu();
    // y: the first 1000 of 1100 elements (a view), x: 900 elements, 2048 threads (8 × 256).
    let (n, x_len, a) = (1000usize, 900usize, 3.0f32);
    let (host_x, host_y) = (values(x_len, 3), values(n + 100, 4));
    let x = gpu.stream().clone_htod(&host_x).unwrap();
    let mut y = gpu.stream().clone_htod(&host_y).unwrap();
    let cfg = LaunchConfig { grid_dim: (8, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    gpu.launch(kernels::safe_saxpy, cfg, (&x, &mut y.slice_mut(0..n), a)).unwrap();
    let out = gpu.stream().clone_dtoh(&y).unwrap();
    for i in 0..n + 100 {
        let expected = match i {
            _ if i < x_len => host_y[i] + a * host_x[i],
            _ if i < n => host_y[i] + a * 0.0, // x.get(i) is None: adds 0
            _ => host_y[i],                    // past y's view: no thread writes it
        };
        assert_eq!(out[i], expected, "y[{i}]");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_safe_write_index_more_threads_than_elements() {
    let gpu = common::gpu();
    let (n, sentinel) = (777usize, u64::MAX - 1);
    let mut buffer = gpu.stream().clone_htod(&vec![sentinel; n + 23]).unwrap();
    // 1000 threads in blocks of 200: the last 223 have no element.
    let cfg = LaunchConfig { grid_dim: (5, 1, 1), block_dim: (200, 1, 1), shared_mem_bytes: 0 };
    gpu.launch(kernels::safe_write_index, cfg, (&mut buffer.slice_mut(0..n),)).unwrap();
    let out = gpu.stream().clone_dtoh(&buffer).unwrap();
    for (i, &value) in out.iter().enumerate() {
        assert_eq!(value, if i < n { i as u64 } else { sentinel }, "out[{i}]");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_safe_fill_indexed_in_bounds() {
    let gpu = common::gpu();
    let n = 4097usize; // 17 blocks of 241 threads: one thread per element
    let mut out = gpu.stream().alloc_zeros::<u32>(n).unwrap();
    let cfg = LaunchConfig { grid_dim: (17, 1, 1), block_dim: (241, 1, 1), shared_mem_bytes: 0 };
    gpu.launch(kernels::safe_fill_indexed, cfg, (&mut out, 0xC0FFEEu32)).unwrap();
    assert!(gpu.stream().clone_dtoh(&out).unwrap().iter().all(|&v| v == 0xC0FFEE));
}

/// One step of the 5-point diffusion stencil on the host, as `safe_stencil_5pt` computes it.
fn stencil_on_host(input: &[f32], width: usize, height: usize, k: f32) -> Vec<f32> {
    let at = |x: usize, y: usize| input[y * width + x];
    let mut out = vec![0.0; width * height];
    for y in 0..height {
        for x in 0..width {
            let centre = at(x, y);
            out[y * width + x] = if x > 0 && y > 0 && x + 1 < width && y + 1 < height {
                centre + k * (at(x - 1, y) + at(x + 1, y) + at(x, y - 1) + at(x, y + 1) - 4.0 * centre)
            } else {
                centre
            };
        }
    }
    out
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_safe_stencil_matches_host_on_333x517() {
    let gpu = common::gpu();
    let (width, height, k) = (333usize, 517usize, 0.2f32);
    let host_in = values(width * height, 5);
    let input = gpu.stream().clone_htod(&host_in).unwrap();
    // The output buffer holds 100 cells more than the grid: no full row, so `RowsMut` leaves
    // them out and no thread writes them.
    let sentinel = -7.5f32;
    let mut out = gpu.stream().clone_htod(&vec![sentinel; width * height + 100]).unwrap();
    let rows = RowsMut::new(&mut out, width);
    assert_eq!((rows.width(), rows.height()), (width, height));
    // 352 × 520 threads in 32 × 8 blocks: partial blocks on both edges.
    gpu.launch(kernels::safe_stencil_5pt, grid_2d(width as u32, height as u32, (32, 8)), (&input, rows, k))
        .unwrap();
    let result = gpu.stream().clone_dtoh(&out).unwrap();
    let expected = stencil_on_host(&host_in, width, height, k);
    for (i, &value) in result.iter().enumerate() {
        let want = expected.get(i).copied().unwrap_or(sentinel);
        assert_eq!(value, want, "cell {i} (x {}, y {})", i % width, i / width);
    }
}

/// `safe_window_sum` on the host: `input` is `width × in_height`, the output `width ×
/// out_height`.
fn window_sum_on_host(input: &[f32], width: usize, in_height: usize, out_height: usize) -> Vec<f32> {
    let at = |x: usize, y: usize| input[y * width + x];
    let mut out = vec![-1.0; width * out_height];
    for y in 0..out_height.min(in_height) {
        for x in 0..width {
            out[y * width + x] = if x >= 1 && y >= 1 && x + 1 < width && y + 1 < in_height {
                let row = |y: usize| at(x - 1, y) + at(x, y) + at(x + 1, y);
                row(y - 1) + row(y) + row(y + 1)
            } else {
                at(x, y)
            };
        }
    }
    out
}

/// A `Grid2d` read by `window` and `get`: the neighbourhood sums inside, the cell itself on the
/// input's edges, -1 past its last row (the output is taller), bit for bit, on grids with no
/// interior and odd ones, under odd block shapes.
#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_grid_window_matches_host_under_odd_blocks() {
    let gpu = common::gpu();
    for (width, in_height, out_height, block) in [
        (1, 1, 1, (32, 8)),
        (2, 2, 3, (3, 5)),
        (3, 3, 3, (1, 1)),
        (333, 510, 517, (13, 7)),
        (97, 61, 64, (32, 8)),
    ] {
        let host_in = values(width * in_height, 11);
        let input = gpu.stream().clone_htod(&host_in).unwrap();
        let mut out = gpu.stream().clone_htod(&vec![0.0f32; width * out_height]).unwrap();
        let config = grid_2d(width as u32, out_height as u32, block);
        gpu.launch(
            kernels::safe_window_sum,
            config,
            (Rows::new(&input, width), RowsMut::new(&mut out, width)),
        )
        .unwrap();
        let result = gpu.stream().clone_dtoh(&out).unwrap();
        let expected = window_sum_on_host(&host_in, width, in_height, out_height);
        for (i, (&got, &want)) in result.iter().zip(&expected).enumerate() {
            assert_eq!(
                got.to_bits(),
                want.to_bits(),
                "{width}x{out_height}, block {block:?}: cell ({}, {})",
                i % width,
                i / width
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Safe kernels that tile: CPU references, their tests, and GPU tests against them.

/// Block b's sum of `x` in blocks of `block` elements (the last block partial), as
/// `safe_block_sum` computes it: per warp of 32, then over the warps (f64, so the order of the
/// GPU's additions is within the tolerance).
fn block_sums_on_host(x: &[f32], block: usize) -> Vec<f64> {
    x.chunks(block).map(|chunk| chunk.iter().map(|&v| f64::from(v)).sum()).collect()
}

/// Warp w's sum of `x` (32 elements per warp, the last partial).
fn warp_sums_on_host(x: &[f32]) -> Vec<f64> {
    block_sums_on_host(x, 32)
}

/// `safe_box_filter` on the host: the mean of x[i - 4 ..= i + 4], 0 outside `x`.
fn box_filter_on_host(x: &[f32]) -> Vec<f32> {
    let at = |i: isize| if i < 0 { 0.0 } else { x.get(i as usize).copied().unwrap_or(0.0) };
    (0..x.len() as isize).map(|i| (-4..=4).map(|k| at(i + k)).sum::<f32>() / 9.0).collect()
}

#[test]
fn cpu_references_of_the_tiling_kernels() {
    let x: Vec<f32> = (1..=70).map(|v| v as f32).collect();
    // Blocks of 32: 1..=32, 33..=64, 65..=70.
    assert_eq!(block_sums_on_host(&x, 32), [528.0, 1552.0, 405.0]);
    assert_eq!(warp_sums_on_host(&x), block_sums_on_host(&x, 32));
    assert_eq!(block_sums_on_host(&x, 64), [2080.0, 405.0]);
    let filtered = box_filter_on_host(&x);
    assert_eq!(filtered.len(), 70);
    assert_eq!(filtered[0], (1.0 + 2.0 + 3.0 + 4.0 + 5.0) / 9.0); // x[-4..=-1] are 0
    assert_eq!(filtered[10], 11.0); // the mean of 7..=15
    assert_eq!(filtered[69], (66.0 + 67.0 + 68.0 + 69.0 + 70.0) / 9.0); // x[70..] are 0
}

/// Asserts that `got` matches `expected` within float rounding of sums of `terms` values of
/// magnitude ≤ 1.
#[track_caller]
fn assert_sums(got: &[f32], expected: &[f64], terms: usize, what: &str) {
    assert_eq!(got.len(), expected.len(), "{what}: lengths");
    let tolerance = 1e-6 * terms as f64 + 1e-6;
    for (i, (&g, &e)) in got.iter().zip(expected).enumerate() {
        assert!((f64::from(g) - e).abs() <= tolerance, "{what}[{i}]: {g} against {e}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_safe_block_sum_matches_host_on_odd_lengths() {
    let gpu = common::gpu();
    for (n, block) in [(1_000_003usize, 256u32), (77_777, 1024), (4_099, 96), (31, 32)] {
        let host_x = values(n, 11);
        let x = gpu.stream().clone_htod(&host_x).unwrap();
        let cfg = grid_1d(n as u32, block);
        let blocks = cfg.grid_dim.0 as usize;
        // Exactly one element per block: the launch contract.
        let mut sums = gpu.stream().alloc_zeros::<f32>(blocks).unwrap();
        gpu.launch(kernels::safe_block_sum, cfg, (&x, &mut sums)).unwrap();
        let got = gpu.stream().clone_dtoh(&sums).unwrap();
        assert_sums(&got, &block_sums_on_host(&host_x, block as usize), block as usize, "block sums");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_safe_warp_sum_matches_host_on_odd_length() {
    let gpu = common::gpu();
    let n = 1_000_003usize;
    let host_x = values(n, 12);
    let x = gpu.stream().clone_htod(&host_x).unwrap();
    let cfg = grid_1d(n as u32, 128);
    let warps = cfg.grid_dim.0 as usize * 4;
    let mut sums = gpu.stream().clone_htod(&vec![f32::NAN; warps]).unwrap();
    gpu.launch(kernels::safe_warp_sum, cfg, (&x, &mut sums)).unwrap();
    let got = gpu.stream().clone_dtoh(&sums).unwrap();
    // Warps past the data sum zeros.
    let mut expected = warp_sums_on_host(&host_x);
    expected.resize(warps, 0.0);
    assert_sums(&got, &expected, 32, "warp sums");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_safe_box_filter_matches_host_on_odd_length() {
    let gpu = common::gpu();
    let n = 100_003usize;
    let host_x = values(n, 13);
    let x = gpu.stream().clone_htod(&host_x).unwrap();
    let mut out = gpu.stream().alloc_zeros::<f32>(n).unwrap();
    gpu.launch(kernels::safe_box_filter, grid_1d(n as u32, 256), (&x, &mut out)).unwrap();
    let got = gpu.stream().clone_dtoh(&out).unwrap();
    let expected = box_filter_on_host(&host_x);
    for (i, (&g, &e)) in got.iter().zip(&expected).enumerate() {
        assert!((g - e).abs() <= 1e-6, "out[{i}]: {g} against {e}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_contract_saxpy_matches_host_and_refuses_short_outputs() {
    let gpu = common::gpu();
    let (n, a) = (1_000_003usize, 1.75f32);
    let cfg = grid_1d(n as u32, 256);
    let threads = (cfg.grid_dim.0 * cfg.block_dim.0) as usize;
    let (host_x, host_y) = (values(n, 14), values(threads, 15));
    let x = gpu.stream().clone_htod(&host_x).unwrap();
    // One element per thread: the contract holds.
    let mut y = gpu.stream().clone_htod(&host_y).unwrap();
    gpu.launch(kernels::contract_saxpy, cfg, (&x, &mut y, a)).unwrap();
    let got = gpu.stream().clone_dtoh(&y).unwrap();
    for i in 0..threads {
        let expected = host_y[i] + a * host_x.get(i).copied().unwrap_or(0.0);
        assert_eq!(got[i], expected, "y[{i}]");
    }
    // A y of n elements, short of the 1 000 192 threads: refused before the launch.
    let mut short = gpu.stream().alloc_zeros::<f32>(n).unwrap();
    let refused = gpu.launch(kernels::contract_saxpy, cfg, (&x, &mut short, a));
    assert!(
        matches!(refused, Err(Error::InvalidLaunch(ref m)) if m.contains("contract_saxpy") && m.contains("GridSlice")),
        "{refused:?}"
    );
    // A block output one short of the blocks, a warp output one short of the warps.
    let mut sums = gpu.stream().alloc_zeros::<f32>(cfg.grid_dim.0 as usize - 1).unwrap();
    let refused = gpu.launch(kernels::safe_block_sum, cfg, (&x, &mut sums));
    assert!(matches!(refused, Err(Error::InvalidLaunch(ref m)) if m.contains("BlockSlice")), "{refused:?}");
    let mut sums = gpu.stream().alloc_zeros::<f32>(cfg.grid_dim.0 as usize * 8 - 1).unwrap();
    let refused = gpu.launch(kernels::safe_warp_sum, cfg, (&x, &mut sums));
    assert!(matches!(refused, Err(Error::InvalidLaunch(ref m)) if m.contains("WarpSlice")), "{refused:?}");
    gpu.synchronize().unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_launch_refuses_shapes_where_thread_indices_repeat() {
    let gpu = common::gpu();
    let x = gpu.stream().alloc_zeros::<f32>(64).unwrap();
    let mut y = gpu.stream().alloc_zeros::<f32>(64).unwrap();
    // A DisjointSlice output: a 2-D launch would give every x index to several threads.
    let two_d = grid_2d(8, 8, (8, 8));
    let refused = gpu.launch(kernels::safe_saxpy, two_d, (&x, &mut y, 1.0f32));
    assert!(matches!(refused, Err(Error::InvalidLaunch(ref m)) if m.contains("safe_saxpy")), "{refused:?}");
    // A DisjointSlice2d output: 2-D is fine, a second layer along z is not.
    let three_d = LaunchConfig { grid_dim: (1, 1, 2), block_dim: (8, 8, 1), shared_mem_bytes: 0 };
    let refused = gpu.launch(kernels::safe_stencil_5pt, three_d, (&x, RowsMut::new(&mut y, 8), 0.1f32));
    assert!(matches!(refused, Err(Error::InvalidLaunch(_))), "{refused:?}");
    gpu.launch(kernels::safe_stencil_5pt, two_d, (&x, RowsMut::new(&mut y, 8), 0.1f32)).unwrap();
    gpu.synchronize().unwrap();
}
