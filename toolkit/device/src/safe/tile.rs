//! [`SharedTile`]: a shared-memory tile a safe kernel writes, synchronises and reads (the
//! soundness argument is in the [`safe`](super) module's documentation).

use core::marker::PhantomData;

/// An element of a [`SharedTile`]: a 32- or 64-bit number, valid for every bit pattern, so a
/// tile slot read at any time holds a valid value. Sealed.
pub trait TileElement: Copy + sealed::Sealed {
    /// The shared-memory load and store of this width, as relaxed CTA-scope operations.
    #[doc(hidden)]
    unsafe fn load_relaxed(address: u32) -> Self;
    #[doc(hidden)]
    unsafe fn store_relaxed(address: u32, value: Self);
}

mod sealed {
    pub trait Sealed {}
}

/// Implements [`TileElement`] for `$ty`, moved as `$bits` (`$ptx` wide) through `$to`/`$from`.
macro_rules! tile_element {
    ($($ty:ty, $bits:ty, $ptx:literal, $reg:ident, $to:expr, $from:expr;)*) => {$(
        impl sealed::Sealed for $ty {}
        impl TileElement for $ty {
            #[inline(always)]
            unsafe fn load_relaxed(address: u32) -> Self {
                on_gpu!("SharedTile load", {
                    let bits: $bits;
                    // SAFETY: the caller passes an in-bounds, aligned shared-space address. A
                    // relaxed load is a strong operation: racing with a store is no data race.
                    unsafe {
                        core::arch::asm!(
                            concat!("ld.relaxed.cta.shared.", $ptx, " {v}, [{a}];"),
                            v = out($reg) bits,
                            a = in(reg32) address,
                            options(readonly, nostack, preserves_flags),
                        );
                    }
                    ($from)(bits)
                })
            }
            #[inline(always)]
            unsafe fn store_relaxed(address: u32, value: Self) {
                on_gpu!("SharedTile store", {
                    let bits: $bits = ($to)(value);
                    // SAFETY: as in `load_relaxed`.
                    unsafe {
                        core::arch::asm!(
                            concat!("st.relaxed.cta.shared.", $ptx, " [{a}], {v};"),
                            a = in(reg32) address,
                            v = in($reg) bits,
                            options(nostack, preserves_flags),
                        );
                    }
                })
            }
        }
    )*};
}

tile_element! {
    u32, u32, "b32", reg32, |v: u32| v, |b: u32| b;
    i32, u32, "b32", reg32, |v: i32| v as u32, |b: u32| b as i32;
    f32, u32, "b32", reg32, f32::to_bits, f32::from_bits;
    u64, u64, "b64", reg64, |v: u64| v, |b: u64| b;
    i64, u64, "b64", reg64, |v: i64| v as u64, |b: u64| b as i64;
    f64, u64, "b64", reg64, f64::to_bits, f64::from_bits;
}

/// `barrier.sync 0`: CUDA C's `__syncthreads()` in its non-`.aligned` form (sm_70+), whose
/// arrivals are counted per thread, so it stays defined where the compiler or the kernel
/// reaches it from diverged paths of a warp.
#[inline(always)]
fn block_barrier() {
    on_gpu!("SharedTile barrier", {
        // SAFETY: a barrier touches no memory the program sees; it orders memory (no `nomem`).
        unsafe { core::arch::asm!("barrier.sync 0;", options(nostack, preserves_flags)) }
    })
}

/// This thread's index in its block and the block's size in threads.
#[inline(always)]
fn thread_in_block() -> (u32, u32) {
    use crate::thread::{block_dim_x, block_dim_y, block_dim_z, linear_idx};
    (linear_idx(), block_dim_x() * block_dim_y() * block_dim_z())
}

