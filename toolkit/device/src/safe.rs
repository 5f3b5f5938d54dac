//! Safe kernels: read-only inputs as slices, outputs one element per thread, block or warp,
//! shared-memory tiles, and launch contracts that remove bounds checks.
//!
//! A `#[kernel]` declared `pub fn` (no `unsafe`) takes read-only inputs as `&[T]` (or
//! [`Grid2d<T>`] for a row-major grid, read by cell or by stencil [`Window`]), outputs as
//! [`DisjointSlice<T>`] (or [`DisjointSlice2d<T>`] for a row-major grid) and anything else by
//! value, and needs no `unsafe` in its body:
//!
//! ```ignore
//! /// y ← a·x + y. Thread mapping: one thread per element. Bytes per element: 12.
//! #[kernel]
//! pub fn saxpy(x: &[f32], mut y: DisjointSlice<f32>, a: f32) {
//!     let i = ThreadIndex::global_1d();
//!     let xi = x.get(i.get()).copied().unwrap_or(0.0);
//!     if let Some(yi) = y.get_mut(i) {
//!         *yi += a * xi;
//!     }
//! }
//! // host: gpu.launch(my_kernels::saxpy, grid_1d(n, 256), (&x, &mut y, 2.0f32))?;
//! ```
//!
//! Each slice parameter becomes two `.param`s, the device pointer (a kernel pointer parameter,
//! so loads and stores are `ld.global`/`st.global` as in a raw-pointer kernel) and the length
//! (a 2-D output: the pointer, the row width and the height); the typed launch fills them from
//! the `CudaSlice`/`CudaView` it is given, so lengths cannot disagree with the buffers. On the
//! host, `Kernel::Params` names the markers [`Input<T>`], [`Output<T>`] and [`Output2d<T>`].
//!
//! # Why it is sound
//!
//! - An input `&[T]` comes from a `&CudaSlice<T>`/`&CudaView<T>` the host holds borrowed for
//!   the launch: nothing writes it during the kernel (a writer would need a `&mut` borrow, and
//!   later work on other streams waits for this kernel through cudarc's events). A
//!   [`Grid2d`] is the same borrow (`ptxkit_host::Rows`), with a width and height whose
//!   product the host checked fits the buffer: its reads are checked against both sides.
//! - An output's elements are reached only through [`ThreadIndex`]/[`ThreadIndex2d`], whose
//!   fields are private: the only way to make one is [`ThreadIndex::global_1d`] /
//!   [`ThreadIndex2d::global_2d`], which read the hardware registers (`blockIdx`, `blockDim`,
//!   `threadIdx`) fixed for the launch. `blockIdx.x * blockDim.x + threadIdx.x` (computed in 64
//!   bits, so it never wraps) is unique to a thread in a 1-D launch, and (x, y) in a launch one
//!   layer deep along z. The typed launch (`ptxkit-host`) refuses any other shape: a kernel with
//!   a [`DisjointSlice`] gets only 1-D launches (in a 2-D one every x would repeat), one with a
//!   [`DisjointSlice2d`] only launches with one layer along z. The shape is the host's to check,
//!   once per launch, so the kernel pays nothing for it. [`DisjointSlice2d`] carries its row
//!   width and height from the host, so every thread maps (x, y) with the same width; x ≥ width
//!   or y ≥ height is refused, so the linear index `y * width + x` is unique too (with a width
//!   chosen by each thread, (5, 0) at width 100 and (0, 1) at width 5 would both be cell 5).
//! - A thread cannot hand its output or index to another thread: [`DisjointSlice`],
//!   [`ThreadIndex`] and their 2-D forms are neither `Copy`, `Clone`, `Send` nor `Sync`, and
//!   safe code has no memory shared between threads to put them in (a [`SharedTile`] holds
//!   only numbers; other shared memory is raw pointers, `unsafe` to use). `get_mut` borrows
//!   the slice mutably, so one thread holds at most one `&mut` element at a time.
//! - Each output comes from its own `&mut CudaSlice`/`&mut CudaViewMut` on the host, so two
//!   outputs, or an output and an input, never overlap.
//!
//! So the `&mut T` each thread gets is the only reference to that element anywhere in the launch.
//!
//! # Tiles, block and warp outputs, launch contracts
//!
//! Beyond one element per thread, a safe kernel has:
//!
//! - a **shared-memory tile**, [`SharedTile<T, N>`] (`T` a 32- or 64-bit number): written by
//!   the block, then a barrier, then read by any thread at any index.
//!   `shared_tile!(name: [T; N])` waits at a block barrier and gives the tile to write;
//!   [`write`](SharedTile::write) stores this thread's slot (its index in the block),
//!   [`write_per_warp`](SharedTile::write_per_warp) lane 0's slot of each warp,
//!   [`fill`](SharedTile::fill) every slot (slot *s* by thread *s* mod the block's size); the
//!   [`WrittenTile`] it returns has only [`sync`](WrittenTile::sync), the barrier, which returns
//!   the [`TileView`] to read ([`get`](TileView::get) → `Option<T>`, [`at`](TileView::at)),
//!   bounds-checked against the slots written;
//! - **block and warp outputs**, [`BlockSlice<T>`] and [`WarpSlice<T>`]: one element per block
//!   or per warp (the block and the warp as index spaces), written only through the
//!   [`BlockIndex`] that [`BlockIndex::leader`] gives the block's thread 0, or the
//!   [`WarpIndex`] that [`WarpIndex::leader`] gives lane 0 of each warp;
//! - **launch contracts**: [`GridSlice<T>`] (one element per thread), and [`BlockSlice`] and
//!   [`WarpSlice`] too, are passed as a bare pointer; the typed launch checks, once, that the
//!   buffer has an element for every thread (a 1-D launch), block or warp of the launch
//!   (`KernelArg::check_launch` in `ptxkit-host`; a short buffer is `Error::InvalidLaunch`), so
//!   indexing them (`y[i] = v`, `sums[block] = total`) emits no compare: the PTX is the raw
//!   kernel's store.
//!
//! ```ignore
//! #[kernel(launch_bounds(1024))]
//! pub fn block_sum(x: &[f32], mut sums: BlockSlice<f32>) {
//!     let i = ThreadIndex::global_1d();
//!     let value = warp_sum(x.get(i.get()).copied().unwrap_or(0.0));        // shuffles
//!     let partials = shared_tile!(warps: [f32; 32]).write_per_warp(value).sync();
//!     if warp::warp_id() == 0 {
//!         let total = warp_sum(partials.get(warp::lane() as usize).unwrap_or(0.0));
//!         if let Some(block) = BlockIndex::leader() {
//!             sums[block] = total;
//!         }
//!     }
//! }
//! // host: sums has one element per block (checked): gpu.launch(block_sum, cfg, (&x, &mut sums))?
//! ```
//!
//! ## Why tiles are sound
//!
//! - **No access outside the tile.** Each `shared_tile!` declares its own `.shared` array of
//!   `N` `T`s; every store is at a slot below `N` (checked where the slot comes from the
//!   thread's index), every load below the slots written (≤ `N`).
//! - **No data race, whatever the threads do.** Every tile access is one `ld`/`st.relaxed.cta.shared`
//!   of `T`'s width: a strong (relaxed, CTA-scope) operation, so two of them on one slot are
//!   never a data race in PTX's memory model, nor in Rust's (they are what relaxed atomics
//!   compile to). `T` is valid for every bit pattern (`TileElement`: `u32`, `i32`, `f32`,
//!   `u64`, `i64`, `f64`), so any value a load returns, even of a slot not yet written this
//!   phase, is a valid `T`. No reference into shared memory is ever handed out.
//! - **The values are the right ones where CUDA C's would be.** The write phase gives each
//!   thread its own slots (index in the block `thread::linear_idx()`, unique in the block;
//!   warp *w*'s lane 0; slots ≡ *t* mod the block's size), so no two threads write one slot;
//!   `sync()` is the barrier after every write, and `shared_tile!`'s own barrier comes after
//!   every read of the tile's previous use (a loop's previous iteration), as a CUDA C loop's
//!   second `__syncthreads()` does. A [`TileView`] exists only after `sync()` (the
//!   [`WrittenTile`] has no read), and neither handle is `Copy`, `Clone`, `Send` or `Sync`.
//!   A thread that reaches `sync()` has written its slots (the write consumes the tile), so
//!   when the whole block reaches it, [`TileView::len`] slots are written.
//!
//! **The remaining hazard: a barrier that not every thread reaches.** CUDA C's rule for
//! `__syncthreads()` holds for `shared_tile!` and `sync()`: every thread of the block reaches
//! each of them, in the same order (no tile under a branch that differs between threads of a
//! block, no early `return` before it, no tile in a loop whose trip count differs between
//! threads). Rust's types cannot see control flow, so this is the boundary of what the types
//! prove. Breaking it is not undefined behaviour: the barrier is `barrier.sync 0`, not
//! `bar.sync`'s `.aligned` form, so it is defined when the threads of a warp reach it apart,
//! and arrivals are counted per thread. What can happen is a hang (threads wait for others
//! that never arrive: the launch never completes) or wrong numbers (two barriers of
//! different tiles paired, so a read sees a slot of another phase or one not written: still
//! a valid `T`, by the point above). Write the tile's code straight-line at the kernel's top
//! level, guard work inside it rather than skip it (`x.get(i).unwrap_or(0.0)` for a thread
//! past the data, as the examples do), and the results are CUDA C's.
//!
//! ## Why block and warp outputs are sound
//!
//! - [`BlockIndex`] holds `blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z)`,
//!   unique to the block in a grid of any shape, and only the block's thread (0, 0, 0) gets
//!   one ([`BlockIndex::leader`] is `None` elsewhere). [`WarpIndex`] holds the block's index
//!   times the warps per block plus the warp's index in the block, unique to the warp, and only
//!   lane 0 (`linear_idx() % 32 == 0`) gets one. So each element has one writer in the launch.
//!   Both are made only there (private fields), and are neither `Copy`, `Clone`, `Send` nor
//!   `Sync`, as [`ThreadIndex`] is.
//! - The output comes from its own `&mut` buffer on the host (no overlap with another
//!   parameter), and the launch checked it has an element per block (grid x · y · z) or per
//!   warp (blocks · ⌈threads per block / 32⌉): every index is in bounds, with no check on the
//!   GPU.
//!
//! ## Why launch contracts are sound
//!
//! The host is the only maker of the launch: `gpu.launch` (and the cooperative, cluster and
//! module launches, through `KernelArgs::stage`) checks each contract against the launch's
//! own `LaunchConfig` before it is submitted, and refuses otherwise. In the kernel, the
//! indices ([`ThreadIndex`], [`BlockIndex`], [`WarpIndex`]) come only from the hardware
//! registers of that launch, so they are below what was checked. A contract output cannot be
//! made in the kernel (private fields) nor passed a buffer the host did not check (no other
//! `KernelArg` implementation makes one). Where the contract proves nothing (an input `&[T]`,
//! a [`DisjointSlice`]), the bounds check stays: the PTX test
//! `ptx_contract_drops_the_check_the_launch_proved_and_keeps_the_others` shows both in one
//! kernel.
//!
//! ## Why the block-shape contract is sound
//!
//! `#[kernel(block(x, y, z))]` lets the kernel's code assume `blockDim` = (x, y, z) and
//! `threadIdx` below it (the entry's first statement tells the compiler so). Two things make
//! the assumption true at run time: the entry's PTX carries `.reqntid x, y, z`, and the driver
//! refuses to launch it with any other block (PTX's rule for `.reqntid`; the GPU test
//! `gpu_block_shape_contract_gives_the_registers_values_and_refuses_other_shapes` launches
//! another shape past the typed launch and expects the refusal); and the typed launches
//! refuse another shape before that, naming the contract (the same argument as the launch
//! contracts above, which rest on the typed launch alone). Nothing else is assumed: the grid, the
//! buffers and the other contracts are checked as before. What it buys: a tile's `fill` with
//! a constant stride, a tile place `threadIdx + 1` proven inside a tile with no `%` and no
//! check.
//!
//! A grid-stride loop, a scatter (writes at computed indices) or atomics stay `unsafe fn`
//! kernels over raw pointers.
//!
//! # Bounds failures
//!
//! [`DisjointSlice::get_mut`] returns `None` out of bounds (`if let Some(out) = y.get_mut(i)`:
//! one compare, no trap). Indexing (`y[i] = v`) stops the kernel out of bounds: a `printf`
//! line (`gpu_print!`) names the kernel, the index and the length, then the device runtime's
//! `__assertfail` (the path of `device_assert!`) prints the kernel's name with the failing
//! block and thread, and the launch fails with `CUDA_ERROR_ASSERT`. Both are in a cold function
//! called off the hot path. Inputs are plain slices: `x[i]` out of bounds panics (the panic
//! handler prints where), `x.get(i)` returns `None`.

