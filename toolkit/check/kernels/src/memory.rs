//! Check kernels: memory (atomics, typed shared memory, global vector and read-only loads).
//!
//! Every kernel takes one thread per input value (`n` values, any block size, a partial last
//! block) unless its doc says otherwise. Block-scope atomics go to one slot per block (a
//! block-scoped operation is atomic only among that block's threads).

use ptxkit_device::{
    atomic, dynamic_shared, kernel, memory, shared, thread,
    vector::{F32x2, F64x2, U32x4},
};

/// The vector types (and [`mem_scale_f32x4`]'s `F32x4`), for the tests on the host.
pub use ptxkit_device::vector::{self, F32x4};

// -------------------------------------------------------------------------------------------
// Global atomics: one kernel per type and family, every scope and form.
// -------------------------------------------------------------------------------------------

/// Add and sub kernels for one type: `totals` (6 slots): [0] `fetch_add` (its results to
/// `olds[i]`), [1] `add`, [2] `fetch_add_system`, [3] `add_system`, [4] `sub`,
/// [5] `fetch_sub_system`; `block_totals` (3 slots per block): `fetch_add_block`, `add_block`,
/// `fetch_sub_block`. Bytes per thread: 2·size (value, old).
macro_rules! add_kernels {
    ($($name:ident: $t:ident;)*) => {$(
        #[doc = concat!("Every add/sub atomic on `", stringify!($t), "` at every scope (see the \
            module's `add_kernels`). One thread per value.")]
        #[kernel]
        pub unsafe fn $name(
            values: *const $t,
            n: u32,
            totals: *mut $t,
            block_totals: *mut $t,
            olds: *mut $t,
        ) {
            let i = thread::index_1d();
            if i >= n {
                return;
            }
            let b = 3 * thread::block_idx_x() as usize;
            // SAFETY: `i < n` values and olds; 6 totals and 3 block totals per block (host).
            unsafe {
                let v = *values.add(i as usize);
                *olds.add(i as usize) = atomic::fetch_add(totals, v);
                atomic::add(totals.add(1), v);
                atomic::fetch_add_system(totals.add(2), v);
                atomic::add_system(totals.add(3), v);
                atomic::sub(totals.add(4), v);
                atomic::fetch_sub_system(totals.add(5), v);
                atomic::fetch_add_block(block_totals.add(b), v);
                atomic::add_block(block_totals.add(b + 1), v);
                atomic::fetch_sub_block(block_totals.add(b + 2), v);
            }
        }
    )*};
}

add_kernels! {
    mem_atomic_add_u32: u32;
    mem_atomic_add_i32: i32;
    mem_atomic_add_u64: u64;
    mem_atomic_add_i64: i64;
    mem_atomic_add_f32: f32;
    mem_atomic_add_f64: f64;
}

/// Min/max kernels for one integer type: `results` (6 slots): [0] `fetch_min`, [1] `min`,
/// [2] `fetch_max`, [3] `max`, [4] `fetch_min_system`, [5] `max_system`; `block_results` (2
/// per block): `min_block`, `fetch_max_block`. Bytes per thread: size.
macro_rules! min_max_kernels {
    ($($name:ident: $t:ident;)*) => {$(
        #[doc = concat!("Every min/max atomic on `", stringify!($t), "` at every scope (see the \
            module's `min_max_kernels`). One thread per value.")]
        #[kernel]
        pub unsafe fn $name(values: *const $t, n: u32, results: *mut $t, block_results: *mut $t) {
            let i = thread::index_1d();
            if i >= n {
                return;
            }
            let b = 2 * thread::block_idx_x() as usize;
            // SAFETY: `i < n` values; 6 results and 2 block results per block (host).
            unsafe {
                let v = *values.add(i as usize);
                atomic::fetch_min(results, v);
                atomic::min(results.add(1), v);
                atomic::fetch_max(results.add(2), v);
                atomic::max(results.add(3), v);
                atomic::fetch_min_system(results.add(4), v);
                atomic::max_system(results.add(5), v);
                atomic::min_block(block_results.add(b), v);
                atomic::fetch_max_block(block_results.add(b + 1), v);
            }
        }
    )*};
}

min_max_kernels! {
    mem_atomic_min_max_u32: u32;
    mem_atomic_min_max_i32: i32;
    mem_atomic_min_max_u64: u64;
    mem_atomic_min_max_i64: i64;
}

