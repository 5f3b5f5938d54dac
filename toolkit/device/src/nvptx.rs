//! Device support: the few primitives kernels need, named as in CUDA C and rust-cuda's
//! `cuda_std`, so that kernel bodies read as math rather than plumbing.

/// The body of a device function: itself in the device build; in a host build, where kernel
/// bodies are compiled only to be checked, a panic naming the function (rust-cuda's
/// `#[gpu_only]`).
macro_rules! on_gpu {
    ($name:literal, $body:block) => {{
        #[cfg(target_arch = "nvptx64")]
        $body
        #[cfg(not(target_arch = "nvptx64"))]
        $crate::host::device_only($name)
    }};
}

/// Thread, block and grid coordinates.
pub mod thread {
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
            // SAFETY: as above.
            unsafe { nvptx::_thread_idx_y() as u32 }
        })
    }

    /// `blockIdx.x`.
    #[inline(always)]
    pub fn block_idx_x() -> u32 {
        on_gpu!("block_idx_x", {
            // SAFETY: as above.
            unsafe { nvptx::_block_idx_x() as u32 }
        })
    }

    /// `blockIdx.y`.
    #[inline(always)]
    pub fn block_idx_y() -> u32 {
        on_gpu!("block_idx_y", {
            // SAFETY: as above.
            unsafe { nvptx::_block_idx_y() as u32 }
        })
    }

    /// `blockIdx.z`.
    #[inline(always)]
    pub fn block_idx_z() -> u32 {
        on_gpu!("block_idx_z", {
            // SAFETY: as above.
            unsafe { nvptx::_block_idx_z() as u32 }
        })
    }

    /// `blockDim.x`.
    #[inline(always)]
    pub fn block_dim_x() -> u32 {
        on_gpu!("block_dim_x", {
            // SAFETY: as above.
            unsafe { nvptx::_block_dim_x() as u32 }
        })
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
}

/// Declares a per-block shared-memory array and yields a `*mut T` to its first element.
///
/// ```ignore
/// let tile: *mut f32 = shared_array!(reduce_tile: [f32; 1024]);
/// ```
/// The name becomes the PTX symbol, so it must be unique within a kernel (and is best unique
/// within the crate). Contents start undefined: write before reading, with a
/// [`thread::sync_threads`] in between.
#[macro_export]
macro_rules! shared_array {
    ($name:ident : [$ty:ty; $len:expr]) => {{
        let ptr: *mut $ty;
        // In a host build (kernel bodies are type-checked there, never run) a null pointer.
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let _ = ($len) * core::mem::size_of::<$ty>();
            ptr = core::ptr::null_mut();
        }
        // SAFETY: declares a `.shared` array and converts its address to a generic pointer;
        // the asm reads and writes no memory.
        #[cfg(target_arch = "nvptx64")]
        unsafe {
            core::arch::asm!(
                concat!(".shared .align 16 .b8 ", stringify!($name), "[{bytes}];"),
                concat!("cvta.shared.u64 {ptr}, ", stringify!($name), ";"),
                bytes = const ($len) * core::mem::size_of::<$ty>(),
                ptr = out(reg64) ptr,
                options(nomem, nostack, preserves_flags),
            );
        }
        ptr
    }};
}

/// A per-block shared-memory array of `len` `f32`s as a [`SharedF32`] (32-bit shared-space
/// addressing, for hot loops), CUDA C's `__shared__ float name[len];`. Naming and contents as
/// [`shared_array!`].
///
/// ```ignore
/// let edges = shared_f32!(stream_edges: 512);
/// ```
#[macro_export]
macro_rules! shared_f32 {
    ($name:ident : $len:expr) => {{
        let base: u32;
        // In a host build (kernel bodies are type-checked there, never run) address 0.
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let _ = ($len) * 4;
            base = 0;
        }
        // SAFETY: declares a `.shared` array and reads its shared-space address; the asm reads
        // and writes no memory.
        #[cfg(target_arch = "nvptx64")]
        unsafe {
            core::arch::asm!(
                concat!(".shared .align 16 .b8 ", stringify!($name), "[{bytes}];"),
                concat!("mov.u32 {base}, ", stringify!($name), ";"),
                bytes = const ($len) * 4,
                base = out(reg32) base,
                options(nomem, nostack, preserves_flags),
            );
        }
        $crate::SharedF32::from_shared_address(base)
    }};
}