use core::marker::PhantomData;
use core::ops::{Index, IndexMut};

mod contract;
mod grid;
mod group;
mod tile;

pub use contract::GridSlice;
pub use grid::{Grid2d, Input2d, Window};
pub use group::{BlockIndex, BlockSlice, WarpIndex, WarpSlice};
pub use tile::{SharedTile, TileElement, TileView, WrittenTile};

#[cfg(target_arch = "nvptx64")]
use crate::thread::{block_dim_x, block_dim_y, block_idx_x, block_idx_y, thread_idx_x, thread_idx_y};

/// This thread's position in a 1-D launch: `blockIdx.x * blockDim.x + threadIdx.x`, unique to
/// the thread within the launch. Made only by [`ThreadIndex::global_1d`]; neither `Copy`,
/// `Clone`, `Send` nor `Sync`, so it cannot reach another thread (see the module's
/// documentation).
#[derive(Debug)]
pub struct ThreadIndex {
    index: usize,
    /// `!Send`, `!Sync`: the index belongs to this thread.
    _this_thread: PhantomData<*mut ()>,
}

impl ThreadIndex {
    /// This thread's global index in a 1-D launch (`blockIdx.x * blockDim.x + threadIdx.x`,
    /// in 64 bits so that it never wraps). The typed launch runs a kernel with a
    /// [`DisjointSlice`] only in a 1-D grid of 1-D blocks, where this index is unique.
    #[inline(always)]
    pub fn global_1d() -> Self {
        on_gpu!("ThreadIndex::global_1d", {
            let x = block_idx_x() as usize * block_dim_x() as usize + thread_idx_x() as usize;
            Self { index: x, _this_thread: PhantomData }
        })
    }