/// And/or/xor kernels for one integer type: `results` (6 slots): [0] `fetch_and`, [1] `or`,
/// [2] `xor`, [3] `and_system`, [4] `fetch_or_system`, [5] `fetch_xor_system`;
/// `block_results` (3 per block): `and_block`, `fetch_or_block`, `xor_block`. Bytes per thread:
/// size.
macro_rules! bitwise_kernels {
    ($($name:ident: $t:ident;)*) => {$(
        #[doc = concat!("Every and/or/xor atomic on `", stringify!($t), "` at every scope (see \
            the module's `bitwise_kernels`). One thread per value.")]
        #[kernel]
        pub unsafe fn $name(values: *const $t, n: u32, results: *mut $t, block_results: *mut $t) {
            let i = thread::index_1d();
            if i >= n {
                return;
            }
            let b = 3 * thread::block_idx_x() as usize;
            // SAFETY: `i < n` values; 6 results and 3 block results per block (host).
            unsafe {
                let v = *values.add(i as usize);
                atomic::fetch_and(results, v);
                atomic::or(results.add(1), v);
                atomic::xor(results.add(2), v);
                atomic::and_system(results.add(3), v);
                atomic::fetch_or_system(results.add(4), v);
                atomic::fetch_xor_system(results.add(5), v);
                atomic::and_block(block_results.add(b), v);
                atomic::fetch_or_block(block_results.add(b + 1), v);
                atomic::xor_block(block_results.add(b + 2), v);
            }
        }
    )*};
}

bitwise_kernels! {
    mem_atomic_bitwise_u32: u32;
    mem_atomic_bitwise_i32: i32;
    mem_atomic_bitwise_u64: u64;
    mem_atomic_bitwise_i64: i64;
}

/// Exchange kernels for one type: `slots` (2): [0] `exchange` (its result to `olds[i]`),
/// [1] `exchange_system`; `block_slots` (1 per block): `exchange_block`. Bytes per thread:
/// 2·size.
macro_rules! exchange_kernels {
    ($($name:ident: $t:ident;)*) => {$(
        #[doc = concat!("Every exchange atomic on `", stringify!($t), "` (see the module's \
            `exchange_kernels`). One thread per value.")]
        #[kernel]
        pub unsafe fn $name(
            values: *const $t,
            n: u32,
            slots: *mut $t,
            block_slots: *mut $t,
            olds: *mut $t,
        ) {
            let i = thread::index_1d();
            if i >= n {
                return;
            }
            // SAFETY: `i < n` values and olds; 2 slots and 1 block slot per block (host).
            unsafe {
                let v = *values.add(i as usize);
                *olds.add(i as usize) = atomic::exchange(slots, v);
                atomic::exchange_system(slots.add(1), v);
                atomic::exchange_block(block_slots.add(thread::block_idx_x() as usize), v);
            }
        }
    )*};
}

exchange_kernels! {
    mem_atomic_exchange_u32: u32;
    mem_atomic_exchange_i32: i32;
    mem_atomic_exchange_u64: u64;
    mem_atomic_exchange_i64: i64;
    mem_atomic_exchange_f32: f32;
    mem_atomic_exchange_f64: f64;
}

