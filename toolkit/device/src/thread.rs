//! Thread, block and grid coordinates (`threadIdx`, `blockIdx`, `blockDim`, `gridDim`), the
//! global indices built from them, and `__syncthreads`.

#[cfg(target_arch = "nvptx64")]
use core::arch::nvptx;

/// `threadIdx.x`.
#[inline(always)]
pub fn thread_idx_x() -> u32 {
    on_gpu!("thread_idx_x", {
        // SAFETY: reading a special register has no preconditions.
        unsafe { nvptx::_thread_idx_x() as u32 }
    })
}

/// `threadIdx.y`.
#[inline(always)]
pub fn thread_idx_y() -> u32 {
    on_gpu!("thread_idx_y", {
        // SAFETY: reading a special register has no preconditions.
        unsafe { nvptx::_thread_idx_y() as u32 }
    })
}

/// `threadIdx.z`.
#[inline(always)]
pub fn thread_idx_z() -> u32 {
    on_gpu!("thread_idx_z", {
        // SAFETY: reading a special register has no preconditions.
        unsafe { nvptx::_thread_idx_z() as u32 }
    })
}

/// `blockIdx.x`.
#[inline(always)]
pub fn block_idx_x() -> u32 {
    on_gpu!("block_idx_x", {
        // SAFETY: reading a special register has no preconditions.
        unsafe { nvptx::_block_idx_x() as u32 }
    })
}

/// `blockIdx.y`.
#[inline(always)]
pub fn block_idx_y() -> u32 {
    on_gpu!("block_idx_y", {
        // SAFETY: reading a special register has no preconditions.
        unsafe { nvptx::_block_idx_y() as u32 }
    })
}

/// `blockIdx.z`.
#[inline(always)]
pub fn block_idx_z() -> u32 {
    on_gpu!("block_idx_z", {
        // SAFETY: reading a special register has no preconditions.
        unsafe { nvptx::_block_idx_z() as u32 }
    })
}

/// `blockDim.x`.
#[inline(always)]
pub fn block_dim_x() -> u32 {
    on_gpu!("block_dim_x", {
        // SAFETY: reading a special register has no preconditions.
        unsafe { nvptx::_block_dim_x() as u32 }
    })
}

/// `blockDim.y`.
#[inline(always)]
pub fn block_dim_y() -> u32 {
    on_gpu!("block_dim_y", {
        // SAFETY: reading a special register has no preconditions.
        unsafe { nvptx::_block_dim_y() as u32 }
    })
}

/// `blockDim.z`.
#[inline(always)]
pub fn block_dim_z() -> u32 {
    on_gpu!("block_dim_z", {
        // SAFETY: reading a special register has no preconditions.
        unsafe { nvptx::_block_dim_z() as u32 }
    })
}

/// `gridDim.x`.
#[inline(always)]
pub fn grid_dim_x() -> u32 {
    on_gpu!("grid_dim_x", {
        // SAFETY: reading a special register has no preconditions.
        unsafe { nvptx::_grid_dim_x() as u32 }
    })
}

/// `gridDim.y`.
#[inline(always)]
pub fn grid_dim_y() -> u32 {
    on_gpu!("grid_dim_y", {
        // SAFETY: reading a special register has no preconditions.
        unsafe { nvptx::_grid_dim_y() as u32 }
    })
}

/// `gridDim.z`.
#[inline(always)]
pub fn grid_dim_z() -> u32 {
    on_gpu!("grid_dim_z", {
        // SAFETY: reading a special register has no preconditions.
        unsafe { nvptx::_grid_dim_z() as u32 }
    })
}

/// This thread's index within its block, x fastest: `threadIdx.x + blockDim.x * (threadIdx.y
/// + blockDim.y * threadIdx.z)` (0..threads per block; the numbering that groups threads into
/// warps, see `warp::warp_id`).
#[inline(always)]
pub fn linear_idx() -> u32 {
    on_gpu!("linear_idx", {
        thread_idx_x() + block_dim_x() * (thread_idx_y() + block_dim_y() * thread_idx_z())
    })
}

