//! Compiles `kernels/` (one small kernel per intrinsic) to PTX, as two PTX sets: the classic
//! kernels (the crate's default features) for sm_80, with cubins where `ptxas` is found for
//! the architectures `PTXKIT_CHECK_CUBINS` names (default sm_80 and sm_90); and the Hopper
//! kernels (feature `hopper`: clusters, distributed shared memory, `mbarrier` phases) for
//! sm_90 with PTX ISA 8.1 (`st.async`), their one cubin always for sm_90 (the variable does not
//! apply: no other architecture runs them).
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