/// Compare-and-swap kernels for one integer type: each thread adds its value by a CAS loop to
/// `sums[0]` (device scope), `sums[1]` (system) and `block_sums[block]` (block scope), so each
/// ends as the wrapping sum. Each loop's first guess is 0 (a failed CAS returns the current
/// value: no plain read racing with the others' CAS). Bytes per thread: size (plus the retries).
macro_rules! cas_kernels {
    ($($name:ident: $t:ident;)*) => {$(
        #[doc = concat!("A compare-and-swap loop adding `", stringify!($t), "` values at every \
            scope (see the module's `cas_kernels`). One thread per value.")]
        #[kernel]
        pub unsafe fn $name(values: *const $t, n: u32, sums: *mut $t, block_sums: *mut $t) {
            let i = thread::index_1d();
            if i >= n {
                return;
            }
            // SAFETY: `i < n` values; 2 sums and 1 block sum per block (host).
            unsafe {
                let v = *values.add(i as usize);
                let block_sum = block_sums.add(thread::block_idx_x() as usize);
                let mut seen = 0;
                loop {
                    let old = atomic::compare_exchange(sums, seen, seen.wrapping_add(v));
                    if old == seen {
                        break;
                    }
                    seen = old;
                }
                let mut seen = 0;
                loop {
                    let old = atomic::compare_exchange_system(sums.add(1), seen, seen.wrapping_add(v));
                    if old == seen {
                        break;
                    }
                    seen = old;
                }
                let mut seen = 0;
                loop {
                    let old = atomic::compare_exchange_block(block_sum, seen, seen.wrapping_add(v));
                    if old == seen {
                        break;
                    }
                    seen = old;
                }
            }
        }
    )*};
}

cas_kernels! {
    mem_atomic_cas_u32: u32;
    mem_atomic_cas_i32: i32;
    mem_atomic_cas_u64: u64;
    mem_atomic_cas_i64: i64;
}

/// Wrapping increment and decrement (`u32`) with wrap value `limit`, one thread per count:
/// `counters` (6, starting at 0): [0] `fetch_inc` (its result to `olds[i]`), [1] `inc`,
/// [2] `inc_system`, [3] `fetch_dec`, [4] `dec`, [5] `fetch_dec_system`; `block_counters` (2 per
/// block, starting at 0): `fetch_inc_block`, `dec_block`. Bytes per thread: 4.
#[kernel]
pub unsafe fn mem_atomic_inc_dec_u32(
    n: u32,
    limit: u32,
    counters: *mut u32,
    block_counters: *mut u32,
    olds: *mut u32,
) {
    let i = thread::index_1d();
    if i >= n {
        return;
    }
    let b = 2 * thread::block_idx_x() as usize;
    // SAFETY: `i < n` olds; 6 counters and 2 block counters per block (host).
    unsafe {
        *olds.add(i as usize) = atomic::fetch_inc(counters, limit);
        atomic::inc(counters.add(1), limit);
        atomic::inc_system(counters.add(2), limit);
        atomic::fetch_dec(counters.add(3), limit);
        atomic::dec(counters.add(4), limit);
        atomic::fetch_dec_system(counters.add(5), limit);
        atomic::fetch_inc_block(block_counters.add(b), limit);
        atomic::dec_block(block_counters.add(b + 1), limit);
    }
}

/// The original `u32` atomics (generic address, device scope): `slots` [0] `atomic_add_u32`
/// (its result to `olds[i]`), [1] `atomic_min_u32`, [2] `atomic_max_u32`, and `atomic_add_f32`
/// to `sum`. One thread per value; bytes per thread: 12.
#[kernel]
pub unsafe fn mem_legacy_atomics(values: *const u32, n: u32, slots: *mut u32, sum: *mut f32, olds: *mut u32) {
    let i = thread::index_1d();
    if i >= n {
        return;
    }
    // SAFETY: `i < n` values and olds; 3 slots and one sum (host).
    unsafe {
        let v = *values.add(i as usize);
        *olds.add(i as usize) = atomic::atomic_add_u32(slots, v);
        atomic::atomic_min_u32(slots.add(1), v);
        atomic::atomic_max_u32(slots.add(2), v);
        atomic::atomic_add_f32(sum, v as f32);
    }
}

// -------------------------------------------------------------------------------------------
// Shared memory: the typed handle, its vector accesses and its atomics.
// -------------------------------------------------------------------------------------------

/// A 256-bin histogram of the low byte of `values`, counted in shared memory
/// (`atom.shared.add.u32`) and added to `bins` (256, zeroed by the host) once per block
/// (`red.global.add`). Grid-stride: any grid, any block size. Bytes per value: 4.
#[kernel]
pub unsafe fn mem_histogram_shared(values: *const u32, n: u32, bins: *mut u32) {
    let local = shared!(mem_histogram_bins: [u32; 256]);
    let t = thread::thread_idx_x();
    let threads = thread::block_dim_x();
    let mut b = t;
    while b < 256 {
        // SAFETY: `b < 256`.
        unsafe { local.store(b, 0) };
        b += threads;
    }
    thread::sync_threads();
    let mut i = thread::index_1d();
    while i < n {
        // SAFETY: `i < n`; the bin is below 256.
        unsafe { local.fetch_add(*values.add(i as usize) & 0xff, 1) };
        i += thread::grid_size_1d();
    }
    thread::sync_threads();
    let mut b = t;
    while b < 256 {
        // SAFETY: `b < 256`, written before the barrier; `bins` has 256 counts.
        unsafe { atomic::add(bins.add(b as usize), local.load(b)) };
        b += threads;
    }
}

/// The slots of [`mem_shared_atomics_u32`], per block.
pub const SHARED_ATOMIC_SLOTS: usize = 11;

/// Every shared-memory atomic on `u32`, per block: thread 0 sets the slots ([0] 0, [1] MAX,
/// [2] 0, [3] 0, [4] 0, [5] MAX, [6] 0, [7] 0, [8] MAX, [9] 0, [10] 0), then every thread
/// with `i < n` applies its value: [0] `fetch_add`, [1] `fetch_min`, [2] `fetch_max`,
/// [3] `fetch_inc(limit)`, [4] `fetch_dec(limit)`, [5] `fetch_and`, [6] `fetch_or`,
/// [7] `fetch_xor`, [8] `exchange`, [9] a `compare_exchange` loop adding the value,
/// [10] `fetch_sub`; thread 0 writes the slots to `results[11·block ..]`. Block size any.
#[kernel]
pub unsafe fn mem_shared_atomics_u32(values: *const u32, n: u32, limit: u32, results: *mut u32) {
    let slots = shared!(mem_shared_atomic_slots: [u32; SHARED_ATOMIC_SLOTS]);
    let t = thread::thread_idx_x();
    if t == 0 {
        let initial = [0, u32::MAX, 0, 0, 0, u32::MAX, 0, 0, u32::MAX, 0, 0];
        for (k, value) in initial.into_iter().enumerate() {
            // SAFETY: `k < SHARED_ATOMIC_SLOTS`.
            unsafe { slots.store(k as u32, value) };
        }
    }
    thread::sync_threads();
    let i = thread::index_1d();
    if i < n {
        // SAFETY: `i < n`; every slot index is below SHARED_ATOMIC_SLOTS.
        unsafe {
            let v = *values.add(i as usize);
            slots.fetch_add(0, v);
            slots.fetch_min(1, v);
            slots.fetch_max(2, v);
            slots.fetch_inc(3, limit);
            slots.fetch_dec(4, limit);
            slots.fetch_and(5, v);
            slots.fetch_or(6, v);
            slots.fetch_xor(7, v);
            slots.exchange(8, v);
            let mut seen = 0;
            loop {
                let old = slots.compare_exchange(9, seen, seen.wrapping_add(v));
                if old == seen {
                    break;
                }
                seen = old;
            }
            slots.fetch_sub(10, v);
        }
    }
    thread::sync_threads();
    if t == 0 {
        let out = SHARED_ATOMIC_SLOTS * thread::block_idx_x() as usize;
        for k in 0..SHARED_ATOMIC_SLOTS {
            // SAFETY: `results` holds 11 slots per block (host); the slots were set above.
            unsafe { *results.add(out + k) = slots.load(k as u32) };
        }
    }
}

/// Shared-memory add, sub and exchange (and for the integers min, max and a CAS loop) for one
/// type: per block, `results[6·block ..]` = [0] sum (`fetch_add`), [1] −sum (`fetch_sub`),
/// [2] the value of some thread (`exchange`), [3] min, [4] max, [5] CAS-loop sum (min and max
/// start at the block's first value, where the floats leave them; the floats' [5] stays 0).
/// Block size any.
macro_rules! shared_atomic_kernels {
    ($($name:ident: $t:ident, $array:ident, integer: $integer:tt;)*) => {$(
        #[doc = concat!("Shared-memory atomics on `", stringify!($t), "` (see the module's \
            `shared_atomic_kernels`). One thread per value; bytes per thread: size.")]
        #[kernel]
        pub unsafe fn $name(values: *const $t, n: u32, results: *mut $t) {
            let slots = shared!($array: [$t; 6]);
            let t = thread::thread_idx_x();
            let i = thread::index_1d();
            if t == 0 {
                // SAFETY: 6 slots. Min and max start at the first value of the block.
                unsafe {
                    let first = if i < n { *values.add(i as usize) } else { 0 as $t };
                    for (k, value) in [0 as $t, 0 as $t, 0 as $t, first, first, 0 as $t]
                        .into_iter()
                        .enumerate()
                    {
                        slots.store(k as u32, value);
                    }
                }
            }
            thread::sync_threads();
            if i < n {
                // SAFETY: `i < n`; slot indices below 6.
                unsafe {
                    let v = *values.add(i as usize);
                    slots.fetch_add(0, v);
                    slots.fetch_sub(1, v);
                    slots.exchange(2, v);
                    shared_atomic_kernels!(@integer $integer, slots, v);
                }
            }
            thread::sync_threads();
            if t == 0 {
                let out = 6 * thread::block_idx_x() as usize;
                for k in 0..6 {
                    // SAFETY: `results` holds 6 slots per block (host).
                    unsafe { *results.add(out + k as usize) = slots.load(k) };
                }
            }
        }
    )*};
    (@integer true, $slots:ident, $v:ident) => {
        $slots.fetch_min(3, $v);
        $slots.fetch_max(4, $v);
        let mut seen = 0;
        loop {
            let old = $slots.compare_exchange(5, seen, seen.wrapping_add($v));
            if old == seen {
                break;
            }
            seen = old;
        }
    };
    (@integer false, $slots:ident, $v:ident) => {};
}

