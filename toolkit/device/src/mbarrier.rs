//! Split arrive/wait barriers in shared memory (`mbarrier`; CUDA C's `cuda::barrier` and
//! CUTLASS's `ClusterTransactionBarrier`).
//!
//! An [`Mbarrier`] is a 64-bit word in shared memory that completes a *phase* when the
//! expected number of threads have arrived and, on sm_90, the expected number of bytes of
//! asynchronous copies (TMA, [`tma`](crate::tma)) have landed. Threads wait for a phase by its
//! parity (0 for the first phase, then 1, 0, ...), so one barrier serves a whole loop of tiles.
//!
//! ```ignore
//! let words = shared!(full: [u64; 1]);
//! let full = Mbarrier::at(words, 0);
//! if thread_idx_x() == 0 {
//!     unsafe { full.init(1) };           // one arrival per phase: the thread that starts the copy
//!     mbarrier::fence_init();            // the init visible to the async proxy (TMA)
//! }
//! sync_threads();
//! if thread_idx_x() == 0 {
//!     unsafe {
//!         full.arrive_expect_tx(TILE_BYTES);          // this phase also waits for the bytes
//!         tma::load_tile(tile, map, [x, y], full);    // the copy counts them down
//!     }
//! }
//! unsafe { full.wait_parity(0) };        // every thread: the tile is in shared memory
//! ```
//!
//! The sm_80 forms (`init`, `arrive`, `test_wait`, `test_wait_parity`, `arrive_on_async_copies`,
//! `invalidate`) are PTX 7.0-7.1; the transaction forms and `try_wait` are sm_90 (PTX 7.8-8.0),
//! and a kernel using them must be built for `sm_90`.

use crate::SharedArray;

/// The asm of a barrier's wait predicate: `$instr` (with `{a}`, the barrier, and `{x}`, the
/// token or parity) sets a predicate, turned into a `bool`.
#[cfg_attr(not(target_arch = "nvptx64"), allow(unused_macros))]
macro_rules! wait_predicate {
    ($instr:literal, $address:expr, $class:ident, $value:expr) => {{
        let done: u32;
        core::arch::asm!(
            "{{",
            ".reg .pred p;",
            $instr,
            "selp.u32 {d}, 1, 0, p;",
            "}}",
            d = out(reg32) done,
            a = in(reg32) $address,
            x = in($class) $value,
            options(nostack, preserves_flags),
        );
        done != 0
    }};
}

/// A barrier: the shared-space address of its 8-byte word (`.shared .b64`, 8-byte aligned).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mbarrier {
    address: u32,
}

impl Mbarrier {
    /// The barrier in `words[index]` (a `shared!(name: [u64; N])` array holds `N` barriers).
    /// Nothing is read or written: [`init`](Self::init) it before use.
    #[inline(always)]
    pub fn at(words: SharedArray<u64>, index: u32) -> Self {
        Self { address: words.shared_address().wrapping_add(index.wrapping_mul(8)) }
    }

    /// The shared-space byte address of the barrier's word (for inline PTX).
    #[inline(always)]
    pub const fn shared_address(self) -> u32 {
        self.address
    }

    /// Initialises the barrier for `arrivals` arrivals per phase, phase 0 pending
    /// (`mbarrier.init.shared.b64`).
    ///
    /// # Safety
    /// One thread initialises it, before any thread uses it (a barrier or [`fence_init`] in
    /// between), and not while a phase is in use.
    #[inline(always)]
    pub unsafe fn init(self, arrivals: u32) {
        on_gpu!("Mbarrier::init", {
            // SAFETY: the caller's contract; writes the barrier's word.
            unsafe {
                core::arch::asm!(
                    "mbarrier.init.shared.b64 [{a}], {n};",
                    a = in(reg32) self.address,
                    n = in(reg32) arrivals,
                    options(nostack, preserves_flags),
                )
            }
        })
    }

