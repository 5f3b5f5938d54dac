//! Compiles the `kernels` crate to PTX modules with the toolkit's builder (`ptxkit-build`),
//! one per simulation, for `src/lib.rs` to embed: each module's PTX and its machine code for
//! the common GPUs (so they skip the JIT at start-up), and the table of every kernel
//! (generated from the kernels' `#[kernel]` markers; launch bounds come from
//! `#[kernel(launch_bounds(...))]` on each kernel).

/// Overrides the cubin architectures: `RUST_GPU_SIM_CUBINS=sm_90` (a comma list; `none` for
/// PTX only) shortens a kernel author's edit-to-run loop to their own GPU's.
const CUBINS_VAR: &str = "RUST_GPU_SIM_CUBINS";

fn main() {
    ptxkit_build::PtxBuilder::new("../../kernels")
        .watch("../../toolkit/device")
        .watch("../../toolkit/macros")
        // sm_70 PTX is JIT-compiled by the driver on every GPU from Volta on.
        .arch("sm_70")
        // The temporal kernel keeps a tile in fixed-size arrays indexed by loop counters:
        // full unrolling puts them in registers instead of local memory.
        .rustflag("-C llvm-args=-unroll-threshold=2000")
        // A100/A30, RTX 30xx/A40, RTX 40xx/L4/L40, H100/H200. Others (Volta, Turing,
        // Blackwell, ...) JIT-compile the PTX.
        .cubins_from_env(CUBINS_VAR, ["sm_80", "sm_86", "sm_89", "sm_90"])
        // The kernel author's loop (`--profile kernel-dev`): this machine's GPU's cubin alone
        // (Hopper's on a machine without one), a quarter of the `ptxas` time.
        .kernel_dev_cubins(CUBINS_VAR, ["sm_90"])
        // Installed by scripts/setup.sh.
        .ptxas("../../.tools/cuda-nvcc/nvidia/cuda_nvcc/bin/ptxas")
        // One PTX module per simulation (kernels/Cargo.toml's features), each compiled,
        // assembled and cached on its own: a kernel author's edit of heat.rs rebuilds the
        // heat module only (docs/startup.md, the edit-to-run loop).
        .module("heat", ["heat"])
        .module("grayscott", ["grayscott"])
        .module("grayscott_streaming", ["grayscott_streaming"])
        .module("grayscott_streaming_c1", ["grayscott_streaming_c1"])
        // The one-cell streaming kernels again, with `griddepcontrol` for programmatic
        // dependent launch: sm_90 PTX and cubin, loaded on Hopper and later only.
        .module_for_arch("grayscott_pdl", ["grayscott_pdl"], "sm_90")
        .module("physarum", ["physarum"])
        .module("common", ["common"])
        .build_into_out_dir("kernels.ptx")
        .unwrap_or_else(|e| e.exit());
}