/// A per-block shared-memory array of `f32` addressed in the shared state space with 32-bit
/// offsets (`ld.shared.f32` / `st.shared.f32`), as nvcc addresses `__shared__` arrays. Use it
/// in hot loops: a [`shared_array!`] pointer is a 64-bit generic address, which costs 64-bit
/// arithmetic per access and a generic load that must check its state space.
#[derive(Clone, Copy)]
pub struct SharedF32 {
    /// Byte address of element 0 in the shared state space.
    base: u32,
}

impl SharedF32 {
    /// Wraps the shared-space address of an array (see [`dynamic_shared_f32!`]).
    #[doc(hidden)]
    #[inline(always)]
    pub const fn from_shared_address(base: u32) -> Self {
        Self { base }
    }

    /// Element `index`.
    ///
    /// # Safety
    /// `index` must lie inside the array; another thread's write to it must be separated
    /// from this read by a barrier.
    #[inline(always)]
    pub unsafe fn load(self, index: u32) -> f32 {
        on_gpu!("load", {
            let value: f32;
            // SAFETY: the caller keeps `index` in bounds; the load only reads shared memory.
            unsafe {
                core::arch::asm!(
                    "ld.shared.f32 {v}, [{a}];",
                    v = out(reg32) value,
                    a = in(reg32) self.base + 4 * index,
                    options(pure, readonly, nostack, preserves_flags),
                );
            }
            value
        })
    }

    /// Elements `index` and `index + 1` in one access (`ld.shared.v2.f32`).
    ///
    /// # Safety
    /// As [`SharedF32::load`], for both elements; `index` must be even (8-byte aligned).
    #[inline(always)]
    pub unsafe fn load2(self, index: u32) -> [f32; 2] {
        on_gpu!("load2", {
            let (a, b): (f32, f32);
            // SAFETY: as `load`.
            unsafe {
                core::arch::asm!(
                    "ld.shared.v2.f32 {{{a}, {b}}}, [{p}];",
                    a = out(reg32) a,
                    b = out(reg32) b,
                    p = in(reg32) self.base + 4 * index,
                    options(pure, readonly, nostack, preserves_flags),
                );
            }
            [a, b]
        })
    }

    /// Writes elements `index .. index + 4` in one access (`st.shared.v4.f32`).
    ///
    /// # Safety
    /// As [`SharedF32::load`], for all four elements; `index` must be a multiple of 4 (16-byte
    /// aligned).
    #[inline(always)]
    pub unsafe fn store4(self, index: u32, values: [f32; 4]) {
        on_gpu!("store4", {
            // SAFETY: as `store`.
            unsafe {
                core::arch::asm!(
                    "st.shared.v4.f32 [{p}], {{{a}, {b}, {c}, {d}}};",
                    p = in(reg32) self.base + 4 * index,
                    a = in(reg32) values[0],
                    b = in(reg32) values[1],
                    c = in(reg32) values[2],
                    d = in(reg32) values[3],
                    options(nostack, preserves_flags),
                );
            }
        })
    }

    /// Writes element `index`.
    ///
    /// # Safety
    /// As [`SharedF32::load`].
    #[inline(always)]
    pub unsafe fn store(self, index: u32, value: f32) {
        on_gpu!("store", {
            // SAFETY: the caller keeps `index` in bounds.
            unsafe {
                core::arch::asm!(
                    "st.shared.f32 [{a}], {v};",
                    a = in(reg32) self.base + 4 * index,
                    v = in(reg32) value,
                    options(nostack, preserves_flags),
                );
            }
        })
    }
}