    /// The index, to read inputs at the same position (`x.get(i.get())`).
    #[inline(always)]
    pub fn get(&self) -> usize {
        self.index
    }
}

/// This thread's (x, y) in a 2-D launch: `x = blockIdx.x * blockDim.x + threadIdx.x`, `y`
/// likewise, unique to the thread within the launch. Made only by
/// [`ThreadIndex2d::global_2d`]; neither `Copy`, `Clone`, `Send` nor `Sync`.
#[derive(Debug)]
pub struct ThreadIndex2d {
    x: usize,
    y: usize,
    /// `!Send`, `!Sync`: the index belongs to this thread.
    _this_thread: PhantomData<*mut ()>,
}

impl ThreadIndex2d {
    /// This thread's global (x, y) in a 2-D (or 1-D) launch. The typed launch runs a kernel
    /// with a [`DisjointSlice2d`] only in a grid and blocks of one layer along z and of at
    /// most 2³² threads along x and along y, where (x, y) is unique.
    ///
    /// Computed in 32 bits, as CUDA C's `blockIdx.x * blockDim.x + threadIdx.x` is: the
    /// compiler then knows x and y are below 2³², so a kernel's compares and index products
    /// of them stay narrow and need no overflow checks. (A launch wider than 2³² threads
    /// wraps them; the typed launch refuses one with a `DisjointSlice2d`, where a wrapped
    /// index would be shared.)
    #[inline(always)]
    pub fn global_2d() -> Self {
        on_gpu!("ThreadIndex2d::global_2d", {
            let x = block_idx_x().wrapping_mul(block_dim_x()).wrapping_add(thread_idx_x()) as usize;
            let y = block_idx_y().wrapping_mul(block_dim_y()).wrapping_add(thread_idx_y()) as usize;
            Self { x, y, _this_thread: PhantomData }
        })
    }

