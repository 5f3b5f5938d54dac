//! Checks: constant memory (`constant!`, `ConstantArray::load`, `Gpu::set_constant`).
//!
//! PTX tests: the arrays are declared in the `.const` state space with their sizes, the kernels
//! read them with `ld.const` of the element's width, and the PTX assembles for sm_90. Host
//! tests: the handles' name and length. GPU tests (`--ignored`): constants set from the host,
//! kernels' results against values computed here (odd n, a partial last block), and a
//! `set_constant` between two launches ordered on the stream.

use ptxkit_check_kernels::constant::{
    self as k, CHECK_COEFFICIENTS, CHECK_WORDS, COEFFICIENT_COUNT, WORD_COUNT,
};
use ptxkit_host::grid_1d;

use crate::common::{assemble, assert_emits, assert_not_emits, gpu, ptx};

// -------------------------------------------------------------------------------------------
// PTX
// -------------------------------------------------------------------------------------------

#[test]
fn constant_arrays_are_declared_in_the_const_state_space() {
    let ptx = ptx();
    for declaration in [
        ".visible .const .align 16 .b8 CHECK_COEFFICIENTS[148];",
        ".visible .const .align 16 .b8 CHECK_WORDS[40];",
    ] {
        assert!(ptx.contains(declaration), "expected `{declaration}` in the check kernels' PTX");
    }
}

#[test]
fn constant_loads_emit_ld_const_of_the_element_width() {
    // The symbol's address is read in the kernel itself (the handle's address function is
    // inlined), then one `ld.const` of the element's width.
    assert_emits("const_scale_f32", &["mov.u64", "CHECK_COEFFICIENTS;", "ld.const.f32"]);
    assert_emits("const_mix_u64", &["mov.u64", "CHECK_WORDS;", "ld.const.u64"]);
}

#[test]
fn constant_load_of_an_index_in_range_keeps_no_bounds_check() {
    // `i % 37` is below 37: the checked `load` compiles to the bare `ld.const`, no call to its
    // out-of-bounds report.
    assert_not_emits("const_scale_f32", &["index_out_of_bounds", "__assertfail"]);
}

#[test]
fn constant_kernels_assemble_for_sm_90() {
    assemble(ptx(), "sm_90");
}

// -------------------------------------------------------------------------------------------
// Host
// -------------------------------------------------------------------------------------------

#[test]
fn constant_handles_report_name_length_and_size() {
    assert_eq!(CHECK_COEFFICIENTS.name(), "CHECK_COEFFICIENTS");
    assert_eq!(CHECK_COEFFICIENTS.len(), COEFFICIENT_COUNT);
    assert_eq!(CHECK_COEFFICIENTS.size_in_bytes(), 37 * 4);
    assert!(!CHECK_COEFFICIENTS.is_empty());
    assert_eq!(CHECK_WORDS.name(), "CHECK_WORDS");
    assert_eq!(CHECK_WORDS.len(), WORD_COUNT);
    assert_eq!(CHECK_WORDS.size_in_bytes(), 5 * 8);
}

#[test]
#[should_panic(expected = "runs on the GPU only")]
fn constant_load_panics_on_the_host() {
    CHECK_COEFFICIENTS.load(0);
}

// -------------------------------------------------------------------------------------------
// GPU
// -------------------------------------------------------------------------------------------

/// Odd, with a partial last block of [`BLOCK`].
const N: u32 = 1001;
const BLOCK: u32 = 96;

/// Coefficients `scale · (k − 18)` (exact in f32), a different set for each `scale`.
fn coefficients(scale: f32) -> [f32; COEFFICIENT_COUNT] {
    std::array::from_fn(|k| scale * (k as f32 - 18.0))
}

/// Inputs with every coefficient meeting several different values.
fn inputs_f32() -> Vec<f32> {
    (0..N).map(|i| (i % 13) as f32 * 0.75 - 4.0).collect()
}

/// `const_scale_f32` with the coefficients set now, on the GPU's stream.
fn expected_scaled(coefficients: &[f32; COEFFICIENT_COUNT], x: &[f32]) -> Vec<f32> {
    x.iter().enumerate().map(|(i, x)| coefficients[i % COEFFICIENT_COUNT] * x).collect()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_constant_f32_coefficients_scale_values() {
    let gpu = gpu();
    let coefficients = coefficients(0.5);
    gpu.set_constant(CHECK_COEFFICIENTS, &coefficients).unwrap();
    let x = inputs_f32();
    let x_device = gpu.stream().clone_htod(&x).unwrap();
    let mut out = gpu.stream().alloc_zeros::<f32>(N as usize).unwrap();
    gpu.launch(k::const_scale_f32, grid_1d(N, BLOCK), (&x_device, &mut out, N)).unwrap();
    let got = gpu.stream().clone_dtoh(&out).unwrap();
    // One rounded product each, on both sides: bit-equal.
    assert_eq!(got, expected_scaled(&coefficients, &x));
    assert_eq!(gpu.read_constant(CHECK_COEFFICIENTS).unwrap(), coefficients);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_constant_u64_words_mix_values() {
    let gpu = gpu();
    // All 64 bits in use, so that a 32-bit load or a wrong element shows.
    let words: [u64; WORD_COUNT] =
        std::array::from_fn(|k| 0x9E37_79B9_7F4A_7C15u64.rotate_left(13 * k as u32) ^ k as u64);
    gpu.set_constant(CHECK_WORDS, &words).unwrap();
    let x: Vec<u64> = (0..u64::from(N)).map(|i| i.wrapping_mul(0xD1B5_4A32_D192_ED03)).collect();
    let x_device = gpu.stream().clone_htod(&x).unwrap();
    let mut out = gpu.stream().alloc_zeros::<u64>(N as usize).unwrap();
    gpu.launch(k::const_mix_u64, grid_1d(N, BLOCK), (&x_device, &mut out, N)).unwrap();
    let got = gpu.stream().clone_dtoh(&out).unwrap();
    let expected: Vec<u64> = x.iter().enumerate().map(|(i, x)| words[i % WORD_COUNT] ^ x).collect();
    assert_eq!(got, expected);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_set_constant_between_launches_is_ordered_on_the_stream() {
    let gpu = gpu();
    let (first, second) = (coefficients(0.5), coefficients(-1.25));
    let x = inputs_f32();
    let x_device = gpu.stream().clone_htod(&x).unwrap();
    let mut out_first = gpu.stream().alloc_zeros::<f32>(N as usize).unwrap();
    let mut out_second = gpu.stream().alloc_zeros::<f32>(N as usize).unwrap();
    // No synchronisation in between: the stream alone orders the copies and the launches.
    gpu.set_constant(CHECK_COEFFICIENTS, &first).unwrap();
    gpu.launch(k::const_scale_f32, grid_1d(N, BLOCK), (&x_device, &mut out_first, N)).unwrap();
    gpu.set_constant(CHECK_COEFFICIENTS, &second).unwrap();
    gpu.launch(k::const_scale_f32, grid_1d(N, BLOCK), (&x_device, &mut out_second, N)).unwrap();
    assert_eq!(gpu.stream().clone_dtoh(&out_first).unwrap(), expected_scaled(&first, &x));
    assert_eq!(gpu.stream().clone_dtoh(&out_second).unwrap(), expected_scaled(&second, &x));
    assert_eq!(gpu.read_constant(CHECK_COEFFICIENTS).unwrap(), second);
}
