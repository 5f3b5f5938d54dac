//! Compiles `kernels/` (one small kernel per intrinsic) to PTX, as two PTX sets: the classic
//! kernels (the crate's default features) for sm_80, with cubins for sm_80 and sm_90 where
//! `ptxas` is found; and the Hopper kernels (feature `hopper`: clusters, distributed shared
//! memory, `mbarrier` phases) for sm_90 with PTX ISA 8.1 (`st.async`), their cubin for sm_90.
//! The tests read the PTX for the instructions each intrinsic promises.
fn main() {
    ptxkit_build::PtxBuilder::new("kernels")
        .arch("sm_80")
        .cubins_from_env("PTXKIT_CHECK_CUBINS", ["sm_80", "sm_90"])
        .ptxas("../../.tools/cuda-nvcc/nvidia/cuda_nvcc/bin/ptxas")
        .build_into_out_dir("check.ptx")
        .unwrap_or_else(|e| e.exit());
    ptxkit_build::PtxBuilder::new("kernels")
        .arch("sm_90")
        .rustflag("-C target-feature=+ptx81")
        .cubins(["sm_90"])
        .ptxas("../../.tools/cuda-nvcc/nvidia/cuda_nvcc/bin/ptxas")
        .module("hopper", ["hopper"])
        .build_into_out_dir("check-hopper.ptx")
        .unwrap_or_else(|e| e.exit());
}