    /// The column, to read inputs around this thread's cell.
    #[inline(always)]
    pub fn x(&self) -> usize {
        self.x
    }

    /// The row.
    #[inline(always)]
    pub fn y(&self) -> usize {
        self.y
    }
}

/// A kernel's output buffer of `T`, written one element per thread: each thread reaches only
/// the element of its own [`ThreadIndex`], so the `&mut T` it gets is not shared with any
/// other thread. The kernel parameter type for a `&mut CudaSlice<T>`/`&mut CudaViewMut<T>`;
/// `#[kernel]` makes it from the launch's pointer and length. Not `Copy`, `Clone`, `Send` or `Sync`.
pub struct DisjointSlice<'a, T> {
    ptr: *mut T,
    len: usize,
    /// The kernel's name, NUL-terminated, for bounds reports.
    kernel: &'static str,
    _elements: PhantomData<&'a mut [T]>,
}

impl<'a, T> DisjointSlice<'a, T> {
    /// The number of elements.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no elements.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// This thread's element, or `None` when `index` is past the end (a thread beyond the
    /// data).
    #[inline(always)]
    pub fn get_mut(&mut self, index: ThreadIndex) -> Option<&mut T> {
        if index.index < self.len {
            // SAFETY: in bounds of the buffer the host passed (valid, aligned, not aliased by
            // any other parameter); no other thread has this index (module documentation), and
            // `&mut self` keeps this thread to one reference at a time.
            Some(unsafe { &mut *self.ptr.add(index.index) })
        } else {
            None
        }
    }
}

