//! CUDA plumbing of the simulations, in one place: the kernel images (embedded by the `simulations-images` crate)
//! and the GPU opened with them. Launching, image selection, launch shapes and the timer come
//! from the toolkit's host runtime (`ptxkit-host`), re-exported here; simulations never see
//! module handles or unchecked argument lists.
//!
//! The kernel tables and the opening of a GPU live in `open.rs`; the driver's teardown after
//! exit in `teardown.rs`.

mod images;
mod open;
mod teardown;

pub use images::IMAGES;
pub use open::{
    FORCE_PTX_VAR, PTX_DIR_VAR, all_ptx, device_count, kernels, modules, open, open_device,
    open_in_background, settle_background_open,
};
pub use ptxkit_host::{
    Gpu, KernelArg, KernelArgs, KernelImage, KernelImages, KernelInfo, KernelModule, Timer, grid_1d, grid_2d,
    last_launched, select_image,
};
pub use teardown::{ExitTeardown, IN_PROCESS_VAR, LINGER_VAR, let_go, release_or_let_go};
pub(crate) use teardown::{keep_replaced_until_exit, note_gpu_opened};
