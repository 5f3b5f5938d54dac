//! Checks: generic kernels instantiated for named types (`#[kernel(instantiate(...))]`). PTX
//! tests: one entry point per instance with the instance's types, launch bounds and shared
//! array size, all assembling. Host tests: each instance's handle has its own name and
//! parameter types (checked at compile time here) and dynamic shared memory. GPU tests
//! (`--ignored`): the instances' results against the host's.

use std::fmt::Debug;

use ptxkit_check::KERNELS;
use ptxkit_check_kernels::generic as k;
use ptxkit_host::cudarc::driver::{CudaSlice, DeviceRepr, ValidAsZeroBits};
use ptxkit_host::{Kernel, LaunchBounds, Param, grid_1d};

use crate::common::{assemble, assert_emits, assert_not_emits, gpu, kernel_ptx, ptx};

/// Every instance of the check kernels' generic kernels.
const INSTANCES: [&str; 7] = [
    "generic_reverse_f32",
    "generic_reverse_f64",
    "generic_reverse_u16",
    "generic_scale_f32",
    "generic_scale_i32",
    "generic_gather_f32_4",
    "generic_gather_u64_3",
];

// -------------------------------------------------------------------------------------------
// PTX
// -------------------------------------------------------------------------------------------

#[test]
fn each_instance_is_an_entry_point_in_the_kernel_table() {
    for name in INSTANCES {
        kernel_ptx(name);
        assert!(KERNELS.kernels.iter().any(|info| info.name == name), "{name} missing from the kernel table");
    }
    // The generic function itself is no entry point.
    for generic in ["generic_reverse", "generic_scale", "generic_gather"] {
        assert!(!ptx().contains(&format!(".entry {generic}(")), "{generic} is an entry point");
    }
    for name in ["generic_reverse_f32", "generic_reverse_f64", "generic_reverse_u16"] {
        assert_emits(name, &[".maxntid 256, 1, 1"]);
    }
    assert_emits("generic_gather_u64_3", &[".maxntid 128, 1, 1"]);
    assert_not_emits("generic_scale_f32", &[".maxntid"]);
}

#[test]
fn each_instance_has_its_types_and_its_own_shared_tile() {
    // One `.shared` array per entry point, of the instance's size, under the one name.
    for (name, bytes, width) in [
        ("generic_reverse_f32", 1024, "b32"),
        ("generic_reverse_f64", 2048, "b64"),
        ("generic_reverse_u16", 512, "b16"),
    ] {
        assert_emits(
            name,
            &[
                &format!(".shared .align 16 .b8 generic_reverse_tile[{bytes}];"),
                &format!("st.shared.{width} "),
                &format!("ld.shared.{width} "),
            ],
        );
    }
    assert_emits("generic_scale_f32", &["mul.rn.f32"]);
    assert_emits("generic_scale_i32", &["mul.lo.s32"]);
    assert_not_emits("generic_scale_i32", &["mul.rn.f32"]);
    assert_emits("generic_gather_f32_4", &["ld.global.b32", "st.global.b32"]);
    assert_emits("generic_gather_u64_3", &["ld.global.b64", "st.global.b64"]);
}

#[test]
fn generic_instances_assemble_for_sm_80_and_sm_90() {
    for arch in ["sm_80", "sm_90"] {
        assemble(ptx(), arch);
    }
}

// -------------------------------------------------------------------------------------------
// Host handles
// -------------------------------------------------------------------------------------------

/// Compiles only if `K`'s parameter tuple is `P`.
fn params_are<P, K: Kernel<Params = P>>(_: K) {}

