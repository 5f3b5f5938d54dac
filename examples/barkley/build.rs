//! Compiles `kernels/` to PTX (and cubins, where `ptxas` is found) with the toolkit's builder.
fn main() {
    ptxkit_build::PtxBuilder::new("kernels")
        .cubins_from_env("BARKLEY_CUBINS", ["sm_80", "sm_86", "sm_89", "sm_90"])
        .ptxas("../../.tools/cuda-nvcc/nvidia/cuda_nvcc/bin/ptxas")
        .build_into_out_dir("barkley.ptx")
        .unwrap_or_else(|e| e.exit());
}