shared_atomic_kernels! {
    mem_shared_atomics_i32: i32, mem_shared_atomic_i32_slots, integer: true;
    mem_shared_atomics_u64: u64, mem_shared_atomic_u64_slots, integer: true;
    mem_shared_atomics_i64: i64, mem_shared_atomic_i64_slots, integer: true;
    mem_shared_atomics_f32: f32, mem_shared_atomic_f32_slots, integer: false;
    mem_shared_atomics_f64: f64, mem_shared_atomic_f64_slots, integer: false;
}

/// The block size limit of the shared round-trip kernels (their tiles' length).
pub const ROTATE_BLOCK: u32 = 128;

/// Round trips through a [`SharedArray`](ptxkit_device::SharedArray) of one type: each thread `store`s its value to the
/// tile, and after a barrier `load`s the value of the next thread of its block (cyclically,
/// among the block's threads with `i < n`) into `output[i]`. At most 128 threads per block;
/// bytes per thread: 2·size.
macro_rules! rotate_kernels {
    ($($name:ident: $t:ty, $tile:ident;)*) => {$(
        #[doc = concat!("A shared-memory round trip of `", stringify!($t), "` values (see the \
            module's `rotate_kernels`).")]
        #[kernel(launch_bounds(128))]
        pub unsafe fn $name(input: *const $t, n: u32, output: *mut $t) {
            let tile = shared!($tile: [$t; ROTATE_BLOCK as usize]);
            let t = thread::thread_idx_x();
            let i = thread::index_1d();
            let first = i - t;
            let active = thread::block_dim_x().min(n.saturating_sub(first));
            if i < n {
                // SAFETY: `i < n`; `t` below the tile's 128 (launch bounds).
                unsafe { tile.store(t, *input.add(i as usize)) };
            }
            thread::sync_threads();
            if i < n {
                // SAFETY: the neighbour is one of the block's `active` threads, which stored
                // before the barrier.
                unsafe { *output.add(i as usize) = tile.load((t + 1) % active) };
            }
        }
    )*};
}

