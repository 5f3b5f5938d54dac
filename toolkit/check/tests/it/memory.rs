//! Checks: memory (atomics, typed shared memory, global vector and read-only loads).
//!
//! PTX tests: each kernel of `kernels/src/memory.rs` contains the instruction its intrinsic
//! promises (state space, scope, operation, type), and the whole PTX assembles for sm_90. GPU
//! tests (`--ignored`): the kernels' results against values computed here, with odd block
//! sizes and a partial last block.

use std::collections::HashMap;
use std::fmt::Debug;

use ptxkit_check_kernels::memory::{self as k, F32x4};
use ptxkit_host::cudarc::driver::{CudaSlice, DeviceRepr, LaunchConfig, ValidAsZeroBits};
use ptxkit_host::{Gpu, grid_1d};

use crate::common::{assemble, assert_emits, assert_not_emits, gpu, kernel_ptx, ptx};

// -------------------------------------------------------------------------------------------
// PTX
// -------------------------------------------------------------------------------------------

/// `(kernel, PTX type)` of the add/sub kernels.
const ADD_KERNELS: [(&str, &str); 6] = [
    ("mem_atomic_add_u32", "u32"),
    ("mem_atomic_add_i32", "s32"),
    ("mem_atomic_add_u64", "u64"),
    ("mem_atomic_add_i64", "u64"),
    ("mem_atomic_add_f32", "f32"),
    ("mem_atomic_add_f64", "f64"),
];

#[test]
fn atomic_add_and_sub_emit_global_atom_and_red_at_every_scope() {
    for (kernel, ty) in ADD_KERNELS {
        let mut needles = Vec::new();
        for scope in ["gpu", "cta", "sys"] {
            needles.push(format!("atom.relaxed.{scope}.global.add.{ty} "));
            needles.push(format!("red.relaxed.{scope}.global.add.{ty} "));
        }
        assert_emits(kernel, &needles.iter().map(String::as_str).collect::<Vec<_>>());
        // Generic addressing (no state space) is the legacy functions' alone.
        assert_not_emits(kernel, &["atom.relaxed.gpu.add", "red.relaxed.gpu.add"]);
    }
}

#[test]
fn atomic_min_max_emit_signed_and_unsigned_forms() {
    for (kernel, ty) in [
        ("mem_atomic_min_max_u32", "u32"),
        ("mem_atomic_min_max_i32", "s32"),
        ("mem_atomic_min_max_u64", "u64"),
        ("mem_atomic_min_max_i64", "s64"),
    ] {
        let needles = [
            format!("atom.relaxed.gpu.global.min.{ty} "),
            format!("red.relaxed.gpu.global.min.{ty} "),
            format!("atom.relaxed.gpu.global.max.{ty} "),
            format!("red.relaxed.gpu.global.max.{ty} "),
            format!("atom.relaxed.sys.global.min.{ty} "),
            format!("red.relaxed.sys.global.max.{ty} "),
            format!("red.relaxed.cta.global.min.{ty} "),
            format!("atom.relaxed.cta.global.max.{ty} "),
        ];
        assert_emits(kernel, &needles.iter().map(String::as_str).collect::<Vec<_>>());
    }
}

#[test]
fn atomic_bitwise_emit_b32_and_b64() {
    for (kernel, ty) in [
        ("mem_atomic_bitwise_u32", "b32"),
        ("mem_atomic_bitwise_i32", "b32"),
        ("mem_atomic_bitwise_u64", "b64"),
        ("mem_atomic_bitwise_i64", "b64"),
    ] {
        let needles = [
            format!("atom.relaxed.gpu.global.and.{ty} "),
            format!("red.relaxed.gpu.global.or.{ty} "),
            format!("red.relaxed.gpu.global.xor.{ty} "),
            format!("red.relaxed.sys.global.and.{ty} "),
            format!("atom.relaxed.sys.global.or.{ty} "),
            format!("atom.relaxed.sys.global.xor.{ty} "),
            format!("red.relaxed.cta.global.and.{ty} "),
            format!("atom.relaxed.cta.global.or.{ty} "),
            format!("red.relaxed.cta.global.xor.{ty} "),
        ];
        assert_emits(kernel, &needles.iter().map(String::as_str).collect::<Vec<_>>());
    }
}

#[test]
fn atomic_exchange_and_compare_exchange_emit_exch_and_cas() {
    for (kernel, ty) in [
        ("mem_atomic_exchange_u32", "b32"),
        ("mem_atomic_exchange_i32", "b32"),
        ("mem_atomic_exchange_f32", "b32"),
        ("mem_atomic_exchange_u64", "b64"),
        ("mem_atomic_exchange_i64", "b64"),
        ("mem_atomic_exchange_f64", "b64"),
    ] {
        let needles = ["gpu", "sys", "cta"].map(|scope| format!("atom.relaxed.{scope}.global.exch.{ty} "));
        assert_emits(kernel, &needles.iter().map(String::as_str).collect::<Vec<_>>());
    }
    for (kernel, ty) in [
        ("mem_atomic_cas_u32", "b32"),
        ("mem_atomic_cas_i32", "b32"),
        ("mem_atomic_cas_u64", "b64"),
        ("mem_atomic_cas_i64", "b64"),
    ] {
        let needles = ["gpu", "sys", "cta"].map(|scope| format!("atom.relaxed.{scope}.global.cas.{ty} "));
        assert_emits(kernel, &needles.iter().map(String::as_str).collect::<Vec<_>>());
    }
}

#[test]
fn atomic_inc_dec_emit_u32_forms() {
    assert_emits(
        "mem_atomic_inc_dec_u32",
        &[
            "atom.relaxed.gpu.global.inc.u32 ",
            "red.relaxed.gpu.global.inc.u32 ",
            "red.relaxed.sys.global.inc.u32 ",
            "atom.relaxed.gpu.global.dec.u32 ",
            "red.relaxed.gpu.global.dec.u32 ",
            "atom.relaxed.sys.global.dec.u32 ",
            "atom.relaxed.cta.global.inc.u32 ",
            "red.relaxed.cta.global.dec.u32 ",
        ],
    );
}

#[test]
fn legacy_atomics_keep_their_system_scope_and_inferred_state_space() {
    // `atomic_add_u32`/`min`/`max` stay `core`'s relaxed atomics (system scope, the state
    // space as LLVM infers it: global for a kernel's buffer), as the simulations' kernels were
    // measured with; `atomic_add_f32` is a device-scope reduction.
    assert_emits(
        "mem_legacy_atomics",
        &[
            "atom.relaxed.sys.global.add.u32 ",
            "atom.relaxed.sys.global.min.u32 ",
            "atom.relaxed.sys.global.max.u32 ",
            "red.relaxed.gpu.add.f32 ",
        ],
    );
    assert_not_emits("mem_legacy_atomics", &["atom.relaxed.gpu"]);
}

