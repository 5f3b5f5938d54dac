//! The kernels of `kernels/` (one or a few per intrinsic of `ptxkit-device`), embedded: the
//! tests in `tests/it` read their PTX (CI, no GPU) and run them (`--ignored`, on a GPU).

/// The PTX, the cubins and the kernel table of `kernels/`.
pub static KERNELS: ptxkit_host::KernelImages = ptxkit_host::include_kernels!("check");

/// The PTX (sm_90, ISA 8.1) and cubin of `kernels/`' Hopper kernels (feature `hopper`:
/// clusters, distributed shared memory, `mbarrier` phases), a module of their own.
pub static HOPPER_KERNELS: ptxkit_host::KernelImages = ptxkit_host::include_kernels!("check-hopper");