rotate_kernels! {
    mem_shared_rotate_u8: u8, mem_rotate_u8_tile;
    mem_shared_rotate_u16: u16, mem_rotate_u16_tile;
    mem_shared_rotate_f32: f32, mem_rotate_f32_tile;
    mem_shared_rotate_f64: f64, mem_rotate_f64_tile;
    mem_shared_rotate_f32x4: F32x4, mem_rotate_f32x4_tile;
    mem_shared_rotate_u8x3: [u8; 3], mem_rotate_u8x3_tile;
    mem_shared_rotate_u16x3: [u16; 3], mem_rotate_u16x3_tile;
    mem_shared_rotate_u32x3: [u32; 3], mem_rotate_u32x3_tile;
}

/// Reverses each block's run of quads of `f32` through shared memory with vector accesses:
/// thread `t` stores its quad `input[4i .. 4i+4]` to one tile with `store4` and to another with
/// two `store2`, and after a barrier reads the block-mirrored quad back crosswise (`load4` from
/// the second tile, two `load2` from the first) and writes it reversed to `output[4i ..]` (a
/// lane whose two readings disagree becomes NaN). `n` a multiple of 4; at most 128 threads per
/// block; bytes per thread: 32.
#[kernel(launch_bounds(128))]
pub unsafe fn mem_shared_vectors_f32(input: *const f32, n: u32, output: *mut f32) {
    let quads_tile = shared!(mem_vector_f32_quads: [f32; 4 * ROTATE_BLOCK as usize]);
    let pairs_tile = shared!(mem_vector_f32_pairs: [f32; 4 * ROTATE_BLOCK as usize]);
    let t = thread::thread_idx_x();
    let i = thread::index_1d();
    let quads = n / 4;
    let active = thread::block_dim_x().min(quads.saturating_sub(i - t));
    if i < quads {
        // SAFETY: `4i + 3 < n`; the tiles hold 4·128 values and `t < 128`.
        unsafe {
            let p = input.add(4 * i as usize);
            let [a, b, c, d] = [*p, *p.add(1), *p.add(2), *p.add(3)];
            quads_tile.store4(4 * t, F32x4::new(a, b, c, d));
            pairs_tile.store2(4 * t, F32x2::new(a, b));
            pairs_tile.store2(4 * t + 2, F32x2::new(c, d));
        }
    }
    thread::sync_threads();
    if i < quads {
        let mirror = 4 * (active - 1 - t);
        // SAFETY: `mirror / 4 < active`, written before the barrier; `4i + 3 < n`.
        unsafe {
            let [a, b, c, d] = pairs_tile.load4(mirror).to_array();
            let low = quads_tile.load2(mirror);
            let high = quads_tile.load2(mirror + 2);
            let p = output.add(4 * i as usize);
            *p = d;
            *p.add(1) = c;
            *p.add(2) = if low.to_array() == [a, b] { b } else { f32::NAN };
            *p.add(3) = if high.to_array() == [c, d] { a } else { f32::NAN };
        }
    }
}

/// [`mem_shared_vectors_f32`]'s shape for `f64` pairs: each thread stores `input[2i .. 2i+2]`
/// with `store2` (`st.shared.v2.f64`) and writes the block-mirrored pair, swapped, read with
/// `load2`. `n` even; at most 128 threads per block; bytes per thread: 32.
#[kernel(launch_bounds(128))]
pub unsafe fn mem_shared_vectors_f64(input: *const f64, n: u32, output: *mut f64) {
    let tile = shared!(mem_vector_f64_tile: [f64; 2 * ROTATE_BLOCK as usize]);
    let t = thread::thread_idx_x();
    let i = thread::index_1d();
    let pairs = n / 2;
    let first = i - t;
    let active = thread::block_dim_x().min(pairs.saturating_sub(first));
    if i < pairs {
        // SAFETY: `2i + 1 < n`; the tile holds 2·128 values and `t < 128`.
        unsafe {
            let p = input.add(2 * i as usize);
            tile.store2(2 * t, F64x2::new(*p, *p.add(1)));
        }
    }
    thread::sync_threads();
    if i < pairs {
        // SAFETY: the mirrored pair was written before the barrier; `2i + 1 < n`.
        unsafe {
            let [a, b] = tile.load2(2 * (active - 1 - t)).to_array();
            let p = output.add(2 * i as usize);
            *p = b;
            *p.add(1) = a;
        }
    }
}