/// The block's dynamic shared memory (sized at launch, as CUDA C's `extern __shared__
/// float name[];`) as a [`SharedF32`]. Needed past 48 KiB per block, where static shared
/// arrays stop; the host must raise the kernel's `MAX_DYNAMIC_SHARED_SIZE_BYTES` attribute and
/// pass the size in the launch configuration. As in CUDA C, every dynamic array of a kernel
/// starts at the same address.
///
/// ```ignore
/// let planes = dynamic_shared_f32!(stencil_planes);
/// ```
#[macro_export]
macro_rules! dynamic_shared_f32 {
    ($name:ident) => {{
        // Declared at module scope, where PTX wants it (`global_asm!` only stands as an item).
        #[cfg(target_arch = "nvptx64")]
        #[allow(non_snake_case)]
        mod $name {
            core::arch::global_asm!(concat!(".extern .shared .align 16 .b8 ", stringify!($name), "[];"));
        }
        let base: u32;
        // In a host build (kernel bodies are type-checked there, never run) address 0.
        #[cfg(not(target_arch = "nvptx64"))]
        {
            base = 0;
        }
        // SAFETY: reads the shared-space address of the dynamic array; no memory is touched.
        #[cfg(target_arch = "nvptx64")]
        unsafe {
            core::arch::asm!(
                concat!("mov.u32 {base}, ", stringify!($name), ";"),
                base = out(reg32) base,
                options(nomem, nostack, preserves_flags),
            );
        }
        $crate::SharedF32::from_shared_address(base)
    }};
}

/// Memory accesses the compiler must not restructure, or that need a particular cache path.
pub mod memory {
    /// Reads a float through the read-only data cache (`ld.global.nc`, CUDA C's `__ldg`).
    ///
    /// # Safety
    /// `ptr` must be a valid global address that no thread writes during the kernel.
    #[inline(always)]
    pub unsafe fn load_nc(ptr: *const f32) -> f32 {
        on_gpu!("load_nc", {
            let value: f32;
            // SAFETY: the caller guarantees `ptr` is a valid global address not written during
            // the kernel.
            unsafe {
                core::arch::asm!(
                    "ld.global.nc.f32 {v}, [{p}];",
                    v = out(reg32) value,
                    p = in(reg64) ptr,
                    options(readonly, nostack, preserves_flags),
                );
            }
            value
        })
    }

    /// `if condition { *address = value }` as one predicated store. Unlike the `if`, it
    /// keeps the compiler from moving the computation of `value` under a branch: where
    /// `condition` differs between the lanes of a warp, such a branch costs more than the
    /// computation it skips.
    ///
    /// # Safety
    /// When `condition` holds, `address` must be valid for a 4-byte write.
    #[inline(always)]
    pub unsafe fn store_if(address: *mut f32, value: f32, condition: bool) {
        on_gpu!("store_if", {
            // SAFETY: the store happens only under `condition`, for which the caller vouches.
            unsafe {
                core::arch::asm!(
                    "{{ .reg .pred p; setp.ne.u32 p, {c}, 0; @p st.f32 [{a}], {v}; }}",
                    c = in(reg32) condition as u32,
                    a = in(reg64) address,
                    v = in(reg32) value,
                    options(nostack, preserves_flags),
                );
            }
        })
    }
}

/// Atomic read-modify-write operations on device memory (global or shared).
pub mod atomic {
    #[cfg(target_arch = "nvptx64")]
    use core::sync::atomic::{AtomicU32, Ordering};

    /// `atomicAdd(float*, float)`, result discarded (`red.add.f32`).
    ///
    /// # Safety
    /// `address` must point to a valid, 4-byte aligned `f32` in global or shared memory.
    #[inline(always)]
    pub unsafe fn atomic_add_f32(address: *mut f32, value: f32) {
        on_gpu!("atomic_add_f32", {
            // SAFETY: the caller guarantees the address; the reduction is atomic in hardware.
            unsafe {
                core::arch::asm!(
                    "red.relaxed.gpu.add.f32 [{a}], {v};",
                    a = in(reg64) address,
                    v = in(reg32) value,
                    options(nostack, preserves_flags),
                );
            }
        })
    }