impl<T> Index<ThreadIndex> for DisjointSlice<'_, T> {
    type Output = T;

    /// This thread's element; out of bounds, reports the kernel, block and thread and stops
    /// the kernel.
    #[inline(always)]
    fn index(&self, index: ThreadIndex) -> &T {
        if index.index >= self.len {
            out_of_bounds(self.kernel, index.index, self.len);
        }
        // SAFETY: in bounds (checked above); no other thread writes this element.
        unsafe { &*self.ptr.add(index.index) }
    }
}

impl<T> IndexMut<ThreadIndex> for DisjointSlice<'_, T> {
    /// This thread's element; out of bounds, reports the kernel, block and thread and stops
    /// the kernel.
    #[inline(always)]
    fn index_mut(&mut self, index: ThreadIndex) -> &mut T {
        if index.index >= self.len {
            out_of_bounds(self.kernel, index.index, self.len);
        }
        // SAFETY: as in `get_mut`.
        unsafe { &mut *self.ptr.add(index.index) }
    }
}

/// A kernel's output grid of `T`, row-major with a row width and a height fixed by the host,
/// written one cell per thread of a 2-D launch: each thread reaches only the cell (x, y) of
/// its own [`ThreadIndex2d`]. The kernel parameter type for a `ptxkit_host::RowsMut`;
/// `#[kernel]` makes it from the launch's pointer, width and height. Not `Copy`, `Clone`, `Send` or `Sync`.
pub struct DisjointSlice2d<'a, T> {
    ptr: *mut T,
    width: usize,
    height: usize,
    /// The kernel's name, NUL-terminated, for bounds reports.
    kernel: &'static str,
    _elements: PhantomData<&'a mut [T]>,
}

impl<'a, T> DisjointSlice2d<'a, T> {
    /// Cells per row.
    #[inline(always)]
    pub fn width(&self) -> usize {
        self.width
    }

    /// Rows.
    #[inline(always)]
    pub fn height(&self) -> usize {
        self.height
    }

