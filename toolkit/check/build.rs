//! Compiles `kernels/` (one small kernel per intrinsic) to PTX for sm_80, and to cubins where
//! `ptxas` is found: the tests read the PTX for the instructions each intrinsic promises.
fn main() {
    ptxkit_build::PtxBuilder::new("kernels")
        .arch("sm_80")
        .cubins_from_env("PTXKIT_CHECK_CUBINS", ["sm_80", "sm_90"])
        .ptxas("../../.tools/cuda-nvcc/nvidia/cuda_nvcc/bin/ptxas")
        .build_into_out_dir("check.ptx")
        .unwrap_or_else(|e| e.exit());
}
