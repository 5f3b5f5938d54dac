//! The kernel images, embedded by the `simulations-images` crate and found here through the
//! symbol it exports: a kernel edit recompiles that small crate and relinks the program, not
//! this library (docs/startup.md, the edit-to-run loop). Every program that uses this library
//! depends on `simulations-images` and names it once (`use simulations_images as _;`);
//! without it the link fails naming `simulations_images_kernel_images`.

use ptxkit_host::KernelImages;

unsafe extern "Rust" {
    /// `simulations_images::KERNEL_IMAGES`: the same type, from the same `ptxkit-host`.
    #[link_name = "simulations_images_kernel_images"]
    safe static LINKED_IMAGES: KernelImages;
}

/// The `kernels` crate's PTX modules (one per simulation, and one of the kernels they share;
/// for `sm_70`, JIT-compiled by the driver on any GPU from Volta on), each with its cubins for
/// the common GPUs, and the table of every kernel.
pub static IMAGES: &KernelImages = &LINKED_IMAGES;
