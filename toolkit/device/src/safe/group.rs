//! Outputs of one element per block or per warp: the block and the warp as index spaces
//! (the soundness argument is in the [`safe`](super) module's documentation).

use core::marker::PhantomData;
use core::ops::{Index, IndexMut};

/// This block's index in the grid, x fastest: `blockIdx.x + gridDim.x * (blockIdx.y +
/// gridDim.y * blockIdx.z)` (64-bit), unique to the block in a launch of any shape. Made only
/// by [`BlockIndex::leader`], which gives it to one thread of the block; neither `Copy`,
/// `Clone`, `Send` nor `Sync`.
#[derive(Debug)]
pub struct BlockIndex {
    index: usize,
    /// `!Send`, `!Sync`: the index belongs to this thread.
    _this_thread: PhantomData<*mut ()>,
}

impl BlockIndex {
    /// The block's index, for its leader: `Some` in the block's thread (0, 0, 0) only, `None`
    /// in every other thread.
    #[inline(always)]
    pub fn leader() -> Option<Self> {
        on_gpu!("BlockIndex::leader", {
            (crate::thread::linear_idx() == 0)
                .then(|| Self { index: linear_block(), _this_thread: PhantomData })
        })
    }

    /// The index, to read inputs at the block's position.
    #[inline(always)]
    pub fn get(&self) -> usize {
        self.index
    }
}

/// This warp's index in the grid: the block's index ([`BlockIndex`]) times the warps per
/// block (`ceil(threads per block / 32)`), plus the warp's index in its block
/// (`thread::linear_idx() / 32`, as the hardware forms warps), unique to the warp in a launch
/// of any shape. Made only by [`WarpIndex::leader`], which gives it to lane 0 of each warp;
/// neither `Copy`, `Clone`, `Send` nor `Sync`.
#[derive(Debug)]
pub struct WarpIndex {
    index: usize,
    /// `!Send`, `!Sync`: the index belongs to this thread.
    _this_thread: PhantomData<*mut ()>,
}

impl WarpIndex {
    /// The warp's index, for its leader: `Some` in lane 0 of each warp (the thread whose
    /// `thread::linear_idx()` is a multiple of 32), `None` in the other lanes.
    #[inline(always)]
    pub fn leader() -> Option<Self> {
        on_gpu!("WarpIndex::leader", {
            use crate::thread::{block_dim_x, block_dim_y, block_dim_z, linear_idx};
            let thread = linear_idx();
            (thread % crate::warp::SIZE == 0).then(|| {
                let warps_per_block =
                    (block_dim_x() * block_dim_y() * block_dim_z()).div_ceil(crate::warp::SIZE);
                let index = linear_block() * warps_per_block as usize + (thread / crate::warp::SIZE) as usize;
                Self { index, _this_thread: PhantomData }
            })
        })
    }

    /// The index, to read inputs at the warp's position.
    #[inline(always)]
    pub fn get(&self) -> usize {
        self.index
    }
}

/// `blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z)` in 64 bits.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
fn linear_block() -> usize {
    use crate::thread::{block_idx_x, block_idx_y, block_idx_z, grid_dim_x, grid_dim_y};
    block_idx_x() as usize
        + grid_dim_x() as usize * (block_idx_y() as usize + grid_dim_y() as usize * block_idx_z() as usize)
}

/// Implements an output of one element per `$index`, its length checked by the launch.
macro_rules! group_output {
    ($(#[$doc:meta])* $name:ident, $index:ident) => {
        $(#[$doc])*
        #[repr(transparent)]
        pub struct $name<T> {
            /// The buffer's device pointer, a kernel pointer parameter (global memory).
            ptr: *mut T,
            _elements: PhantomData<*mut T>,
        }

        impl<T> $name<T> {
            /// The element at `index`.
            #[inline(always)]
            fn element(&self, index: &$index) -> *mut T {
                // SAFETY: in bounds: the typed launch checked that the buffer has an element
                // for every index of this launch (`ptxkit-host`'s `KernelArg::check_launch`).
                unsafe { self.ptr.add(index.index) }
            }
        }

        impl<T> Index<$index> for $name<T> {
            type Output = T;

            /// The element of this index: in bounds by the launch contract, so no check.
            #[inline(always)]
            fn index(&self, index: $index) -> &T {
                // SAFETY: in bounds (`element`); no other thread writes it.
                unsafe { &*self.element(&index) }
            }
        }

        impl<T> IndexMut<$index> for $name<T> {
            /// The element of this index: in bounds by the launch contract, so no check.
            #[inline(always)]
            fn index_mut(&mut self, index: $index) -> &mut T {
                // SAFETY: in bounds (`element`); only this thread holds this index in the
                // launch (its leader's), and `&mut self` keeps it to one reference at a time.
                unsafe { &mut *self.element(&index) }
            }
        }
    };
}

group_output!(
    /// A kernel's output of one `T` per block: element *b* is written by the leader of block
    /// *b* only (`out[block] = v`), through the [`BlockIndex`] that [`BlockIndex::leader`]
    /// gives it. A kernel parameter (safe kernels) for a `&mut CudaSlice<T>`/`&mut
    /// CudaViewMut<T>` with at least one element per block of the launch (the typed launch
    /// refuses a grid of more blocks: the launch contract), so indexing it checks nothing;
    /// passed as the device pointer alone. Any launch shape. Neither `Copy`, `Clone`, `Send`
    /// nor `Sync`.
    ///
    /// ```ignore
    /// if let Some(block) = BlockIndex::leader() { sums[block] = total }
    /// ```
    BlockSlice,
    BlockIndex
);

group_output!(
    /// A kernel's output of one `T` per warp: element *w* is written by lane 0 of warp *w*
    /// only (`out[warp] = v`), through the [`WarpIndex`] that [`WarpIndex::leader`] gives it.
    /// A kernel parameter (safe kernels) for a `&mut CudaSlice<T>`/`&mut CudaViewMut<T>` with
    /// at least one element per warp of the launch (blocks × ⌈threads per block / 32⌉: the
    /// launch contract), passed as [`BlockSlice`] is. Any launch shape. Neither `Copy`,
    /// `Clone`, `Send` nor `Sync`.
    ///
    /// ```ignore
    /// if let Some(warp) = WarpIndex::leader() { sums[warp] = warp_sum }
    /// ```
    WarpSlice,
    WarpIndex
);