/// A block's shared-memory tile of `N` `T`s, before its write phase: CUDA C's
/// `__shared__ T tile[N];` used as *write, `__syncthreads()`, read*. Made by
/// [`shared_tile!`](crate::shared_tile), which first waits at a block barrier, so that reads of
/// the tile's earlier use (a loop's previous iteration) are over before anyone writes.
///
/// ```ignore
/// let partials = shared_tile!(sums: [f32; 32]).write_per_warp(warp_sum).sync();
/// let total = partials.get(lane).unwrap_or(0.0);
/// ```
///
/// The write phase gives each thread its own slots: [`write`](SharedTile::write) slot *t* for
/// the block's thread *t* (`thread::linear_idx`), [`write_per_warp`](SharedTile::write_per_warp)
/// slot *w* for lane 0 of the block's warp *w*, [`fill`](SharedTile::fill) every slot, slot
/// *s* by thread *s* mod the block's size. [`WrittenTile::sync`] then waits at the barrier and
/// returns a [`TileView`] that any thread reads at any index, bounds-checked. Neither handle is
/// `Copy`, `Clone`, `Send` or `Sync`.
pub struct SharedTile<T: TileElement, const N: usize> {
    /// Byte address of slot 0 in the shared state space.
    base: u32,
    _slots: PhantomData<*mut T>,
}

/// A [`SharedTile`] this thread has written: [`sync`](WrittenTile::sync) to read it.
#[must_use = "a written tile is read after `sync()`, which every thread of the block must reach"]
pub struct WrittenTile<T: TileElement, const N: usize> {
    base: u32,
    /// Slots 0..readable were written by some thread of the block.
    readable: u32,
    _slots: PhantomData<*mut T>,
}

/// A [`SharedTile`] after the block's barrier: every thread reads every written slot.
pub struct TileView<T: TileElement, const N: usize> {
    base: u32,
    readable: u32,
    _slots: PhantomData<*mut T>,
}

impl<T: TileElement, const N: usize> SharedTile<T, N> {
    /// The tile at shared-space address `base`, after a block barrier (used by
    /// [`shared_tile!`](crate::shared_tile)).
    ///
    /// # Safety
    /// `base` is the shared-space address of `N` `T`s, aligned for `T`, reached by nothing but
    /// this tile's handles (a `.shared` array declared for it alone).
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_shared_address(base: u32) -> Self {
        const { assert!(N > 0 && N * core::mem::size_of::<T>() <= 48 * 1024, "a tile of 1..=48 KiB") };
        block_barrier();
        Self { base, _slots: PhantomData }
    }

    /// The number of slots, `N`.
    #[inline(always)]
    pub const fn capacity(&self) -> usize {
        N
    }

    /// Stores `value` at `slot` (in bounds: the callers check).
    #[inline(always)]
    fn store(&self, slot: u32, value: T) {
        debug_assert!((slot as usize) < N);
        // SAFETY: slot < N: inside the tile's `.shared` array, aligned for `T`.
        unsafe { T::store_relaxed(self.base + slot * core::mem::size_of::<T>() as u32, value) }
    }

    /// The write phase's end, the first `readable` slots written.
    #[inline(always)]
    fn written(self, readable: u32) -> WrittenTile<T, N> {
        WrittenTile { base: self.base, readable, _slots: PhantomData }
    }

    /// Writes this thread's slot, its index in the block (`thread::linear_idx`): a thread
    /// past `N` writes nothing. The tile then holds `min(N, threads per block)` values.
    #[inline(always)]
    pub fn write(self, value: T) -> WrittenTile<T, N> {
        let (thread, threads) = thread_in_block();
        if (thread as usize) < N {
            self.store(thread, value);
        }
        self.written(threads.min(N as u32))
    }

    /// Writes one slot per warp: lane 0 of the block's warp *w* (`warp::warp_id`) stores its
    /// `value` at slot *w*; the other lanes' values are not stored (pass the warp's reduced
    /// value, the same in every lane). The tile then holds `min(N, warps per block)` values.
    #[inline(always)]
    pub fn write_per_warp(self, value: T) -> WrittenTile<T, N> {
        let (thread, threads) = thread_in_block();
        let warp = thread / crate::warp::SIZE;
        if thread % crate::warp::SIZE == 0 && (warp as usize) < N {
            self.store(warp, value);
        }
        self.written(threads.div_ceil(crate::warp::SIZE).min(N as u32))
    }