/// [`mem_shared_vectors_f64`]'s shape for the older [`ptxkit_device::SharedF32`] (32-bit
/// shared addresses): each thread stores `input[2i .. 2i+2]` with `store2`
/// (`st.shared.v2.f32`) and writes the block-mirrored pair, swapped, read with `load2`. `n`
/// even; at most 128 threads per block; bytes per thread: 16.
#[kernel(launch_bounds(128))]
pub unsafe fn mem_shared_f32_pairs(input: *const f32, n: u32, output: *mut f32) {
    let tile = ptxkit_device::shared_f32!(mem_f32_pairs_tile: 2 * ROTATE_BLOCK);
    let t = thread::thread_idx_x();
    let i = thread::index_1d();
    let pairs = n / 2;
    let first = i - t;
    let active = thread::block_dim_x().min(pairs.saturating_sub(first));
    if i < pairs {
        // SAFETY: `2i + 1 < n`; the tile holds 2·128 values and `t < 128`; `2t` is even.
        unsafe {
            let p = input.add(2 * i as usize);
            tile.store2(2 * t, [*p, *p.add(1)]);
        }
    }
    thread::sync_threads();
    if i < pairs {
        // SAFETY: the mirrored pair was written before the barrier; `2i + 1 < n`.
        unsafe {
            let [a, b] = tile.load2(2 * (active - 1 - t));
            let p = output.add(2 * i as usize);
            *p = b;
            *p.add(1) = a;
        }
    }
}

/// The bytes of dynamic shared memory [`mem_dynamic_shared_reverse_u64`] declares: room for
/// 256 threads.
pub const DYNAMIC_REVERSE_BYTES: u32 = 256 * 8;

/// Reverses each block's run of `u64` values through dynamic shared memory
/// (`dynamic_shared!`). At most 256 threads per block; bytes per thread: 16.
#[kernel(launch_bounds(256), dynamic_shared = DYNAMIC_REVERSE_BYTES)]
pub unsafe fn mem_dynamic_shared_reverse_u64(input: *const u64, n: u32, output: *mut u64) {
    let tile = dynamic_shared!(mem_dynamic_reverse_tile: u64);
    let t = thread::thread_idx_x();
    let i = thread::index_1d();
    let active = thread::block_dim_x().min(n.saturating_sub(i - t));
    if i < n {
        // SAFETY: `i < n`; `t < 256` fits the declared dynamic bytes.
        unsafe { tile.store(t, *input.add(i as usize)) };
    }
    thread::sync_threads();
    if i < n {
        // SAFETY: the mirrored element was written before the barrier.
        unsafe { *output.add(i as usize) = tile.load(active - 1 - t) };
    }
}

// -------------------------------------------------------------------------------------------
// Global memory: vector copies with a scalar tail, read-only and streaming loads.
// -------------------------------------------------------------------------------------------

/// `dst[..n] = src[..n]` by 16-byte vectors (`ld.global.v4.f32`, `st.global.v4.f32`) with a
/// scalar tail: thread `i < n / 4` copies quad `i`, thread `n / 4 + k` copies element
/// `4·(n / 4) + k` for `k < n % 4`. Launch `n / 4 + 3` threads or more; bytes per element: 8.
#[kernel]
pub unsafe fn mem_copy_f32x4(src: *const f32, dst: *mut f32, n: u32) {
    let i = thread::index_1d();
    let quads = n / 4;
    if i < quads {
        // SAFETY: the buffers start 256-byte aligned (device allocations), quad `i` lies inside.
        unsafe {
            let q = memory::load_vector(src.cast::<F32x4>().add(i as usize));
            memory::store_vector(dst.cast::<F32x4>().add(i as usize), q);
        }
    } else if 4 * quads + (i - quads) < n {
        let j = (4 * quads + (i - quads)) as usize;
        // SAFETY: `j < n`.
        unsafe { memory::store_global(dst.add(j), memory::load_global(src.add(j))) };
    }
}

