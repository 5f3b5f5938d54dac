//! Memory fences at block, device and system scope (`__threadfence_block`, `__threadfence`,
//! `__threadfence_system`).
//!
//! A fence orders this thread's memory accesses: those before it are observed, by threads of
//! its scope, before those after it. It waits for no other thread (that is a barrier's job).
//! Each emits what nvcc emits for the CUDA function, `membar.cta` / `membar.gl` / `membar.sys`,
//! which the PTX ISA defines, on sm_70 and later, as `fence.sc.cta` / `fence.sc.gpu` /
//! `fence.sc.sys`.

/// `__threadfence_block()`: orders this thread's accesses as seen by the threads of its block
/// (`membar.cta`).
#[inline(always)]
pub fn block() {
    on_gpu!("fence::block", {
        // SAFETY: a fence touches no memory itself; it only orders accesses (hence no `nomem`).
        unsafe { core::arch::asm!("membar.cta;", options(nostack, preserves_flags)) }
    })
}

/// `__threadfence()`: orders this thread's accesses as seen by every thread of the GPU
/// (`membar.gl`).
#[inline(always)]
pub fn device() {
    on_gpu!("fence::device", {
        // SAFETY: as in `block`.
        unsafe { core::arch::asm!("membar.gl;", options(nostack, preserves_flags)) }
    })
}

/// `__threadfence_system()`: orders this thread's accesses as seen by every thread of the GPU,
/// the host and peer GPUs (mapped or managed memory) (`membar.sys`).
#[inline(always)]
pub fn system() {
    on_gpu!("fence::system", {
        // SAFETY: as in `block`.
        unsafe { core::arch::asm!("membar.sys;", options(nostack, preserves_flags)) }
    })
}
