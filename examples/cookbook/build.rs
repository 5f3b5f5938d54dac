//! Compiles `kernels/` to PTX with the toolkit's builder, as two PTX sets: the classic kernels
//! (the crate's default features) for sm_80, with cubins for sm_80 and sm_90 where `ptxas` is
//! found; and the Hopper kernels (feature `hopper`: TMA, `mbarrier` transactions, clusters,
//! `wgmma`) for sm_90a only (`wgmma` is an architecture-specific feature), with PTX ISA 8.3
//! (`fence.proxy.tensormap`), their cubin for sm_90a.
fn main() {
    ptxkit_build::PtxBuilder::new("kernels")
        .arch("sm_80")
        .cubins_from_env("COOKBOOK_CUBINS", ["sm_80", "sm_90"])
        .ptxas("../../.tools/cuda-nvcc/nvidia/cuda_nvcc/bin/ptxas")
        .build_into_out_dir("cookbook.ptx")
        .unwrap_or_else(|e| e.exit());
    ptxkit_build::PtxBuilder::new("kernels")
        .arch("sm_90a")
        .rustflag("-C target-feature=+ptx83")
        .cubins(["sm_90a"])
        .ptxas("../../.tools/cuda-nvcc/nvidia/cuda_nvcc/bin/ptxas")
        .module("hopper", ["hopper"])
        .build_into_out_dir("cookbook-hopper.ptx")
        .unwrap_or_else(|e| e.exit());
}