/// [`mem_copy_f32x4`] through the read-only cache with streaming stores
/// (`ld.global.nc.v4.f32`, `st.global.cs.v4.f32`; the tail `ld.global.nc.f32`,
/// `st.global.cs.f32`). Same thread mapping.
#[kernel]
pub unsafe fn mem_copy_nc_f32x4(src: *const f32, dst: *mut f32, n: u32) {
    let i = thread::index_1d();
    let quads = n / 4;
    if i < quads {
        // SAFETY: as `mem_copy_f32x4`; `src` is not written during the kernel.
        unsafe {
            let q = memory::load_global_nc(src.cast::<F32x4>().add(i as usize));
            memory::store_global_streaming(dst.cast::<F32x4>().add(i as usize), q);
        }
    } else if 4 * quads + (i - quads) < n {
        let j = (4 * quads + (i - quads)) as usize;
        // SAFETY: `j < n`; `src` is not written during the kernel.
        unsafe { memory::store_global_streaming(dst.add(j), memory::load_global_nc(src.add(j))) };
    }
}

/// `dst[..n] = src[..n]` for `f64` by pairs (`ld.global.nc.v2.f64`, `st.global.v2.f64`) with a
/// scalar tail (`ld.global.nc.f64`): thread `i < n / 2` copies pair `i`, thread `n / 2` the
/// last element if `n` is odd. Launch `n / 2 + 1` threads or more; bytes per element: 16.
#[kernel]
pub unsafe fn mem_copy_nc_f64x2(src: *const f64, dst: *mut f64, n: u32) {
    let i = thread::index_1d();
    let pairs = n / 2;
    if i < pairs {
        // SAFETY: 256-byte aligned buffers, pair `i` inside; `src` read-only.
        unsafe {
            let p = memory::load_global_nc(src.cast::<F64x2>().add(i as usize));
            memory::store_vector(dst.cast::<F64x2>().add(i as usize), p);
        }
    } else if i == pairs && n % 2 == 1 {
        let j = (n - 1) as usize;
        // SAFETY: `j < n`; `src` read-only.
        unsafe { memory::store_global(dst.add(j), memory::load_global_nc(src.add(j))) };
    }
}

/// `dst[..n] = src[..n]` for `u32` by quads with streaming loads (`ld.global.cs.v4.u32`) and a
/// scalar tail (`ld.global.cs.u32`); the mapping of [`mem_copy_f32x4`]. Bytes per element: 8.
#[kernel]
pub unsafe fn mem_copy_streaming_u32x4(src: *const u32, dst: *mut u32, n: u32) {
    let i = thread::index_1d();
    let quads = n / 4;
    if i < quads {
        // SAFETY: 256-byte aligned buffers, quad `i` inside.
        unsafe {
            let q = memory::load_global_streaming(src.cast::<U32x4>().add(i as usize));
            memory::store_vector(dst.cast::<U32x4>().add(i as usize), q);
        }
    } else if 4 * quads + (i - quads) < n {
        let j = (4 * quads + (i - quads)) as usize;
        // SAFETY: `j < n`.
        unsafe { memory::store_global(dst.add(j), memory::load_global_streaming(src.add(j))) };
    }
}

/// `output[i] = input[i] · factor + offset` on `F32x4` buffers the host allocated as
/// `CudaSlice<F32x4>` (the vector type through the typed launch). One thread per vector;
/// bytes per vector: 32.
#[kernel]
pub unsafe fn mem_scale_f32x4(input: *const F32x4, n: u32, factor: f32, offset: F32x4, output: *mut F32x4) {
    let i = thread::index_1d();
    if i < n {
        // SAFETY: `i < n` vectors in each buffer.
        unsafe {
            let v = memory::load_global_nc(input.add(i as usize)).to_array();
            let o = offset.to_array();
            let r = F32x4::new(
                v[0] * factor + o[0],
                v[1] * factor + o[1],
                v[2] * factor + o[2],
                v[3] * factor + o[3],
            );
            memory::store_vector(output.add(i as usize), r);
        }
    }
}

/// Read-only loads of every scalar type: `out[i] = (a[i] as u64) ^ b[i] ^ c[i].to_bits() ^
/// d[i] ^ e[i] ^ f[i].to_bits()` (each widened to 64 bits; the signed ones sign-extended).
/// One thread per element; bytes per element: 44.
#[kernel]
#[allow(clippy::too_many_arguments)] // one buffer per scalar type
pub unsafe fn mem_load_nc_scalars(
    a: *const u32,
    b: *const i32,
    c: *const f32,
    d: *const u64,
    e: *const i64,
    f: *const f64,
    n: u32,
    out: *mut u64,
) {
    let i = thread::index_1d();
    if i < n {
        let k = i as usize;
        // SAFETY: `i < n` in every buffer; none is written during the kernel.
        unsafe {
            let value = memory::load_global_nc(a.add(k)) as u64
                ^ memory::load_global_nc(b.add(k)) as i64 as u64
                ^ memory::load_global_nc(c.add(k)).to_bits() as u64
                ^ memory::load_global_nc(d.add(k))
                ^ memory::load_global_nc(e.add(k)) as u64
                ^ memory::load_global_nc(f.add(k)).to_bits();
            memory::store_global(out.add(k), value);
        }
    }
}

