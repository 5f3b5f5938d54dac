//! Thread-block clusters (sm_90, PTX 7.8+; the module using them is built with
//! `.arch("sm_90")`): up to 8 blocks (16 where the GPU allows it) that run at once on
//! neighbouring SMs, synchronise together and read and write each other's shared memory
//! (distributed shared memory). CUDA C's `cooperative_groups::this_cluster()`, cuda-oxide's
//! `cluster_sync` and `map_shared_rank`.
//!
//! The host launches a kernel in clusters with `ptxkit_host::Gpu::launch_cluster` (the grid a
//! multiple of the cluster's shape).
//!
//! ```ignore
//! let bins = shared!(bins: [u32; 256]);
//! // ... zero this block's bins ...
//! cluster::sync();                                    // every block's bins are zeroed
//! let owner = cluster::map_shared_rank(bins, value / 256);   // another block's array
//! unsafe { owner.fetch_add(value % 256, 1) };          // atom.shared::cluster.add.u32
//! cluster::sync();                                    // every add done before any block exits
//! ```
//!
//! A block must not exit while another block of its cluster may still access its shared
//! memory: end with [`sync`] after the last remote access.

use crate::SharedArray;
use crate::mbarrier::Mbarrier;

macro_rules! special_register {
    ($(#[$doc:meta])* $name:ident, $register:literal) => {
        $(#[$doc])*
        #[inline(always)]
        pub fn $name() -> u32 {
            on_gpu!("cluster::special_register", {
                let value: u32;
                // SAFETY: reads a special register.
                unsafe {
                    core::arch::asm!(
                        concat!("mov.u32 {v}, ", $register, ";"),
                        v = out(reg32) value,
                        options(pure, nomem, nostack, preserves_flags),
                    )
                }
                value
            })
        }
    };
}

special_register!(
    /// This block's rank in its cluster, 0 to [`blocks`]` - 1` (`%cluster_ctarank`;
    /// `cluster.block_rank()`).
    block_rank,
    "%cluster_ctarank"
);
special_register!(
    /// The number of blocks in the cluster (`%cluster_nctarank`; `cluster.num_blocks()`).
    blocks,
    "%cluster_nctarank"
);
special_register!(
    /// The cluster's index in the grid of clusters, x (`%clusterid.x`).
    cluster_idx_x,
    "%clusterid.x"
);
special_register!(
    /// The cluster's index in the grid of clusters, y (`%clusterid.y`).
    cluster_idx_y,
    "%clusterid.y"
);
special_register!(
    /// The cluster's index in the grid of clusters, z (`%clusterid.z`).
    cluster_idx_z,
    "%clusterid.z"
);
special_register!(
    /// This block's index within its cluster, x (`%cluster_ctaid.x`; `cluster.block_index().x`).
    block_idx_in_cluster_x,
    "%cluster_ctaid.x"
);
special_register!(
    /// This block's index within its cluster, y (`%cluster_ctaid.y`).
    block_idx_in_cluster_y,
    "%cluster_ctaid.y"
);
special_register!(
    /// This block's index within its cluster, z (`%cluster_ctaid.z`).
    block_idx_in_cluster_z,
    "%cluster_ctaid.z"
);
special_register!(
    /// The cluster's width in blocks (`%cluster_nctaid.x`; `cluster.dim_blocks().x`).
    dim_x,
    "%cluster_nctaid.x"
);
special_register!(
    /// The cluster's height in blocks (`%cluster_nctaid.y`).
    dim_y,
    "%cluster_nctaid.y"
);
special_register!(
    /// The cluster's depth in blocks (`%cluster_nctaid.z`).
    dim_z,
    "%cluster_nctaid.z"
);

/// Waits until every thread of every block of the cluster has arrived, with release and
/// acquire semantics at cluster scope (`barrier.cluster.arrive.release` then
/// `barrier.cluster.wait.acquire`; `cluster.sync()`): writes before it, to any block's shared
/// memory, are seen after it.
#[inline(always)]
pub fn sync() {
    arrive();
    wait();
}

/// The first half of [`sync`]: this thread has arrived (`barrier.cluster.arrive.release`), and
/// may work on before [`wait`].
#[inline(always)]
pub fn arrive() {
    on_gpu!("cluster::arrive", {
        // SAFETY: a barrier (no `nomem`); every thread of the cluster reaches it (the kernel's
        // structure, as for `sync_threads`).
        unsafe { core::arch::asm!("barrier.cluster.arrive.release;", options(nostack, preserves_flags)) }
    })
}

/// The second half of [`sync`]: waits for every thread's [`arrive`]
/// (`barrier.cluster.wait.acquire`).
#[inline(always)]
pub fn wait() {
    on_gpu!("cluster::wait", {
        // SAFETY: as in `arrive`.
        unsafe { core::arch::asm!("barrier.cluster.wait.acquire;", options(nostack, preserves_flags)) }
    })
}

/// The same shared array in the block of rank `rank` of this cluster (`mapa.shared::cluster`;
/// `cluster.map_shared_rank(ptr, rank)`).
#[inline(always)]
pub fn map_shared_rank<T: Copy>(array: SharedArray<T>, rank: u32) -> RemoteShared<T> {
    RemoteShared { base: map_address(array.shared_address(), rank), element: core::marker::PhantomData }
}

/// A barrier of a block of this cluster, possibly another's ([`map_mbarrier`]): the one that
/// [`RemoteShared::store_async`] counts its bytes on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RemoteMbarrier {
    address: u32,
}

/// The same barrier in the block of rank `rank` of this cluster (`mapa.shared::cluster`).
#[inline(always)]
pub fn map_mbarrier(barrier: Mbarrier, rank: u32) -> RemoteMbarrier {
    RemoteMbarrier { address: map_address(barrier.shared_address(), rank) }
}

/// The `shared::cluster` address of this block's shared-space address `address` in the block
/// of rank `rank` (`mapa.shared::cluster.u32`).
#[inline(always)]
fn map_address(address: u32, rank: u32) -> u32 {
    on_gpu!("cluster::map_address", {
        let base: u32;
        // SAFETY: maps an address between blocks; no memory is touched.
        unsafe {
            core::arch::asm!(
                "mapa.shared::cluster.u32 {d}, {s}, {r};",
                d = out(reg32) base,
                s = in(reg32) address,
                r = in(reg32) rank,
                options(pure, nomem, nostack, preserves_flags),
            )
        }
        base
    })
}

/// A shared array of a block of this cluster, possibly another's ([`map_shared_rank`]),
/// addressed in the `shared::cluster` state space. Loads, stores and atomics of 32-bit values.
#[derive(Clone, Copy)]
pub struct RemoteShared<T: Copy> {
    base: u32,
    element: core::marker::PhantomData<T>,
}

mod sealed {
    pub trait Sealed {}
}

/// A 32-bit type [`RemoteShared`] loads and stores (`u32`, `i32`, `f32`).
pub trait RemoteElement: Copy + sealed::Sealed {
    /// The value's bits.
    fn to_bits(self) -> u32;
    /// The value of `bits`.
    fn from_bits(bits: u32) -> Self;
}

macro_rules! remote_elements {
    ($($ty:ty: $to:expr, $from:expr);* $(;)?) => {
        $(
            impl sealed::Sealed for $ty {}
            impl RemoteElement for $ty {
                #[inline(always)]
                fn to_bits(self) -> u32 {
                    $to(self)
                }
                #[inline(always)]
                fn from_bits(bits: u32) -> Self {
                    $from(bits)
                }
            }
        )*
    };
}
remote_elements!(
    u32: |v| v, |b| b;
    i32: |v: i32| v as u32, |b: u32| b as i32;
    f32: f32::to_bits, f32::from_bits;
);

impl<T: Copy + RemoteElement> RemoteShared<T> {
    /// The `shared::cluster` byte address of element `index`.
    #[inline(always)]
    fn address(self, index: u32) -> u32 {
        self.base.wrapping_add(index.wrapping_mul(4))
    }

    /// `array[index]` in the other block (`ld.shared::cluster.b32`).
    ///
    /// # Safety
    /// `index` is in bounds; the owning block has not exited and wrote the element before, a
    /// [`sync`] in between.
    #[inline(always)]
    pub unsafe fn load(self, index: u32) -> T {
        on_gpu!("RemoteShared::load", {
            let bits: u32;
            // SAFETY: the caller's contract.
            unsafe {
                core::arch::asm!(
                    "ld.shared::cluster.b32 {v}, [{a}];",
                    v = out(reg32) bits,
                    a = in(reg32) self.address(index),
                    options(readonly, nostack, preserves_flags),
                )
            }
            T::from_bits(bits)
        })
    }

    /// `array[index] = value` in the other block (`st.shared::cluster.b32`).
    ///
    /// # Safety
    /// `index` is in bounds; the owning block has not exited; no other thread accesses the
    /// element without a [`sync`] in between.
    #[inline(always)]
    pub unsafe fn store(self, index: u32, value: T) {
        on_gpu!("RemoteShared::store", {
            // SAFETY: the caller's contract.
            unsafe {
                core::arch::asm!(
                    "st.shared::cluster.b32 [{a}], {v};",
                    a = in(reg32) self.address(index),
                    v = in(reg32) value.to_bits(),
                    options(nostack, preserves_flags),
                )
            }
        })
    }

    /// `array[index] = value` in the other block, without waiting for it, the store's 4 bytes
    /// counted on `barrier`, a barrier of that block
    /// (`st.async.shared::cluster.mbarrier::complete_tx::bytes.b32`; sm_90, PTX ISA 8.1, so the
    /// module is built with `-C target-feature=+ptx81` or later). The owning block's threads see
    /// the value once they have waited for the phase the bytes complete
    /// ([`Mbarrier::wait_parity_cluster`]): the phase's expected bytes (an
    /// [`Mbarrier::arrive_expect_tx`] there) count these stores. No fence, no cluster barrier.
    ///
    /// # Safety
    /// The owning block is another block of this cluster (not the caller's own: the PTX ISA
    /// leaves that undefined) and has not exited; `index` is in bounds; every earlier access
    /// to the element by the owning block happens before this store, and none follows until
    /// the owning block has waited for the phase; `barrier` is a barrier of that block,
    /// initialised before (with [`crate::mbarrier::fence_init`] and a cluster barrier in
    /// between), whose previous phase has completed, and whose current phase counts these
    /// bytes (its expected bytes may be announced before or after they land: the
    /// transaction count may go below zero meanwhile).
    #[inline(always)]
    pub unsafe fn store_async(self, index: u32, value: T, barrier: RemoteMbarrier) {
        on_gpu!("RemoteShared::store_async", {
            // SAFETY: the caller's contract.
            unsafe {
                core::arch::asm!(
                    "st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [{a}], {v}, [{m}];",
                    a = in(reg32) self.address(index),
                    v = in(reg32) value.to_bits(),
                    m = in(reg32) barrier.address,
                    options(nostack, preserves_flags),
                )
            }
        })
    }
}

impl RemoteShared<u32> {
    /// Adds `value` to `array[index]` in the other block and returns the old value
    /// (`atom.shared::cluster.add.u32`, relaxed).
    ///
    /// # Safety
    /// `index` is in bounds; the owning block has not exited.
    #[inline(always)]
    pub unsafe fn fetch_add(self, index: u32, value: u32) -> u32 {
        on_gpu!("RemoteShared::fetch_add", {
            let old: u32;
            // SAFETY: the caller's contract.
            unsafe {
                core::arch::asm!(
                    "atom.shared::cluster.add.u32 {o}, [{a}], {v};",
                    o = out(reg32) old,
                    a = in(reg32) self.address(index),
                    v = in(reg32) value,
                    options(nostack, preserves_flags),
                )
            }
            old
        })
    }
}