    /// Invalidates the barrier so that its word may be reused as ordinary shared memory
    /// (`mbarrier.inval.shared.b64`).
    ///
    /// # Safety
    /// No thread uses the barrier afterwards, nor has an operation on it pending.
    #[inline(always)]
    pub unsafe fn invalidate(self) {
        on_gpu!("Mbarrier::invalidate", {
            // SAFETY: the caller's contract.
            unsafe {
                core::arch::asm!(
                    "mbarrier.inval.shared.b64 [{a}];",
                    a = in(reg32) self.address,
                    options(nostack, preserves_flags),
                )
            }
        })
    }

    /// Arrives (release semantics at block scope): counts this thread towards the current
    /// phase and returns a token of that phase for [`test_wait`](Self::test_wait)
    /// (`mbarrier.arrive.shared.b64`).
    ///
    /// # Safety
    /// The barrier was initialised; the phase expects this arrival (no more arrivals than
    /// its count).
    #[inline(always)]
    pub unsafe fn arrive(self) -> u64 {
        on_gpu!("Mbarrier::arrive", {
            let state: u64;
            // SAFETY: the caller's contract.
            unsafe {
                core::arch::asm!(
                    "mbarrier.arrive.shared.b64 {s}, [{a}];",
                    s = out(reg64) state,
                    a = in(reg32) self.address,
                    options(nostack, preserves_flags),
                )
            }
            state
        })
    }

    /// Makes the barrier count this thread's earlier `cp.async` copies
    /// ([`async_copy`](crate::async_copy)): the phase completes only once they have landed
    /// (`cp.async.mbarrier.arrive.noinc.shared.b64`; the arrival is one of the phase's count).
    ///
    /// # Safety
    /// As [`arrive`](Self::arrive).
    #[inline(always)]
    pub unsafe fn arrive_on_async_copies(self) {
        on_gpu!("Mbarrier::arrive_on_async_copies", {
            // SAFETY: the caller's contract.
            unsafe {
                core::arch::asm!(
                    "cp.async.mbarrier.arrive.noinc.shared.b64 [{a}];",
                    a = in(reg32) self.address,
                    options(nostack, preserves_flags),
                )
            }
        })
    }

    /// Arrives and adds `bytes` to the bytes the current phase waits for (sm_90,
    /// `mbarrier.arrive.expect_tx.shared::cta.b64`): the thread that starts a TMA copy of
    /// `bytes` calls it, and the copy's completion counts them down.
    ///
    /// # Safety
    /// As [`arrive`](Self::arrive); exactly `bytes` bytes of asynchronous copies complete on
    /// this barrier in this phase (fewer: the phase never completes and its waiters hang).
    #[inline(always)]
    pub unsafe fn arrive_expect_tx(self, bytes: u32) -> u64 {
        on_gpu!("Mbarrier::arrive_expect_tx", {
            let state: u64;
            // SAFETY: the caller's contract.
            unsafe {
                core::arch::asm!(
                    "mbarrier.arrive.expect_tx.shared::cta.b64 {s}, [{a}], {tx};",
                    s = out(reg64) state,
                    a = in(reg32) self.address,
                    tx = in(reg32) bytes,
                    options(nostack, preserves_flags),
                )
            }
            state
        })
    }

    /// Adds `bytes` to the bytes the current phase waits for, without arriving (sm_90,
    /// `mbarrier.expect_tx.relaxed.cta.shared::cta.b64`).
    ///
    /// # Safety
    /// As [`arrive_expect_tx`](Self::arrive_expect_tx), before the phase completes.
    #[inline(always)]
    pub unsafe fn expect_tx(self, bytes: u32) {
        on_gpu!("Mbarrier::expect_tx", {
            // SAFETY: the caller's contract.
            unsafe {
                core::arch::asm!(
                    "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [{a}], {tx};",
                    a = in(reg32) self.address,
                    tx = in(reg32) bytes,
                    options(nostack, preserves_flags),
                )
            }
        })
    }

    /// Whether the phase of `token` (from [`arrive`](Self::arrive)) has completed, without
    /// waiting (`mbarrier.test_wait.shared.b64`; acquire semantics when it has).
    ///
    /// # Safety
    /// The barrier was initialised and `token` is from this barrier's current or previous
    /// phase.
    #[inline(always)]
    pub unsafe fn test_wait(self, token: u64) -> bool {
        on_gpu!("Mbarrier::wait predicate", {
            // SAFETY: the caller's contract.
            unsafe {
                wait_predicate!("mbarrier.test_wait.shared.b64 p, [{a}], {x};", self.address, reg64, token)
            }
        })
    }