#[test]
fn shared_atomics_emit_atom_shared() {
    assert_emits(
        "mem_shared_atomics_u32",
        &[
            "atom.shared.add.u32 ",
            "atom.shared.min.u32 ",
            "atom.shared.max.u32 ",
            "atom.shared.inc.u32 ",
            "atom.shared.dec.u32 ",
            "atom.shared.and.b32 ",
            "atom.shared.or.b32 ",
            "atom.shared.xor.b32 ",
            "atom.shared.exch.b32 ",
            "atom.shared.cas.b32 ",
        ],
    );
    assert_emits(
        "mem_shared_atomics_i32",
        &["atom.shared.add.s32 ", "atom.shared.min.s32 ", "atom.shared.max.s32 ", "atom.shared.cas.b32 "],
    );
    assert_emits(
        "mem_shared_atomics_u64",
        &["atom.shared.add.u64 ", "atom.shared.min.u64 ", "atom.shared.max.u64 ", "atom.shared.cas.b64 "],
    );
    assert_emits("mem_shared_atomics_i64", &["atom.shared.min.s64 ", "atom.shared.exch.b64 "]);
    assert_emits("mem_shared_atomics_f32", &["atom.shared.add.f32 ", "atom.shared.exch.b32 "]);
    assert_emits("mem_shared_atomics_f64", &["atom.shared.add.f64 ", "atom.shared.exch.b64 "]);
    // 32-bit shared-space addresses: no generic pointer to shared memory.
    for kernel in ["mem_shared_atomics_u32", "mem_shared_atomics_f64", "mem_histogram_shared"] {
        assert_not_emits(kernel, &["cvta.shared", "atom.add", "atom.relaxed.gpu.add"]);
    }
    assert_emits("mem_histogram_shared", &["atom.shared.add.u32 ", "red.relaxed.gpu.global.add.u32 "]);
}

#[test]
fn shared_array_loads_and_stores_use_the_element_width() {
    for (kernel, load, store) in [
        ("mem_shared_rotate_u8", "ld.shared.u8 ", "st.shared.u8 "),
        ("mem_shared_rotate_u16", "ld.shared.b16 ", "st.shared.b16 "),
        ("mem_shared_rotate_f32", "ld.shared.b32 ", "st.shared.b32 "),
        ("mem_shared_rotate_f64", "ld.shared.b64 ", "st.shared.b64 "),
        ("mem_shared_rotate_f32x4", "ld.shared.v4.b32 ", "st.shared.v4.b32 "),
        ("mem_shared_rotate_u8x3", "ld.shared.u8 ", "st.shared.u8 "),
        ("mem_shared_rotate_u16x3", "ld.shared.b16 ", "st.shared.b16 "),
        ("mem_shared_rotate_u32x3", "ld.shared.b32 ", "st.shared.b32 "),
        ("mem_dynamic_shared_reverse_u64", "ld.shared.b64 ", "st.shared.b64 "),
    ] {
        assert_emits(kernel, &[load, store]);
        assert_not_emits(kernel, &["cvta.shared"]);
    }
    // The 3-element fallbacks: one access per element.
    assert_eq!(kernel_ptx("mem_shared_rotate_u32x3").matches("ld.shared.b32 ").count(), 3);
    assert_eq!(kernel_ptx("mem_shared_rotate_u8x3").matches("st.shared.u8 ").count(), 3);
    assert_emits("mem_shared_rotate_f32x4", &[".shared .align 16 .b8 mem_rotate_f32x4_tile[2048];"]);
    assert!(ptx().contains(".extern .shared .align 16 .b8 mem_dynamic_reverse_tile[];"));
}

#[test]
fn shared_array_generic_pointer_converts_once() {
    assert_emits("mem_shared_generic_pointer", &["cvta.shared.u64 ", "st.shared.b32 "]);
}

#[test]
fn shared_array_vector_accesses_emit_v2_and_v4() {
    assert_emits(
        "mem_shared_vectors_f32",
        &["st.shared.v4.f32 ", "st.shared.v2.f32 ", "ld.shared.v4.f32 ", "ld.shared.v2.f32 "],
    );
    assert_emits("mem_shared_vectors_f64", &["st.shared.v2.f64 ", "ld.shared.v2.f64 "]);
    assert_emits("mem_shared_f32_pairs", &["st.shared.v2.f32 ", "ld.shared.v2.f32 "]);
    assert_not_emits("mem_shared_f32_pairs", &["cvta.shared"]);
}

#[test]
fn global_vector_and_read_only_loads_emit_their_instructions() {
    assert_emits(
        "mem_copy_f32x4",
        &["ld.global.v4.f32 ", "st.global.v4.f32 ", "ld.global.f32 ", "st.global.f32 "],
    );
    assert_emits(
        "mem_copy_nc_f32x4",
        &["ld.global.nc.v4.f32 ", "st.global.cs.v4.f32 ", "ld.global.nc.f32 ", "st.global.cs.f32 "],
    );
    assert_emits(
        "mem_copy_nc_f64x2",
        &["ld.global.nc.v2.f64 ", "st.global.v2.f64 ", "ld.global.nc.f64 ", "st.global.f64 "],
    );
    assert_emits(
        "mem_copy_streaming_u32x4",
        &["ld.global.cs.v4.u32 ", "st.global.v4.u32 ", "ld.global.cs.u32 ", "st.global.u32 "],
    );
    assert_emits("mem_scale_f32x4", &["ld.global.nc.v4.f32 ", "st.global.v4.f32 "]);
    assert_emits(
        "mem_load_nc_scalars",
        &[
            "ld.global.nc.u32 ",
            "ld.global.nc.s32 ",
            "ld.global.nc.f32 ",
            "ld.global.nc.u64 ",
            "ld.global.nc.s64 ",
            "ld.global.nc.f64 ",
            "st.global.u64 ",
        ],
    );
}

#[test]
fn vector_types_are_their_lanes_aligned_to_their_size() {
    use k::vector::{F32x2, F64x2, I32x2, I32x4, U32x2, U32x4, U64x2};
    assert_eq!((size_of::<F32x4>(), align_of::<F32x4>()), (16, 16));
    assert_eq!((size_of::<F32x2>(), align_of::<F32x2>()), (8, 8));
    assert_eq!((size_of::<U32x4>(), align_of::<U32x4>()), (16, 16));
    assert_eq!((size_of::<I32x2>(), align_of::<I32x2>()), (8, 8));
    assert_eq!((size_of::<F64x2>(), align_of::<F64x2>()), (16, 16));
    assert_eq!((size_of::<U64x2>(), align_of::<U64x2>()), (16, 16));
    let v = F32x4::new(1.0, 2.0, 3.0, 4.0);
    assert_eq!(v.to_array(), [1.0, 2.0, 3.0, 4.0]);
    assert_eq!(F32x4::from_array([1.0, 2.0, 3.0, 4.0]), v);
    assert_eq!(F32x4::from([1.0, 2.0, 3.0, 4.0]), v);
    assert_eq!(I32x4::splat(-3).to_array(), [-3; 4]);
    assert_eq!(U64x2::default(), U64x2::new(0, 0));
    // Pod: the bytes are the lanes in order, as the GPU reads them.
    assert_eq!(bytemuck::cast::<F32x4, [f32; 4]>(v), [1.0, 2.0, 3.0, 4.0]);
    assert_eq!(bytemuck::bytes_of(&U32x2::new(1, 2)), [1, 0, 0, 0, 2, 0, 0, 0]);
}