    /// `atomicAdd(unsigned*, unsigned)`: returns the old value.
    ///
    /// # Safety
    /// `address` must point to a valid, 4-byte aligned `u32` in device memory.
    #[inline(always)]
    pub unsafe fn atomic_add_u32(address: *mut u32, value: u32) -> u32 {
        on_gpu!("atomic_add_u32", {
            // SAFETY: the caller guarantees the address.
            unsafe { AtomicU32::from_ptr(address).fetch_add(value, Ordering::Relaxed) }
        })
    }

    /// `atomicMin(unsigned*, unsigned)`.
    ///
    /// # Safety
    /// `address` must point to a valid, 4-byte aligned `u32` in device memory.
    #[inline(always)]
    pub unsafe fn atomic_min_u32(address: *mut u32, value: u32) -> u32 {
        on_gpu!("atomic_min_u32", {
            // SAFETY: the caller guarantees the address.
            unsafe { AtomicU32::from_ptr(address).fetch_min(value, Ordering::Relaxed) }
        })
    }

    /// `atomicMax(unsigned*, unsigned)`.
    ///
    /// # Safety
    /// `address` must point to a valid, 4-byte aligned `u32` in device memory.
    #[inline(always)]
    pub unsafe fn atomic_max_u32(address: *mut u32, value: u32) -> u32 {
        on_gpu!("atomic_max_u32", {
            // SAFETY: the caller guarantees the address.
            unsafe { AtomicU32::from_ptr(address).fetch_max(value, Ordering::Relaxed) }
        })
    }
}

/// Warp-level data exchange (`__shfl_up_sync` / `__shfl_down_sync` with a full mask).
/// Every lane of the warp must call these together, on the same path.
pub mod warp {
    /// Lanes in a warp.
    pub const SIZE: u32 = 32;

    /// This thread's lane, 0..32.
    #[inline(always)]
    pub fn lane() -> u32 {
        on_gpu!("lane", { super::thread::thread_idx_x() % SIZE })
    }

    /// `__activemask()`: the lanes of the warp executing this instruction.
    #[inline(always)]
    pub fn active_mask() -> u32 {
        on_gpu!("active_mask", {
            let mask: u32;
            // SAFETY: reads which lanes are active; no memory is touched.
            unsafe {
                core::arch::asm!(
                    "activemask.b32 {m};",
                    m = out(reg32) mask,
                    options(nomem, nostack, preserves_flags),
                );
            }
            mask
        })
    }

    /// `__match_any_sync(mask, value)`: the lanes of `mask` holding the same `value` as this
    /// one (sm_70+). Every lane of `mask` must call it together.
    #[inline(always)]
    pub fn match_any(mask: u32, value: u32) -> u32 {
        on_gpu!("match_any", {
            let peers: u32;
            // SAFETY: a register exchange among the lanes of `mask`; no memory is touched.
            unsafe {
                core::arch::asm!(
                    "match.any.sync.b32 {p}, {v}, {m};",
                    p = out(reg32) peers,
                    v = in(reg32) value,
                    m = in(reg32) mask,
                    options(nomem, nostack, preserves_flags),
                );
            }
            peers
        })
    }

    /// `__shfl_sync(mask, value, src)`: lane `src`'s `value`, among the lanes of `mask` (every
    /// lane of `mask`, `src` included, must call it together).
    #[inline(always)]
    pub fn shfl_idx_u32(mask: u32, value: u32, src: u32) -> u32 {
        on_gpu!("shfl_idx_u32", {
            let out: u32;
            // SAFETY: a register exchange among the lanes of `mask`; no memory is touched.
            unsafe {
                core::arch::asm!(
                    "shfl.sync.idx.b32 {out}, {value}, {src}, 31, {mask};",
                    out = out(reg32) out,
                    value = in(reg32) value,
                    src = in(reg32) src,
                    mask = in(reg32) mask,
                    options(nomem, nostack, preserves_flags),
                );
            }
            out
        })
    }