/// The block-shape contract of `#[kernel(block(X, Y, Z))]`, told to the compiler at the
/// kernel's entry: `blockDim` is (X, Y, Z) and `threadIdx` below it. So [`block_dim_x`] and
/// the other reads of the block's shape fold to constants wherever the kernel's code (or a
/// library it calls, such as `SharedTile::fill`) uses them, and `threadIdx.x % X` to
/// `threadIdx.x`. Emitted by `#[kernel]`, not called by hand.
///
/// # Safety
/// Every launch of the calling kernel has blocks of exactly X × Y × Z threads: what the
/// entry's `.reqntid X, Y, Z` makes the driver enforce (a launch of another shape fails) and
/// the typed launch checks first.
#[doc(hidden)]
#[inline(always)]
pub unsafe fn assume_block_shape<const X: u32, const Y: u32, const Z: u32>() {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: the caller's promise (the launch's block is X × Y × Z), so each holds.
    unsafe {
        assume_block_dims::<X, Y, Z>();
        core::hint::assert_unchecked(thread_idx_x() < X);
        core::hint::assert_unchecked(thread_idx_y() < Y);
        core::hint::assert_unchecked(thread_idx_z() < Z);
    }
}

/// The part of [`assume_block_shape`] that `#[kernel(block(X, Y, Z), thread_idx_hints =
/// false)]` emits: `blockDim` is (X, Y, Z), nothing said of `threadIdx`. For a kernel whose
/// code LLVM schedules worse with the `threadIdx` bounds (values kept live around them, and
/// spilled). Not called by hand.
///
/// # Safety
/// As [`assume_block_shape`]: every launch of the calling kernel has blocks of exactly
/// X × Y × Z threads.
#[doc(hidden)]
#[inline(always)]
pub unsafe fn assume_block_dims<const X: u32, const Y: u32, const Z: u32>() {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: the caller's promise (the launch's block is X × Y × Z), so each holds.
    unsafe {
        core::hint::assert_unchecked(block_dim_x() == X);
        core::hint::assert_unchecked(block_dim_y() == Y);
        core::hint::assert_unchecked(block_dim_z() == Z);
    }
}

/// Global x index: `blockIdx.x * blockDim.x + threadIdx.x`.
#[inline(always)]
pub fn index_1d() -> u32 {
    on_gpu!("index_1d", {
        // SAFETY: as above.
        unsafe { (nvptx::_block_idx_x() * nvptx::_block_dim_x() + nvptx::_thread_idx_x()) as u32 }
    })
}

/// Global (x, y) index of a 2-D launch.
#[inline(always)]
pub fn index_2d() -> (u32, u32) {
    on_gpu!("index_2d", {
        // SAFETY: as above.
        unsafe {
            let x = nvptx::_block_idx_x() * nvptx::_block_dim_x() + nvptx::_thread_idx_x();
            let y = nvptx::_block_idx_y() * nvptx::_block_dim_y() + nvptx::_thread_idx_y();
            (x as u32, y as u32)
        }
    })
}

/// Global (x, y, z) index of a 3-D launch.
#[inline(always)]
pub fn index_3d() -> (u32, u32, u32) {
    on_gpu!("index_3d", {
        let (x, y) = index_2d();
        // SAFETY: as above.
        let z = unsafe { nvptx::_block_idx_z() * nvptx::_block_dim_z() + nvptx::_thread_idx_z() };
        (x, y, z as u32)
    })
}

/// Number of threads in the whole 1-D grid: the stride of a grid-stride loop.
#[inline(always)]
pub fn grid_size_1d() -> u32 {
    on_gpu!("grid_size_1d", {
        // SAFETY: as above.
        unsafe { (nvptx::_grid_dim_x() * nvptx::_block_dim_x()) as u32 }
    })
}

/// `__syncthreads()`: every thread of the block waits here, and shared-memory writes
/// before it are visible to all threads after it. Call it from all threads of a block or
/// from none.
#[inline(always)]
pub fn sync_threads() {
    on_gpu!("sync_threads", {
        // SAFETY: a barrier has no memory-safety preconditions; see the doc for its use.
        unsafe { nvptx::_syncthreads() }
    })
}