#[test]
fn each_instance_has_its_own_handle_and_parameter_types() {
    params_are::<(*const f32, u32, *mut f32), _>(k::generic_reverse_f32);
    params_are::<(*const f64, u32, *mut f64), _>(k::generic_reverse_f64);
    params_are::<(*const u16, u32, *mut u16), _>(k::generic_reverse_u16);
    params_are::<(*const u64, *mut u64, u32), _>(k::generic_gather_u64_3);
    params_are::<(k::Input<i32>, k::Output<i32>, i32), _>(k::generic_scale_i32);
    assert_eq!(k::generic_reverse_f64::NAME, "generic_reverse_f64");
    assert_eq!(k::generic_scale_f32::NAME, "generic_scale_f32");
    assert_eq!(k::generic_reverse_u16::LAUNCH_BOUNDS, Some(LaunchBounds { max_threads: 256, min_blocks: 1 }));
    // A safe instance: each slice a pointer and a length.
    assert_eq!(
        k::generic_scale_f32::PARAMS,
        [
            Param { name: "x", size: 8, align: 8 },
            Param { name: "x.len", size: 8, align: 8 },
            Param { name: "y", size: 8, align: 8 },
            Param { name: "y.len", size: 8, align: 8 },
            Param { name: "a", size: 4, align: 4 },
        ]
    );
    // `dynamic_shared = (128 * STRIDE * size_of::<T>()) as u32`, for each instance's T and STRIDE.
    assert_eq!(k::generic_gather_f32_4::DYNAMIC_SHARED_BYTES, 128 * 4 * 4);
    assert_eq!(k::generic_gather_u64_3::DYNAMIC_SHARED_BYTES, 128 * 3 * 8);
}

// -------------------------------------------------------------------------------------------
// GPU
// -------------------------------------------------------------------------------------------

/// Runs one instance of `generic_reverse` on `values` in blocks of 200: each block's run
/// reversed.
fn check_reverse<T, K: Kernel>(kernel: K, values: Vec<T>)
where
    T: DeviceRepr + ValidAsZeroBits + Default + Clone + PartialEq + Debug,
    for<'a> (&'a CudaSlice<T>, u32, &'a mut CudaSlice<T>): ptxkit_host::KernelArgs<K::Params>,
{
    let gpu = gpu();
    let n = values.len() as u32;
    let input = gpu.stream().clone_htod(&values).unwrap();
    let mut output = gpu.stream().alloc_zeros::<T>(values.len()).unwrap();
    gpu.launch(kernel, grid_1d(n, 200), (&input, n, &mut output)).unwrap();
    let expected: Vec<T> = values.chunks(200).flat_map(|run| run.iter().rev().cloned()).collect();
    assert_eq!(gpu.stream().clone_dtoh(&output).unwrap(), expected, "{}", K::NAME);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_generic_instances_compute_for_their_types() {
    let n = 1001u32;
    check_reverse(k::generic_reverse_f32, (0..n).map(|i| i as f32 * 0.5).collect());
    check_reverse(k::generic_reverse_f64, (0..n).map(|i| f64::from(i) * -0.25).collect());
    check_reverse(k::generic_reverse_u16, (0..n).map(|i| (i * 7) as u16).collect());

    let gpu = gpu();
    let x: Vec<i32> = (0..n as i32).map(|i| i - 500).collect();
    let dx = gpu.stream().clone_htod(&x).unwrap();
    let mut dy = gpu.stream().alloc_zeros::<i32>(x.len()).unwrap();
    gpu.launch(k::generic_scale_i32, grid_1d(n, 128), (&dx, &mut dy, -3i32)).unwrap();
    assert_eq!(gpu.stream().clone_dtoh(&dy).unwrap(), x.iter().map(|v| v * -3).collect::<Vec<_>>());

    let x: Vec<u64> = (0..3 * u64::from(n)).map(|i| i * i).collect();
    let dx = gpu.stream().clone_htod(&x).unwrap();
    let mut out = gpu.stream().alloc_zeros::<u64>(n as usize).unwrap();
    gpu.launch(k::generic_gather_u64_3, grid_1d(n, 128), (&dx, &mut out, n)).unwrap();
    assert_eq!(gpu.stream().clone_dtoh(&out).unwrap(), (0..n as usize).map(|i| x[3 * i]).collect::<Vec<_>>());
}