/// A [`SharedArray`](ptxkit_device::SharedArray) read through its generic pointer
/// (`as_mut_ptr`, `cvta.shared.u64`): thread `t` of one block of at most 64 threads stores
/// `3t` with `store`, and after a barrier writes element `blockDim − 1 − t`, read through the
/// pointer, to `output[t]`. Bytes per thread: 4.
#[kernel(launch_bounds(64))]
pub unsafe fn mem_shared_generic_pointer(output: *mut u32) {
    let tile = shared!(mem_generic_pointer_tile: [u32; 64]);
    let t = thread::thread_idx_x();
    // SAFETY: `t < 64` (launch bounds).
    unsafe { tile.store(t, 3 * t) };
    thread::sync_threads();
    let mirror = thread::block_dim_x() - 1 - t;
    // SAFETY: `mirror < blockDim ≤ 64`, written before the barrier; one block, `output` holds
    // blockDim values (host).
    unsafe { *output.add(t as usize) = *tile.as_mut_ptr().add(mirror as usize) };
}

// -------------------------------------------------------------------------------------------
// Volatile and acquire/release accesses.
// -------------------------------------------------------------------------------------------

/// Copies through every volatile and acquire/release form for one type: `out` holds `4n`
/// values, `out[i]` = `values[i]` read by `load_volatile` and written by `store_volatile`,
/// `out[n + i]` by `load_acquire_block` / `store_release_block`, `out[2n + i]` by
/// `load_acquire` / `store_release`, `out[3n + i]` by `load_acquire_system` /
/// `store_release_system`. One thread per value; bytes per thread: 8·size.
macro_rules! ordered_copy_kernels {
    ($($name:ident: $t:ident;)*) => {$(
        #[doc = concat!("Copies `", stringify!($t), "` values through every volatile and \
            acquire/release form (see the module's `ordered_copy_kernels`).")]
        #[kernel]
        pub unsafe fn $name(values: *const $t, n: u32, out: *mut $t) {
            let i = thread::index_1d();
            if i >= n {
                return;
            }
            let (i, n) = (i as usize, n as usize);
            // SAFETY: `i < n` values and `4n` outputs (host).
            unsafe {
                let p = values.add(i);
                memory::store_volatile(out.add(i), memory::load_volatile(p));
                memory::store_release_block(out.add(n + i), memory::load_acquire_block(p));
                memory::store_release(out.add(2 * n + i), memory::load_acquire(p));
                memory::store_release_system(out.add(3 * n + i), memory::load_acquire_system(p));
            }
        }
    )*};
}

ordered_copy_kernels! {
    mem_ordered_copy_u32: u32;
    mem_ordered_copy_i32: i32;
    mem_ordered_copy_f32: f32;
    mem_ordered_copy_u64: u64;
    mem_ordered_copy_i64: i64;
    mem_ordered_copy_f64: f64;
}

/// A chain through the blocks, as a look-back scan passes its prefixes: thread 0 of each
/// block takes a ticket (`tickets[0]`, zeroed by the host: the order in which blocks run, so a
/// block waits only on one already running), sums its chunk `values[chunk·t ..][..chunk]`,
/// waits until ticket `t − 1` has published (`load_acquire` of `flags[t − 1]`, zeroed by the
/// host), reads that block's inclusive total with a plain load, writes `prefixes[t]` (the
/// exclusive prefix) and `totals[t]` with plain stores and publishes them
/// (`store_release(flags[t], 1)`). Without the acquire/release pair the plain load could read
/// `totals[t − 1]` before it was written. Any grid; only thread 0 of a block works; bytes per
/// block: 4·chunk + 16.
#[kernel]
pub unsafe fn mem_flag_chain(
    values: *const u32,
    chunk: u32,
    tickets: *mut u32,
    flags: *mut u32,
    totals: *mut u32,
    prefixes: *mut u32,
) {
    if thread::thread_idx_x() != 0 {
        return;
    }
    // SAFETY: the host passes `chunk` values, a flag, a total and a prefix per block, and one
    // ticket counter; tickets run 0 .. gridDim.
    unsafe {
        let t = atomic::fetch_add(tickets, 1) as usize;
        let mut sum = 0u32;
        for k in 0..chunk as usize {
            sum = sum.wrapping_add(*values.add(t * chunk as usize + k));
        }
        let prefix = if t == 0 {
            0
        } else {
            while memory::load_acquire(flags.add(t - 1)) == 0 {}
            *totals.add(t - 1)
        };
        *prefixes.add(t) = prefix;
        *totals.add(t) = prefix.wrapping_add(sum);
        memory::store_release(flags.add(t), 1);
    }
}