    /// The `value` of lane `lane - delta`; lanes below `delta` get their own value.
    #[inline(always)]
    pub fn shfl_up_u32(value: u32, delta: u32) -> u32 {
        on_gpu!("shfl_up_u32", {
            let out: u32;
            // SAFETY: a register exchange among the warp's lanes; no memory is touched.
            unsafe {
                core::arch::asm!(
                    "shfl.sync.up.b32 {out}, {value}, {delta}, 0, -1;",
                    out = out(reg32) out,
                    value = in(reg32) value,
                    delta = in(reg32) delta,
                    options(nomem, nostack, preserves_flags),
                );
            }
            out
        })
    }

    /// The lanes below this one (`%lanemask_lt`).
    #[inline(always)]
    pub fn lanes_below() -> u32 {
        on_gpu!("lanes_below", {
            let mask: u32;
            // SAFETY: reads a special register; no memory is touched.
            unsafe {
                core::arch::asm!(
                    "mov.u32 {m}, %lanemask_lt;",
                    m = out(reg32) mask,
                    options(nomem, nostack, preserves_flags),
                );
            }
            mask
        })
    }

    /// The `value` of lane `lane - delta`; lanes below `delta` get their own value.
    #[inline(always)]
    pub fn shfl_up_f32(value: f32, delta: u32) -> f32 {
        on_gpu!("shfl_up_f32", { f32::from_bits(shfl_up_u32(value.to_bits(), delta)) })
    }

    /// The `value` of lane `lane + delta`; lanes at or above `32 - delta` get their own value.
    #[inline(always)]
    pub fn shfl_down_f32(value: f32, delta: u32) -> f32 {
        on_gpu!("shfl_down_f32", {
            let out: f32;
            // SAFETY: as above.
            unsafe {
                core::arch::asm!(
                    "shfl.sync.down.b32 {out}, {value}, {delta}, 31, -1;",
                    out = out(reg32) out,
                    value = in(reg32) value,
                    delta = in(reg32) delta,
                    options(nomem, nostack, preserves_flags),
                );
            }
            out
        })
    }
}

/// CUDA C's `assert` for kernels: when `condition` is false, the failing thread reports the
/// condition, this file and line, and its block and thread through the driver (printed on the
/// host's stderr) and stops the kernel; the launch fails with `CUDA_ERROR_ASSERT`, which the
/// host reports. Checked in release builds too (unlike `debug_assert!`, which traps without
/// saying where).
///
/// ```ignore
/// device_assert!(steps <= TEMPORAL_MAX_STEPS);
/// ```
#[macro_export]
macro_rules! device_assert {
    ($condition:expr $(,)?) => {
        if !$condition {
            // SAFETY: NUL-terminated static strings, as `__assertfail` expects.
            unsafe {
                $crate::assert_fail(
                    concat!(stringify!($condition), "\0"),
                    concat!(file!(), "\0"),
                    line!(),
                    concat!(module_path!(), "\0"),
                )
            }
        }
    };
}

unsafe extern "C" {
    /// The device runtime's assertion report (what nvcc's `assert` calls).
    fn __assertfail(assertion: *const u8, file: *const u8, line: u32, function: *const u8, char_size: usize);
}

/// Reports a failed [`device_assert!`] and stops the kernel.
///
/// # Safety
/// The strings must end with a NUL byte.
#[cold]
#[inline(never)]
pub unsafe fn assert_fail(
    assertion: &'static str,
    file: &'static str,
    line: u32,
    function: &'static str,
) -> ! {
    on_gpu!("assert_fail", {
        // SAFETY: NUL-terminated strings (the caller's promise); `trap` aborts the kernel.
        unsafe {
            __assertfail(assertion.as_ptr(), file.as_ptr(), line, function.as_ptr(), 1);
            core::arch::nvptx::trap()
        }
    })
}