    /// Whether the phase of parity `parity` (0 or 1) has completed, without waiting
    /// (`mbarrier.test_wait.parity.shared.b64`, sm_80).
    ///
    /// # Safety
    /// The barrier was initialised; the phase of that parity is the current or the previous.
    #[inline(always)]
    pub unsafe fn test_wait_parity(self, parity: u32) -> bool {
        on_gpu!("Mbarrier::wait predicate", {
            // SAFETY: the caller's contract.
            unsafe {
                wait_predicate!(
                    "mbarrier.test_wait.parity.shared.b64 p, [{a}], {x};",
                    self.address,
                    reg32,
                    parity
                )
            }
        })
    }

    /// Whether the phase of parity `parity` has completed, the hardware waiting a while
    /// first (sm_90, `mbarrier.try_wait.parity.shared::cta.b64`, acquire at block scope):
    /// cheaper to spin on than [`test_wait_parity`](Self::test_wait_parity).
    ///
    /// # Safety
    /// As [`test_wait_parity`](Self::test_wait_parity).
    #[inline(always)]
    pub unsafe fn try_wait_parity(self, parity: u32) -> bool {
        on_gpu!("Mbarrier::wait predicate", {
            // SAFETY: the caller's contract.
            unsafe {
                wait_predicate!(
                    "mbarrier.try_wait.parity.shared::cta.b64 p, [{a}], {x};",
                    self.address,
                    reg32,
                    parity
                )
            }
        })
    }

    /// Waits until the phase of parity `parity` completes (sm_90: a loop on
    /// [`try_wait_parity`](Self::try_wait_parity)). The waiting thread then sees every write
    /// the arrivals released and the bytes the phase's copies brought.
    ///
    /// # Safety
    /// As [`test_wait_parity`](Self::test_wait_parity); the phase will complete (enough
    /// arrivals and bytes), or this never returns.
    #[inline(always)]
    pub unsafe fn wait_parity(self, parity: u32) {
        // SAFETY: the caller's contract.
        while !unsafe { self.try_wait_parity(parity) } {}
    }

    /// [`wait_parity`](Self::wait_parity) with acquire semantics at cluster scope
    /// (`mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64`, PTX ISA 8.0): the waiting
    /// thread also sees what other blocks of the cluster released on the phase, e.g. the
    /// values of their `cluster::RemoteShared::store_async`.
    ///
    /// # Safety
    /// As [`wait_parity`](Self::wait_parity).
    #[inline(always)]
    pub unsafe fn wait_parity_cluster(self, parity: u32) {
        on_gpu!("Mbarrier::wait_parity_cluster", {
            // SAFETY: the caller's contract.
            while !unsafe {
                wait_predicate!(
                    "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [{a}], {x};",
                    self.address,
                    reg32,
                    parity
                )
            } {}
        })
    }

    /// Waits until the phase of `token` completes (sm_80: a loop on
    /// [`test_wait`](Self::test_wait)).
    ///
    /// # Safety
    /// As [`test_wait`](Self::test_wait); the phase will complete.
    #[inline(always)]
    pub unsafe fn wait(self, token: u64) {
        // SAFETY: the caller's contract.
        while !unsafe { self.test_wait(token) } {}
    }
}

/// Makes barrier initialisations visible to the asynchronous proxy (TMA) and to the other
/// blocks of a cluster (sm_90, `fence.mbarrier_init.release.cluster`): after [`Mbarrier::init`],
/// before a barrier is handed to a TMA copy or to another block.
#[inline(always)]
pub fn fence_init() {
    on_gpu!("mbarrier::fence_init", {
        // SAFETY: a fence; orders memory (no `nomem`).
        unsafe { core::arch::asm!("fence.mbarrier_init.release.cluster;", options(nostack, preserves_flags)) }
    })
}