/// `(kernel, PTX type)` of the volatile and acquire/release copies.
const ORDERED_KERNELS: [(&str, &str); 6] = [
    ("mem_ordered_copy_u32", "u32"),
    ("mem_ordered_copy_i32", "s32"),
    ("mem_ordered_copy_f32", "f32"),
    ("mem_ordered_copy_u64", "u64"),
    ("mem_ordered_copy_i64", "s64"),
    ("mem_ordered_copy_f64", "f64"),
];

#[test]
fn volatile_and_acquire_release_emit_their_semantics_and_scopes() {
    for (kernel, ty) in ORDERED_KERNELS {
        let mut needles = vec![format!("ld.volatile.global.{ty} "), format!("st.volatile.global.{ty} ")];
        for scope in ["cta", "gpu", "sys"] {
            needles.push(format!("ld.acquire.{scope}.global.{ty} "));
            needles.push(format!("st.release.{scope}.global.{ty} "));
        }
        assert_emits(kernel, &needles.iter().map(String::as_str).collect::<Vec<_>>());
        // Each access is its own instruction: no plain load or store of the values.
        assert_not_emits(kernel, &["ld.global.", "st.global."]);
    }
}

#[test]
fn flag_chain_polls_with_acquire_and_publishes_with_release() {
    let body = kernel_ptx("mem_flag_chain");
    let acquire = body.find("ld.acquire.gpu.global.u32 ").expect("the acquire load of the flag");
    let release = body.find("st.release.gpu.global.u32 ").expect("the release store of the flag");
    // The poll reads again on every iteration: the label before the acquire load is the
    // target of a branch after it.
    let label_start = body[..acquire].rfind("\n$L__").expect("a label before the poll") + 1;
    let label = &body[label_start..label_start + body[label_start..].find(':').unwrap()];
    assert!(body[acquire..release].contains(&format!("{label};")), "the poll is no loop:\n{body}");
    // The predecessor's total is read after the acquire; the block's results are written
    // before the release.
    let last_plain_load = body.rfind("ld.global.").expect("the plain load of the total");
    assert!(acquire < last_plain_load, "the total is read before the flag:\n{body}");
    let last_plain_store = body.rfind("st.global.").expect("the plain stores of the results");
    assert!(last_plain_store < release, "a result is written after the flag:\n{body}");
}

#[test]
fn ordered_accesses_assemble_for_sm_80_and_sm_90() {
    // The header of the check kernels' PTX and these entries alone: the whole PTX may hold
    // instructions of later architectures than sm_80.
    let header: String = ptx()
        .lines()
        .filter(|line| [".version", ".target", ".address_size"].iter().any(|d| line.starts_with(d)))
        .map(|line| format!("{line}\n"))
        .collect();
    let mut kernels = ORDERED_KERNELS.map(|(kernel, _)| kernel).to_vec();
    kernels.push("mem_flag_chain");
    let entries: String = kernels.iter().map(|kernel| format!(".visible {}\n", kernel_ptx(kernel))).collect();
    for arch in ["sm_80", "sm_90"] {
        assemble(&format!("{header}{entries}"), arch);
    }
}

#[test]
fn memory_kernels_assemble_for_sm_90() {
    assemble(ptx(), "sm_90");
}

// -------------------------------------------------------------------------------------------
// GPU: helpers
// -------------------------------------------------------------------------------------------

/// A well-mixed `u32` of `i` (deterministic test data).
fn mix(i: u32) -> u32 {
    crate::common::mix(i, 0)
}

/// A well-mixed `u64` of `i`.
fn mix64(i: u32) -> u64 {
    (u64::from(mix(i)) << 32) | u64::from(mix(i ^ 0xDEAD_BEEF))
}

/// The index ranges of the blocks of `grid_1d(n, block)`.
fn blocks(n: u32, block: u32) -> Vec<std::ops::Range<usize>> {
    (0..n.div_ceil(block)).map(|b| (b * block) as usize..((b + 1) * block).min(n) as usize).collect()
}

/// What the pair-mirroring kernels write: in each block of `ROTATE_THREADS` pairs of
/// `values` (`pairs` of them, the last block partial), pair `t` is the block's mirrored pair,
/// its two values swapped.
fn mirrored_swapped_pairs<T: Copy>(values: &[T], pairs: u32) -> Vec<T> {
    let mut expected = Vec::new();
    for r in blocks(pairs, ROTATE_THREADS) {
        for t in 0..r.len() {
            let mirror = r.start + r.len() - 1 - t;
            expected.extend([values[2 * mirror + 1], values[2 * mirror]]);
        }
    }
    expected
}

fn upload<T: DeviceRepr>(gpu: &Gpu, values: &[T]) -> CudaSlice<T> {
    gpu.stream().clone_htod(values).unwrap()
}

fn download<T: DeviceRepr + Default + Clone>(gpu: &Gpu, slice: &CudaSlice<T>) -> Vec<T> {
    gpu.synchronize().unwrap();
    gpu.stream().clone_dtoh(slice).unwrap()
}

/// The numeric types of the atomics, on the host.
trait Value: Copy + PartialEq + Debug + Default + DeviceRepr + ValidAsZeroBits {
    /// Addition as the GPU does it (wrapping for the integers).
    fn plus(self, other: Self) -> Self;
    /// Negation (wrapping for the integers).
    fn negated(self) -> Self;
    /// The bits, as a map key.
    fn key(self) -> u64;
}

macro_rules! integer_value {
    ($($t:ty),*) => {$(
        impl Value for $t {
            fn plus(self, other: Self) -> Self { self.wrapping_add(other) }
            fn negated(self) -> Self { self.wrapping_neg() }
            fn key(self) -> u64 { self as u64 }
        }
    )*};
}
integer_value!(u32, i32, u64, i64);

impl Value for f32 {
    fn plus(self, other: Self) -> Self {
        self + other
    }
    fn negated(self) -> Self {
        -self
    }
    fn key(self) -> u64 {
        u64::from(self.to_bits())
    }
}

impl Value for f64 {
    fn plus(self, other: Self) -> Self {
        self + other
    }
    fn negated(self) -> Self {
        -self
    }
    fn key(self) -> u64 {
        self.to_bits()
    }
}

fn sum<T: Value>(values: &[T]) -> T {
    values.iter().fold(T::default(), |acc, &v| acc.plus(v))
}