    /// The linear index `y * width + x` of this thread's cell, if it is inside the grid.
    #[inline(always)]
    fn offset(&self, index: &ThreadIndex2d) -> Option<usize> {
        // x < width and y < height: the offset is below width * height, which the host
        // checked fits the buffer, so it neither wraps nor collides with another (x, y).
        (below_side(index.x, self.width) & below_side(index.y, self.height))
            .then(|| index.y * self.width + index.x)
    }

    /// This thread's cell, or `None` when (x, y) is outside the grid.
    #[inline(always)]
    pub fn get_mut(&mut self, index: ThreadIndex2d) -> Option<&mut T> {
        let offset = self.offset(&index)?;
        // SAFETY: inside the buffer (see `offset`); no other thread has this (x, y), and
        // `&mut self` keeps this thread to one reference at a time.
        Some(unsafe { &mut *self.ptr.add(offset) })
    }
}

impl<T> Index<ThreadIndex2d> for DisjointSlice2d<'_, T> {
    type Output = T;

    /// This thread's cell; outside the grid, reports the kernel, block and thread and stops
    /// the kernel.
    #[inline(always)]
    fn index(&self, index: ThreadIndex2d) -> &T {
        let Some(offset) = self.offset(&index) else {
            out_of_grid(self.kernel, index.x, index.y, self.width, self.height)
        };
        // SAFETY: inside the buffer; no other thread writes this cell.
        unsafe { &*self.ptr.add(offset) }
    }
}

impl<T> IndexMut<ThreadIndex2d> for DisjointSlice2d<'_, T> {
    /// This thread's cell; outside the grid, reports the kernel, block and thread and stops
    /// the kernel.
    #[inline(always)]
    fn index_mut(&mut self, index: ThreadIndex2d) -> &mut T {
        let Some(offset) = self.offset(&index) else {
            out_of_grid(self.kernel, index.x, index.y, self.width, self.height)
        };
        // SAFETY: as in `get_mut`.
        unsafe { &mut *self.ptr.add(offset) }
    }
}

/// `x < side` for a `side` below 2³² (a 2-D grid's width or height), as a 32-bit compare
/// and a test of `x`'s upper half, which the compiler drops where `x` was widened from a
/// `u32` (a thread's coordinate, a tile's cell): the one `setp.lt.u32` a CUDA C author
/// writes, not a 64-bit compare (two instructions in SASS, `ISETP` and `ISETP.EX`).
#[inline(always)]
pub(crate) fn below_side(x: usize, side: usize) -> bool {
    debug_assert!(side <= u32::MAX as usize);
    ((x as u64 >> 32) == 0) & ((x as u32) < side as u32)
}

/// Reports an output index out of bounds and stops the kernel: a `printf` line naming the
/// kernel, the index and the length ([`gpu_print!`](crate::gpu_print)), then `__assertfail`
/// (the path of `device_assert!`: the driver prints the kernel's name, this block and thread,
/// and the launch fails with `CUDA_ERROR_ASSERT`).
#[cold]
#[inline(never)]
fn out_of_bounds(kernel: &'static str, index: usize, len: usize) -> ! {
    crate::gpu_print!(
        "%s: output index %lu out of bounds of a DisjointSlice of %lu elements\n",
        kernel.as_ptr(),
        index,
        len
    );
    stop(kernel)
}

/// [`out_of_bounds`] for a [`DisjointSlice2d`]: the cell and the grid's shape.
#[cold]
#[inline(never)]
fn out_of_grid(kernel: &'static str, x: usize, y: usize, width: usize, height: usize) -> ! {
    crate::gpu_print!(
        "%s: output cell (%lu, %lu) outside a DisjointSlice2d of %lu x %lu cells\n",
        kernel.as_ptr(),
        x,
        y,
        width,
        height
    );
    stop(kernel)
}

/// [`out_of_bounds`] for a [`TileView`] (which knows no kernel name): the index and the
/// number of slots written.
#[cold]
#[inline(never)]
fn tile_out_of_bounds(index: usize, len: usize) -> ! {
    crate::gpu_print!("shared tile index %lu out of bounds of %lu written slots\n", index, len);
    stop("a safe kernel\0")
}