    /// Writes every slot: thread *t* of a block of *B* threads stores `value(s)` at slots
    /// *s* = *t*, *t* + *B*, *t* + 2*B*, ... below `N`. The tile then holds `N` values.
    #[inline(always)]
    pub fn fill(self, mut value: impl FnMut(usize) -> T) -> WrittenTile<T, N> {
        let (thread, threads) = thread_in_block();
        let mut slot = thread;
        while (slot as usize) < N {
            self.store(slot, value(slot as usize));
            slot += threads;
        }
        self.written(N as u32)
    }
}

impl<T: TileElement, const N: usize> WrittenTile<T, N> {
    /// CUDA C's `__syncthreads()` (`barrier.sync 0`): waits until every thread of the block
    /// has written its slots, then returns the tile to read. Every thread of the block must
    /// reach it (see the [`safe`](super) module: a barrier under a divergent branch).
    #[inline(always)]
    pub fn sync(self) -> TileView<T, N> {
        block_barrier();
        TileView { base: self.base, readable: self.readable, _slots: PhantomData }
    }
}

impl<T: TileElement, const N: usize> TileView<T, N> {
    /// The number of slots written: `N` after [`SharedTile::fill`], `min(N, threads per
    /// block)` after [`SharedTile::write`], `min(N, warps per block)` after
    /// [`SharedTile::write_per_warp`].
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.readable as usize
    }

    /// Whether no slot was written (a tile written per thread in a block of no threads).
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.readable == 0
    }

    /// Slot `index`, or `None` past [`len`](TileView::len).
    #[inline(always)]
    pub fn get(&self, index: usize) -> Option<T> {
        if index < self.readable as usize {
            // SAFETY: index < readable ≤ N: inside the tile, aligned for `T`.
            Some(unsafe { T::load_relaxed(self.base + index as u32 * core::mem::size_of::<T>() as u32) })
        } else {
            None
        }
    }

    /// Slot `index`; past [`len`](TileView::len), reports the index and stops the kernel
    /// (`printf`, then `__assertfail`: the launch fails with `CUDA_ERROR_ASSERT`).
    #[inline(always)]
    pub fn at(&self, index: usize) -> T {
        match self.get(index) {
            Some(value) => value,
            None => super::tile_out_of_bounds(index, self.readable as usize),
        }
    }
}

/// Declares a block's shared-memory tile of `N` `T`s for a safe kernel and returns it as a
/// [`SharedTile`](crate::safe::SharedTile) ready to write, after a block barrier that ends
/// the tile's earlier use. `T` is `u32`, `i32`, `f32`, `u64`, `i64` or `f64`; the name
/// becomes the PTX symbol (unique within the kernel, as with [`shared!`](crate::shared)).
///
/// ```ignore
/// let row = shared_tile!(row_cache: [f32; 256]).fill(|s| input.get(base + s).copied().unwrap_or(0.0)).sync();
/// ```
/// Every thread of the block must reach it, in the same order as the block's other barriers.
#[macro_export]
macro_rules! shared_tile {
    ($name:ident : [$ty:ty; $len:expr]) => {{
        let base: u32;
        // In a host build (kernel bodies are type-checked there, never run) address 0.
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let _ = ($len) * core::mem::size_of::<$ty>();
            base = 0;
        }
        // SAFETY: declares a `.shared` array for this tile alone and reads its shared-space
        // address; the asm reads and writes no memory.
        #[cfg(target_arch = "nvptx64")]
        unsafe {
            core::arch::asm!(
                concat!(".shared .align 16 .b8 ", stringify!($name), "[{bytes}];"),
                concat!("mov.u32 {base}, ", stringify!($name), ";"),
                bytes = const ($len) * core::mem::size_of::<$ty>(),
                base = out(reg32) base,
                options(nomem, nostack, preserves_flags),
            );
        }
        // SAFETY: `base` is this array's address: `$len` `$ty`s, 16-byte aligned, used by no
        // other name.
        unsafe { $crate::safe::SharedTile::<$ty, { $len }>::from_shared_address(base) }
    }};
}