/// Asserts that the old values `olds[i]` returned by a `fetch_add` of `values[i]` on a location
/// starting at `initial` are some serial order of the additions ending at `total`.
#[track_caller]
fn assert_fetch_add_serialises<T: Value>(initial: T, values: &[T], olds: &[T], total: T) {
    let mut by_old: HashMap<u64, Vec<T>> = HashMap::new();
    for (&old, &value) in olds.iter().zip(values) {
        by_old.entry(old.key()).or_default().push(value);
    }
    let mut current = initial;
    for step in 0..values.len() {
        let value = by_old
            .get_mut(&current.key())
            .and_then(Vec::pop)
            .unwrap_or_else(|| panic!("step {step}: no thread saw {current:?}"));
        current = current.plus(value);
    }
    assert_eq!(current, total);
}

/// Threads per block of the atomic tests: three warps, the last block partial.
const ATOMIC_BLOCK: u32 = 96;
/// Values of the atomic tests (11 blocks of 96, the last of 40).
const ATOMIC_N: u32 = 1000;

// -------------------------------------------------------------------------------------------
// GPU: global atomics
// -------------------------------------------------------------------------------------------

/// Runs one add/sub kernel over `values` and checks every total against the host.
fn check_add_kernel<T: Value, K: ptxkit_host::Kernel>(kernel: K, values: Vec<T>)
where
    for<'a> (&'a CudaSlice<T>, u32, &'a mut CudaSlice<T>, &'a mut CudaSlice<T>, &'a mut CudaSlice<T>):
        ptxkit_host::KernelArgs<K::Params>,
{
    let gpu = gpu();
    let n = values.len() as u32;
    let ranges = blocks(n, ATOMIC_BLOCK);
    let input = upload(&gpu, &values);
    let mut totals = gpu.stream().alloc_zeros::<T>(6).unwrap();
    let mut block_totals = gpu.stream().alloc_zeros::<T>(3 * ranges.len()).unwrap();
    let mut olds = gpu.stream().alloc_zeros::<T>(values.len()).unwrap();
    gpu.launch(kernel, grid_1d(n, ATOMIC_BLOCK), (&input, n, &mut totals, &mut block_totals, &mut olds))
        .unwrap();
    let (totals, block_totals, olds) =
        (download(&gpu, &totals), download(&gpu, &block_totals), download(&gpu, &olds));
    let total = sum(&values);
    assert_eq!(totals, [total, total, total, total, total.negated(), total.negated()], "{}", K::NAME);
    for (b, range) in ranges.iter().enumerate() {
        let block_total = sum(&values[range.clone()]);
        assert_eq!(block_totals[3 * b..3 * b + 3], [block_total, block_total, block_total.negated()]);
    }
    assert_fetch_add_serialises(T::default(), &values, &olds, total);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_atomic_add_sub_every_type_and_scope() {
    // Positive values, so that the partial sums a fetch_add returns are distinct; the floats'
    // are small integers, whose sums are exact in any order.
    let small = |i: u32| mix(i) % 1000 + 1;
    check_add_kernel(k::mem_atomic_add_u32, (0..ATOMIC_N).map(small).collect::<Vec<u32>>());
    check_add_kernel(k::mem_atomic_add_i32, (0..ATOMIC_N).map(|i| small(i) as i32).collect::<Vec<i32>>());
    // Full-range 64-bit values: the sums wrap.
    check_add_kernel(k::mem_atomic_add_u64, (0..ATOMIC_N).map(mix64).collect::<Vec<u64>>());
    check_add_kernel(k::mem_atomic_add_i64, (0..ATOMIC_N).map(|i| mix64(i) as i64).collect::<Vec<i64>>());
    check_add_kernel(
        k::mem_atomic_add_f32,
        (0..ATOMIC_N).map(|i| (mix(i) % 7 + 1) as f32).collect::<Vec<f32>>(),
    );
    check_add_kernel(
        k::mem_atomic_add_f64,
        (0..ATOMIC_N).map(|i| f64::from(mix(i) % 1000 + 1) * 0.5).collect::<Vec<f64>>(),
    );
}

/// Runs a min/max or bitwise kernel: `results` and `block_results` start at the given values
/// and must end at the expected ones.
macro_rules! check_slots_kernel {
    ($kernel:expr, $values:expr, $initial:expr, $block_initial:expr, $expected:expr, $block_expected:expr) => {{
        let gpu = gpu();
        let values = $values;
        let n = values.len() as u32;
        let ranges = blocks(n, ATOMIC_BLOCK);
        let input = upload(&gpu, &values);
        let mut results = upload(&gpu, &$initial);
        let block_initial: Vec<_> = ranges.iter().flat_map(|_| $block_initial).collect();
        let mut block_results = upload(&gpu, &block_initial);
        gpu.launch($kernel, grid_1d(n, ATOMIC_BLOCK), (&input, n, &mut results, &mut block_results)).unwrap();
        assert_eq!(download(&gpu, &results), $expected(&values[..]));
        let block_results = download(&gpu, &block_results);
        let per_block = block_results.len() / ranges.len();
        for (b, range) in ranges.iter().enumerate() {
            assert_eq!(
                block_results[per_block * b..per_block * (b + 1)],
                $block_expected(&values[range.clone()])
            );
        }
    }};
}

macro_rules! check_min_max {
    ($kernel:expr, $t:ty, $value:expr) => {{
        let values: Vec<$t> = (0..ATOMIC_N).map($value).collect();
        let (lo, hi) = (<$t>::MAX, <$t>::MIN);
        check_slots_kernel!(
            $kernel,
            values,
            vec![lo, lo, hi, hi, lo, hi],
            [lo, hi],
            |v: &[$t]| {
                let (min, max) = (*v.iter().min().unwrap(), *v.iter().max().unwrap());
                vec![min, min, max, max, min, max]
            },
            |v: &[$t]| vec![*v.iter().min().unwrap(), *v.iter().max().unwrap()]
        );
    }};
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_atomic_min_max_every_integer_type() {
    check_min_max!(k::mem_atomic_min_max_u32, u32, mix);
    check_min_max!(k::mem_atomic_min_max_i32, i32, |i| mix(i) as i32);
    check_min_max!(k::mem_atomic_min_max_u64, u64, mix64);
    check_min_max!(k::mem_atomic_min_max_i64, i64, |i| mix64(i) as i64);
}

macro_rules! check_bitwise {
    ($kernel:expr, $t:ty, $value:expr) => {{
        // A common bit survives the and; the rest is mixed.
        let values: Vec<$t> = (0..ATOMIC_N).map(|i| $value(i) | 0x0100_0001).collect();
        let fold = |v: &[$t]| {
            let and = v.iter().fold(!0, |a, &x| a & x);
            let or = v.iter().fold(0, |a, &x| a | x);
            let xor = v.iter().fold(0, |a, &x| a ^ x);
            (and, or, xor)
        };
        check_slots_kernel!(
            $kernel,
            values,
            vec![!0 as $t, 0, 0, !0, 0, 0],
            [!0 as $t, 0, 0],
            |v: &[$t]| {
                let (and, or, xor) = fold(v);
                vec![and, or, xor, and, or, xor]
            },
            |v: &[$t]| {
                let (and, or, xor) = fold(v);
                vec![and, or, xor]
            }
        );
    }};
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_atomic_bitwise_every_integer_type() {
    check_bitwise!(k::mem_atomic_bitwise_u32, u32, mix);
    check_bitwise!(k::mem_atomic_bitwise_i32, i32, |i| mix(i) as i32);
    check_bitwise!(k::mem_atomic_bitwise_u64, u64, mix64);
    check_bitwise!(k::mem_atomic_bitwise_i64, i64, |i| mix64(i) as i64);
}

/// Runs one exchange kernel: the old values and the last value form the initial value and all
/// the values (a permutation); the other slots end at one of their writers' values.
fn check_exchange_kernel<T: Value, K: ptxkit_host::Kernel>(kernel: K, values: Vec<T>, initial: T)
where
    for<'a> (&'a CudaSlice<T>, u32, &'a mut CudaSlice<T>, &'a mut CudaSlice<T>, &'a mut CudaSlice<T>):
        ptxkit_host::KernelArgs<K::Params>,
{
    let gpu = gpu();
    let n = values.len() as u32;
    let ranges = blocks(n, ATOMIC_BLOCK);
    let input = upload(&gpu, &values);
    let mut slots = upload(&gpu, &[initial, initial]);
    let mut block_slots = upload(&gpu, &vec![initial; ranges.len()]);
    let mut olds = gpu.stream().alloc_zeros::<T>(values.len()).unwrap();
    gpu.launch(kernel, grid_1d(n, ATOMIC_BLOCK), (&input, n, &mut slots, &mut block_slots, &mut olds))
        .unwrap();
    let (slots, block_slots, olds) =
        (download(&gpu, &slots), download(&gpu, &block_slots), download(&gpu, &olds));
    let mut seen: Vec<u64> = olds.iter().chain([&slots[0]]).map(|v| v.key()).collect();
    let mut expected: Vec<u64> = values.iter().chain([&initial]).map(|v| v.key()).collect();
    seen.sort_unstable();
    expected.sort_unstable();
    assert_eq!(seen, expected, "{}: olds and last value are not a permutation", K::NAME);
    assert!(values.contains(&slots[1]), "{}: system slot {:?}", K::NAME, slots[1]);
    for (b, range) in ranges.iter().enumerate() {
        assert!(values[range.clone()].contains(&block_slots[b]), "{}: block {b}", K::NAME);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_atomic_exchange_every_type() {
    // Distinct values (i + 1 in each type), the initial value 0 none of them.
    check_exchange_kernel(k::mem_atomic_exchange_u32, (1..=ATOMIC_N).collect::<Vec<u32>>(), 0);
    check_exchange_kernel(
        k::mem_atomic_exchange_i32,
        (1..=ATOMIC_N).map(|i| -(i as i32)).collect::<Vec<i32>>(),
        0,
    );
    check_exchange_kernel(
        k::mem_atomic_exchange_u64,
        (1..=ATOMIC_N).map(|i| u64::from(i) << 40).collect::<Vec<u64>>(),
        0,
    );
    check_exchange_kernel(
        k::mem_atomic_exchange_i64,
        (1..=ATOMIC_N).map(|i| -(i64::from(i) << 40)).collect::<Vec<i64>>(),
        0,
    );
    check_exchange_kernel(
        k::mem_atomic_exchange_f32,
        (1..=ATOMIC_N).map(|i| i as f32 + 0.5).collect::<Vec<f32>>(),
        0.0,
    );
    check_exchange_kernel(
        k::mem_atomic_exchange_f64,
        (1..=ATOMIC_N).map(|i| f64::from(i) * 1e-3).collect::<Vec<f64>>(),
        0.0,
    );
}

/// Runs one CAS-loop kernel: every sum is the wrapping sum of its threads' values.
fn check_cas_kernel<T: Value, K: ptxkit_host::Kernel>(kernel: K, values: Vec<T>)
where
    for<'a> (&'a CudaSlice<T>, u32, &'a mut CudaSlice<T>, &'a mut CudaSlice<T>):
        ptxkit_host::KernelArgs<K::Params>,
{
    let gpu = gpu();
    let n = values.len() as u32;
    let ranges = blocks(n, ATOMIC_BLOCK);
    let input = upload(&gpu, &values);
    let mut sums = gpu.stream().alloc_zeros::<T>(2).unwrap();
    let mut block_sums = gpu.stream().alloc_zeros::<T>(ranges.len()).unwrap();
    gpu.launch(kernel, grid_1d(n, ATOMIC_BLOCK), (&input, n, &mut sums, &mut block_sums)).unwrap();
    let total = sum(&values);
    assert_eq!(download(&gpu, &sums), [total, total], "{}", K::NAME);
    let expected: Vec<T> = ranges.iter().map(|r| sum(&values[r.clone()])).collect();
    assert_eq!(download(&gpu, &block_sums), expected, "{}", K::NAME);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_atomic_compare_exchange_loops_sum_every_integer_type() {
    check_cas_kernel(k::mem_atomic_cas_u32, (0..ATOMIC_N).map(mix).collect::<Vec<u32>>());
    check_cas_kernel(k::mem_atomic_cas_i32, (0..ATOMIC_N).map(|i| mix(i) as i32).collect::<Vec<i32>>());
    check_cas_kernel(k::mem_atomic_cas_u64, (0..ATOMIC_N).map(mix64).collect::<Vec<u64>>());
    check_cas_kernel(k::mem_atomic_cas_i64, (0..ATOMIC_N).map(|i| mix64(i) as i64).collect::<Vec<i64>>());
}

/// `count` wrapping increments (`atomicInc`) from 0 with wrap value `limit`.
fn increments(count: usize, limit: u32) -> u32 {
    (0..count).fold(0, |old, _| if old >= limit { 0 } else { old + 1 })
}

/// `count` wrapping decrements (`atomicDec`) from 0 with wrap value `limit`.
fn decrements(count: usize, limit: u32) -> u32 {
    (0..count).fold(0, |old, _| if old == 0 || old > limit { limit } else { old - 1 })
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_atomic_inc_dec_wrap_at_the_limit() {
    let gpu = gpu();
    let (n, limit) = (ATOMIC_N, 37);
    let ranges = blocks(n, ATOMIC_BLOCK);
    let mut counters = gpu.stream().alloc_zeros::<u32>(6).unwrap();
    let mut block_counters = gpu.stream().alloc_zeros::<u32>(2 * ranges.len()).unwrap();
    let mut olds = gpu.stream().alloc_zeros::<u32>(n as usize).unwrap();
    gpu.launch(
        k::mem_atomic_inc_dec_u32,
        grid_1d(n, ATOMIC_BLOCK),
        (n, limit, &mut counters, &mut block_counters, &mut olds),
    )
    .unwrap();
    let (up, down) = (increments(n as usize, limit), decrements(n as usize, limit));
    assert_eq!(download(&gpu, &counters), [up, up, up, down, down, down]);
    let expected: Vec<u32> =
        ranges.iter().flat_map(|r| [increments(r.len(), limit), decrements(r.len(), limit)]).collect();
    assert_eq!(download(&gpu, &block_counters), expected);
    // The olds of the increments: 0, 1, ..., limit, 0, 1, ... in some order.
    let mut olds = download(&gpu, &olds);
    olds.sort_unstable();
    let mut expected: Vec<u32> = (0..n).map(|j| j % (limit + 1)).collect();
    expected.sort_unstable();
    assert_eq!(olds, expected);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_legacy_atomics_sum_min_max() {
    let gpu = gpu();
    let values: Vec<u32> = (0..ATOMIC_N).map(|i| mix(i) % 1000 + 1).collect();
    let input = upload(&gpu, &values);
    let mut slots = upload(&gpu, &[0, u32::MAX, 0]);
    let mut total = gpu.stream().alloc_zeros::<f32>(1).unwrap();
    let mut olds = gpu.stream().alloc_zeros::<u32>(values.len()).unwrap();
    gpu.launch(
        k::mem_legacy_atomics,
        grid_1d(ATOMIC_N, ATOMIC_BLOCK),
        (&input, ATOMIC_N, &mut slots, &mut total, &mut olds),
    )
    .unwrap();
    let sum_u32: u32 = values.iter().sum();
    let (min, max) = (*values.iter().min().unwrap(), *values.iter().max().unwrap());
    assert_eq!(download(&gpu, &slots), [sum_u32, min, max]);
    // Integers below 2^24: exact in f32 in any order.
    assert_eq!(download(&gpu, &total), [sum_u32 as f32]);
    assert_fetch_add_serialises(0, &values, &download(&gpu, &olds), sum_u32);
}

// -------------------------------------------------------------------------------------------
// GPU: shared memory
// -------------------------------------------------------------------------------------------

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_histogram_shared_counts_match_host() {
    let gpu = gpu();
    let n = 100_003u32;
    let values: Vec<u32> = (0..n).map(mix).collect();
    let input = upload(&gpu, &values);
    let mut bins = gpu.stream().alloc_zeros::<u32>(256).unwrap();
    // 37 blocks of 200 threads (6¼ warps): a grid-stride loop over the values.
    let cfg = LaunchConfig { grid_dim: (37, 1, 1), block_dim: (200, 1, 1), shared_mem_bytes: 0 };
    gpu.launch(k::mem_histogram_shared, cfg, (&input, n, &mut bins)).unwrap();
    let mut expected = vec![0u32; 256];
    for v in &values {
        expected[(v & 0xff) as usize] += 1;
    }
    assert_eq!(download(&gpu, &bins), expected);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_shared_atomics_u32_every_operation() {
    let gpu = gpu();
    let limit = 5;
    let values: Vec<u32> = (0..ATOMIC_N).map(mix).collect();
    let ranges = blocks(ATOMIC_N, ATOMIC_BLOCK);
    let input = upload(&gpu, &values);
    let mut results = gpu.stream().alloc_zeros::<u32>(k::SHARED_ATOMIC_SLOTS * ranges.len()).unwrap();
    gpu.launch(
        k::mem_shared_atomics_u32,
        grid_1d(ATOMIC_N, ATOMIC_BLOCK),
        (&input, ATOMIC_N, limit, &mut results),
    )
    .unwrap();
    let results = download(&gpu, &results);
    for (b, range) in ranges.iter().enumerate() {
        let v = &values[range.clone()];
        let got = &results[k::SHARED_ATOMIC_SLOTS * b..k::SHARED_ATOMIC_SLOTS * (b + 1)];
        let total = v.iter().fold(0u32, |a, &x| a.wrapping_add(x));
        let expected = [
            total,
            *v.iter().min().unwrap(),
            *v.iter().max().unwrap(),
            increments(v.len(), limit),
            decrements(v.len(), limit),
            v.iter().fold(u32::MAX, |a, &x| a & x),
            v.iter().fold(0, |a, &x| a | x),
            v.iter().fold(0, |a, &x| a ^ x),
            got[8],
            total,
            total.wrapping_neg(),
        ];
        assert_eq!(got, expected, "block {b}");
        assert!(v.contains(&got[8]), "block {b}: exchanged {}", got[8]);
    }
}

/// The host's (min, max) of a block's values.
type MinMax<T> = fn(&[T]) -> (T, T);

/// Runs one of the other shared-atomic kernels: per block sum, −sum, an exchanged value and
/// (integers) min, max and the CAS-loop sum.
fn check_shared_atomics<T: Value, K: ptxkit_host::Kernel>(
    kernel: K,
    values: Vec<T>,
    min_max: Option<MinMax<T>>,
) where
    for<'a> (&'a CudaSlice<T>, u32, &'a mut CudaSlice<T>): ptxkit_host::KernelArgs<K::Params>,
{
    let gpu = gpu();
    let n = values.len() as u32;
    let ranges = blocks(n, ATOMIC_BLOCK);
    let input = upload(&gpu, &values);
    let mut results = gpu.stream().alloc_zeros::<T>(6 * ranges.len()).unwrap();
    gpu.launch(kernel, grid_1d(n, ATOMIC_BLOCK), (&input, n, &mut results)).unwrap();
    let results = download(&gpu, &results);
    for (b, range) in ranges.iter().enumerate() {
        let v = &values[range.clone()];
        let got = &results[6 * b..6 * b + 6];
        let total = sum(v);
        let (min, max, cas) = match min_max {
            Some(f) => {
                let (min, max) = f(v);
                (min, max, total)
            }
            // The floats have no min/max atomics: those slots keep the block's first value.
            None => (v[0], v[0], T::default()),
        };
        assert_eq!(got, [total, total.negated(), got[2], min, max, cas], "{} block {b}", K::NAME);
        assert!(v.contains(&got[2]), "{} block {b}: exchanged {:?}", K::NAME, got[2]);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_shared_atomics_i32_u64_i64_f32_f64() {
    fn min_max<T: Ord + Copy>(v: &[T]) -> (T, T) {
        (*v.iter().min().unwrap(), *v.iter().max().unwrap())
    }
    check_shared_atomics(
        k::mem_shared_atomics_i32,
        (0..ATOMIC_N).map(|i| mix(i) as i32).collect(),
        Some(min_max::<i32>),
    );
    check_shared_atomics(k::mem_shared_atomics_u64, (0..ATOMIC_N).map(mix64).collect(), Some(min_max::<u64>));
    check_shared_atomics(
        k::mem_shared_atomics_i64,
        (0..ATOMIC_N).map(|i| mix64(i) as i64).collect(),
        Some(min_max::<i64>),
    );
    // Small integers: exact float sums in any order.
    check_shared_atomics(
        k::mem_shared_atomics_f32,
        (0..ATOMIC_N).map(|i| (mix(i) % 100) as f32).collect(),
        None,
    );
    check_shared_atomics(
        k::mem_shared_atomics_f64,
        (0..ATOMIC_N).map(|i| f64::from(mix(i) % 1000) * 0.25).collect(),
        None,
    );
}

/// Threads per block of the shared round trips (below their 128 limit, not a warp multiple).
const ROTATE_THREADS: u32 = 100;
/// Values of the shared round trips: a last block of one thread.
const ROTATE_N: u32 = 1001;

/// Runs one rotate kernel on `values`: `output[i]` is the value of the next thread of `i`'s
/// block, cyclically.
fn check_rotate<
    T: DeviceRepr + ValidAsZeroBits + Default + Clone + PartialEq + Debug,
    K: ptxkit_host::Kernel,
>(
    kernel: K,
    values: Vec<T>,
) where
    for<'a> (&'a CudaSlice<T>, u32, &'a mut CudaSlice<T>): ptxkit_host::KernelArgs<K::Params>,
{
    let gpu = gpu();
    let n = values.len() as u32;
    let input = upload(&gpu, &values);
    let mut output = gpu.stream().alloc_zeros::<T>(values.len()).unwrap();
    gpu.launch(kernel, grid_1d(n, ROTATE_THREADS), (&input, n, &mut output)).unwrap();
    let expected: Vec<T> = blocks(n, ROTATE_THREADS)
        .into_iter()
        .flat_map(|r| {
            let len = r.len();
            (0..len).map(move |t| r.start + (t + 1) % len)
        })
        .map(|j| values[j].clone())
        .collect();
    assert_eq!(download(&gpu, &output), expected, "{}", K::NAME);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_shared_array_round_trips_every_size() {
    let range = 0..ROTATE_N;
    check_rotate(k::mem_shared_rotate_u8, range.clone().map(|i| mix(i) as u8).collect());
    check_rotate(k::mem_shared_rotate_u16, range.clone().map(|i| mix(i) as u16).collect());
    check_rotate(
        k::mem_shared_rotate_f32,
        range.clone().map(|i| f32::from_bits(mix(i) & 0x7f7f_ffff)).collect(),
    );
    check_rotate(k::mem_shared_rotate_f64, range.clone().map(|i| i as f64 * 1.25 - 7.0).collect());
    check_rotate(
        k::mem_shared_rotate_f32x4,
        range.clone().map(|i| F32x4::new(i as f32, -(i as f32), 0.5, mix(i) as f32)).collect(),
    );
    check_rotate(
        k::mem_shared_rotate_u8x3,
        range.clone().map(|i| mix(i).to_le_bytes()[..3].try_into().unwrap()).collect::<Vec<[u8; 3]>>(),
    );
    check_rotate(
        k::mem_shared_rotate_u16x3,
        range.clone().map(|i| [i as u16, mix(i) as u16, 7]).collect::<Vec<[u16; 3]>>(),
    );
    check_rotate(k::mem_shared_rotate_u32x3, range.map(|i| [i, mix(i), !i]).collect::<Vec<[u32; 3]>>());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_shared_array_vectors_mirror_blocks() {
    let gpu = gpu();
    // f32 quads: 1003 quads in blocks of 100 threads (the last of 3).
    let quads = 1003u32;
    let values: Vec<f32> = (0..4 * quads).map(|i| i as f32 * 0.5).collect();
    let input = upload(&gpu, &values);
    let mut output = gpu.stream().alloc_zeros::<f32>(values.len()).unwrap();
    gpu.launch(k::mem_shared_vectors_f32, grid_1d(quads, ROTATE_THREADS), (&input, 4 * quads, &mut output))
        .unwrap();
    let mut expected = Vec::new();
    for r in blocks(quads, ROTATE_THREADS) {
        for t in 0..r.len() {
            let mirror = r.start + r.len() - 1 - t;
            expected.extend(values[4 * mirror..4 * mirror + 4].iter().rev());
        }
    }
    assert_eq!(download(&gpu, &output), expected);

    // f64 pairs: 1003 pairs.
    let values: Vec<f64> = (0..2 * quads).map(|i| f64::from(i) * 0.25 - 3.0).collect();
    let input = upload(&gpu, &values);
    let mut output = gpu.stream().alloc_zeros::<f64>(values.len()).unwrap();
    gpu.launch(k::mem_shared_vectors_f64, grid_1d(quads, ROTATE_THREADS), (&input, 2 * quads, &mut output))
        .unwrap();
    assert_eq!(download(&gpu, &output), mirrored_swapped_pairs(&values, quads));

    // f32 pairs through `SharedF32::store2` / `load2`: 1003 pairs.
    let values: Vec<f32> = (0..2 * quads).map(|i| i as f32 * 0.75 - 5.0).collect();
    let input = upload(&gpu, &values);
    let mut output = gpu.stream().alloc_zeros::<f32>(values.len()).unwrap();
    gpu.launch(k::mem_shared_f32_pairs, grid_1d(quads, ROTATE_THREADS), (&input, 2 * quads, &mut output))
        .unwrap();
    assert_eq!(download(&gpu, &output), mirrored_swapped_pairs(&values, quads));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_shared_array_generic_pointer_reads_the_same_memory() {
    let gpu = gpu();
    // One block of 45 threads (a partial second warp).
    let threads = 45u32;
    let mut output = gpu.stream().alloc_zeros::<u32>(threads as usize).unwrap();
    gpu.launch(k::mem_shared_generic_pointer, grid_1d(threads, threads), (&mut output,)).unwrap();
    let expected: Vec<u32> = (0..threads).map(|t| 3 * (threads - 1 - t)).collect();
    assert_eq!(download(&gpu, &output), expected);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_dynamic_shared_reverse_u64() {
    let gpu = gpu();
    let (n, threads) = (1001u32, 200u32);
    let values: Vec<u64> = (0..n).map(mix64).collect();
    let input = upload(&gpu, &values);
    let mut output = gpu.stream().alloc_zeros::<u64>(values.len()).unwrap();
    // The launch gets the kernel's declared dynamic shared memory (DYNAMIC_REVERSE_BYTES).
    gpu.launch(k::mem_dynamic_shared_reverse_u64, grid_1d(n, threads), (&input, n, &mut output)).unwrap();
    let expected: Vec<u64> =
        blocks(n, threads).into_iter().flat_map(|r| r.rev()).map(|j| values[j]).collect();
    assert_eq!(download(&gpu, &output), expected);
}

// -------------------------------------------------------------------------------------------
// GPU: global memory
// -------------------------------------------------------------------------------------------

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_vector_copies_odd_lengths_with_scalar_tail() {
    let gpu = gpu();
    for n in [1u32, 3, 4, 5, 6, 7, 1001, 4099] {
        let values: Vec<f32> = (0..n).map(|i| f32::from_bits(mix(i) & 0x7f7f_ffff)).collect();
        let input = upload(&gpu, &values);
        for (name, kernel_is_nc) in [("mem_copy_f32x4", false), ("mem_copy_nc_f32x4", true)] {
            let mut output = upload(&gpu, &vec![-1.0f32; n as usize]);
            let cfg = grid_1d(n / 4 + 3, 128);
            if kernel_is_nc {
                gpu.launch(k::mem_copy_nc_f32x4, cfg, (&input, &mut output, n)).unwrap();
            } else {
                gpu.launch(k::mem_copy_f32x4, cfg, (&input, &mut output, n)).unwrap();
            }
            assert_eq!(download(&gpu, &output), values, "{name}, n = {n}");
        }

        let values: Vec<u32> = (0..n).map(mix).collect();
        let input = upload(&gpu, &values);
        let mut output = upload(&gpu, &vec![0xFFFF_FFFFu32; n as usize]);
        gpu.launch(k::mem_copy_streaming_u32x4, grid_1d(n / 4 + 3, 128), (&input, &mut output, n)).unwrap();
        assert_eq!(download(&gpu, &output), values, "mem_copy_streaming_u32x4, n = {n}");

        let values: Vec<f64> = (0..n).map(|i| f64::from_bits(mix64(i) & 0x7fef_ffff_ffff_ffff)).collect();
        let input = upload(&gpu, &values);
        let mut output = upload(&gpu, &vec![-1.0f64; n as usize]);
        gpu.launch(k::mem_copy_nc_f64x2, grid_1d(n / 2 + 1, 96), (&input, &mut output, n)).unwrap();
        assert_eq!(download(&gpu, &output), values, "mem_copy_nc_f64x2, n = {n}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_host_allocated_f32x4_slices_through_typed_launch() {
    let gpu = gpu();
    let n = 999u32;
    let values: Vec<F32x4> = (0..n).map(|i| F32x4::new(i as f32, 1.0, -(i as f32), 0.25)).collect();
    // `CudaSlice<F32x4>`: `clone_htod` needs `DeviceRepr`, `alloc_zeros` `ValidAsZeroBits`.
    let input: CudaSlice<F32x4> = upload(&gpu, &values);
    let mut output: CudaSlice<F32x4> = gpu.stream().alloc_zeros(n as usize).unwrap();
    let offset = F32x4::new(1.0, 2.0, 3.0, 4.0);
    gpu.launch(k::mem_scale_f32x4, grid_1d(n, 128), (&input, n, 2.0f32, offset, &mut output)).unwrap();
    let expected: Vec<F32x4> = values
        .iter()
        .map(|v| {
            let [a, b, c, d] = v.to_array();
            F32x4::new(2.0 * a + 1.0, 2.0 * b + 2.0, 2.0 * c + 3.0, 2.0 * d + 4.0)
        })
        .collect();
    assert_eq!(download(&gpu, &output), expected);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_load_nc_every_scalar_type() {
    let gpu = gpu();
    let n = 777u32;
    let a: Vec<u32> = (0..n).map(mix).collect();
    let b: Vec<i32> = (0..n).map(|i| mix(i + n) as i32).collect();
    let c: Vec<f32> = (0..n).map(|i| i as f32 * -0.75).collect();
    let d: Vec<u64> = (0..n).map(mix64).collect();
    let e: Vec<i64> = (0..n).map(|i| mix64(i + n) as i64).collect();
    let f: Vec<f64> = (0..n).map(|i| f64::from(i) * 1e-3).collect();
    let (ga, gb, gc, gd, ge, gf) = (
        upload(&gpu, &a),
        upload(&gpu, &b),
        upload(&gpu, &c),
        upload(&gpu, &d),
        upload(&gpu, &e),
        upload(&gpu, &f),
    );
    let mut out = gpu.stream().alloc_zeros::<u64>(n as usize).unwrap();
    gpu.launch(k::mem_load_nc_scalars, grid_1d(n, 160), (&ga, &gb, &gc, &gd, &ge, &gf, n, &mut out)).unwrap();
    let expected: Vec<u64> = (0..n as usize)
        .map(|i| {
            u64::from(a[i])
                ^ b[i] as i64 as u64
                ^ u64::from(c[i].to_bits())
                ^ d[i]
                ^ e[i] as u64
                ^ f[i].to_bits()
        })
        .collect();
    assert_eq!(download(&gpu, &out), expected);
}

/// Runs one volatile/acquire/release copy kernel: each of its four outputs is `values`.
fn check_ordered_copy<T, K: ptxkit_host::Kernel>(kernel: K, values: Vec<T>)
where
    T: DeviceRepr + ValidAsZeroBits + Default + Clone + PartialEq + Debug,
    for<'a> (&'a CudaSlice<T>, u32, &'a mut CudaSlice<T>): ptxkit_host::KernelArgs<K::Params>,
{
    let gpu = gpu();
    let n = values.len() as u32;
    let input = upload(&gpu, &values);
    let mut out = gpu.stream().alloc_zeros::<T>(4 * values.len()).unwrap();
    gpu.launch(kernel, grid_1d(n, 160), (&input, n, &mut out)).unwrap();
    let out = download(&gpu, &out);
    for (form, copy) in ["volatile", "block", "device", "system"].iter().zip(out.chunks(values.len())) {
        assert_eq!(copy, values, "{} {form}", K::NAME);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_volatile_and_acquire_release_copy_every_type() {
    let n = 1001u32;
    check_ordered_copy(k::mem_ordered_copy_u32, (0..n).map(mix).collect());
    check_ordered_copy(k::mem_ordered_copy_i32, (0..n).map(|i| mix(i) as i32).collect());
    check_ordered_copy(k::mem_ordered_copy_f32, (0..n).map(|i| i as f32 * -0.5).collect());
    check_ordered_copy(k::mem_ordered_copy_u64, (0..n).map(mix64).collect());
    check_ordered_copy(k::mem_ordered_copy_i64, (0..n).map(|i| mix64(i) as i64).collect());
    check_ordered_copy(k::mem_ordered_copy_f64, (0..n).map(|i| f64::from(i) * 1e-3 - 0.25).collect());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_flag_chain_passes_every_prefix() {
    let gpu = gpu();
    // More blocks than an H100 or H200 keeps resident at once, so blocks wait on blocks that
    // ran earlier, as in a look-back scan.
    let (blocks, chunk) = (5000u32, 37u32);
    let values: Vec<u32> = (0..blocks * chunk).map(mix).collect();
    let input = upload(&gpu, &values);
    let mut tickets = gpu.stream().alloc_zeros::<u32>(1).unwrap();
    let mut flags = gpu.stream().alloc_zeros::<u32>(blocks as usize).unwrap();
    let mut totals = gpu.stream().alloc_zeros::<u32>(blocks as usize).unwrap();
    let mut prefixes = gpu.stream().alloc_zeros::<u32>(blocks as usize).unwrap();
    let cfg = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (64, 1, 1), shared_mem_bytes: 0 };
    gpu.launch(k::mem_flag_chain, cfg, (&input, chunk, &mut tickets, &mut flags, &mut totals, &mut prefixes))
        .unwrap();
    let mut expected = Vec::new();
    let mut running = 0u32;
    for block in values.chunks(chunk as usize) {
        expected.push(running);
        running = block.iter().fold(running, |sum, &v| sum.wrapping_add(v));
    }
    assert_eq!(download(&gpu, &prefixes), expected);
    assert_eq!(download(&gpu, &totals).last(), Some(&running));
    assert_eq!(download(&gpu, &flags), vec![1; blocks as usize]);
}