/// Stops the kernel through `__assertfail`, naming it.
fn stop(kernel: &'static str) -> ! {
    // SAFETY: NUL-terminated static strings (`kernel` is made so by `#[kernel]`).
    unsafe { crate::assert_fail("output index in bounds\0", concat!(file!(), "\0"), line!(), kernel) }
}

/// The kernel parameter type `Kernel::Params` names for a read-only input `&[T]` (host builds):
/// the typed launch passes a `&CudaSlice<T>` or `&CudaView<T>` for it, as two `.param`s, the
/// device pointer (`.ptr`, global memory) and the length. A marker, never made.
pub struct Input<T>(PhantomData<fn() -> T>);

/// The kernel parameter type `Kernel::Params` names for an output [`DisjointSlice<T>`]: the
/// typed launch passes a `&mut CudaSlice<T>` or `&mut CudaViewMut<T>` for it, as the device
/// pointer and the length. A marker, never made.
pub struct Output<T>(PhantomData<fn() -> T>);

/// The kernel parameter type `Kernel::Params` names for an output [`DisjointSlice2d<T>`]: the
/// typed launch passes a `ptxkit_host::RowsMut` for it, as the device pointer, the row width
/// and the height (`RowsMut` checks that `width * height` cells fit the buffer). A marker,
/// never made.
pub struct Output2d<T>(PhantomData<fn() -> T>);

/// A read-only input rebuilt from its two `.param`s (used by `#[kernel]`'s entry point).
///
/// # Safety
/// `ptr` is non-null, aligned, and points to `len` initialised `T`s that nothing writes during
/// `'a`: what the host's typed launch passes for a `&CudaSlice<T>`.
#[doc(hidden)]
#[inline(always)]
pub unsafe fn input_from_raw_parts<'a, T>(ptr: *const T, len: usize) -> &'a [T] {
    // SAFETY: the caller's promise (telling the compiler that `ptr` is non-null saves a test
    // in every `get`).
    unsafe {
        core::hint::assert_unchecked(!ptr.is_null());
        core::slice::from_raw_parts(ptr, len)
    }
}

impl<'a, T> DisjointSlice<'a, T> {
    /// An output rebuilt from its two `.param`s (used by `#[kernel]`'s entry point); `kernel`
    /// is the kernel's name, NUL-terminated.
    ///
    /// # Safety
    /// `ptr` is non-null, aligned, and points to `len` initialised `T`s that no other parameter
    /// of the launch reaches: what the host's typed launch passes for a `&mut CudaSlice<T>`.
    /// The launch is 1-D (one block and one thread along y and z: the typed launch checks it),
    /// so that [`ThreadIndex`] is unique. Made once per thread, at the kernel's start.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_raw_parts(ptr: *mut T, len: usize, kernel: &'static str) -> Self {
        // SAFETY: the caller's promise.
        unsafe { core::hint::assert_unchecked(!ptr.is_null()) };
        DisjointSlice { ptr, len, kernel, _elements: PhantomData }
    }
}

impl<'a, T> DisjointSlice2d<'a, T> {
    /// An output grid rebuilt from its three `.param`s (used by `#[kernel]`'s entry point);
    /// `kernel` is the kernel's name, NUL-terminated.
    ///
    /// # Safety
    /// As [`DisjointSlice::from_raw_parts`], with `width * height` (not overflowing) `T`s,
    /// `width` and `height` below 2³², and a launch one layer deep along z (grid and block)
    /// and at most 2³² threads along x and y, so that [`ThreadIndex2d`] is unique: what the
    /// host's typed launch checks (`RowsMut`'s `check_launch`).
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_raw_parts(ptr: *mut T, width: usize, height: usize, kernel: &'static str) -> Self {
        // SAFETY: the caller's promise.
        unsafe { core::hint::assert_unchecked(!ptr.is_null()) };
        // Below 2³² (the caller's promise), so these change nothing, but the compiler then
        // knows the bound: the kernel's compares with width and height stay in 32 bits and
        // products of them with x and y need no overflow checks.
        let (width, height) = (width as u32 as usize, height as u32 as usize);
        DisjointSlice2d { ptr, width, height, kernel, _elements: PhantomData }
    }
}
