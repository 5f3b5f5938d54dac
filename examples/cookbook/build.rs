//! Compiles `kernels/` to PTX for sm_80 (and to cubins for sm_80 and sm_90 where `ptxas` is
//! found) with the toolkit's builder.
fn main() {
    ptxkit_build::PtxBuilder::new("kernels")
        .arch("sm_80")
        .cubins_from_env("COOKBOOK_CUBINS", ["sm_80", "sm_90"])
        .ptxas("../../.tools/cuda-nvcc/nvidia/cuda_nvcc/bin/ptxas")
        .build_into_out_dir("cookbook.ptx")
        .unwrap_or_else(|e| e.exit());
}
