//! Compiles the `kernels` crate to PTX and embeds it: `host::cuda::PTX` is the module text.

fn main() {
    ptx_builder::PtxBuilder::new("../kernels")
        .watch("../kernel-macros")
        // sm_70 PTX is JIT-compiled by the driver on every GPU from Volta on.
        .arch("sm_70")
        // The temporal kernel keeps a tile in fixed-size arrays indexed by loop counters:
        // full unrolling puts them in registers instead of local memory.
        .rustflag("-C llvm-args=-unroll-threshold=2000")
        // Two 256-thread blocks per SM, so one block's loads overlap the other's arithmetic.
        .launch_bounds("gray_scott_temporal", 256, 2)
        // 1024 threads per block: at most 64 registers a thread.
        .launch_bounds("heat_rk4_single", 1024, 1)
        .build_into_out_dir("kernels.ptx")
        .unwrap_or_else(|e| e.exit());
}
