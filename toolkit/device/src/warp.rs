//! Warp-level intrinsics: lane and warp ids, shuffles, votes, matches, reductions and the
//! warp barrier (CUDA's `__shfl*_sync`, `__ballot_sync`, `__match*_sync`, `__reduce*_sync`,
//! `__syncwarp`).
//!
//! # The `mask` argument
//! The functions taking a `mask` are CUDA's `*_sync` intrinsics: `mask` names the lanes taking
//! part. The calling lane must be in `mask`, and every lane of `mask` must call the same
//! function with the same `mask` (they converge on it); otherwise the result is undefined
//! (PTX ISA). [`FULL_MASK`] is all 32 lanes; in a warp of which only some lanes run (the last
//! warp of a block whose size is not a multiple of 32, or after a divergent branch),
//! [`active_mask`] gives the lanes that are here. The older functions without a `mask`
//! (`shfl_up_u32`, `shfl_up_f32`, `shfl_down_f32`) use the full warp.
//!
//! Lanes are numbered by `%laneid`; warps group a block's threads in the order of
//! [`thread::linear_idx`](crate::thread::linear_idx), 32 at a time.

/// Lanes in a warp.
pub const SIZE: u32 = 32;

/// Every lane of the warp, as a `mask`.
pub const FULL_MASK: u32 = u32::MAX;

/// This thread's lane in its warp, 0..32 (`%laneid`). In blocks whose x size is not a multiple
/// of 32 (16×16, 7×5×3) this is not `threadIdx.x % 32`: the lanes follow
/// [`thread::linear_idx`](crate::thread::linear_idx).
#[inline(always)]
pub fn lane() -> u32 {
    on_gpu!("lane", {
        let lane: u32;
        // SAFETY: reads a special register; no memory is touched.
        unsafe {
            core::arch::asm!(
                "mov.u32 {l}, %laneid;",
                l = out(reg32) lane,
                options(pure, nomem, nostack, preserves_flags),
            );
        }
        lane
    })
}

/// This thread's warp within its block: `thread::linear_idx() / 32` (0..ceil(threads per
/// block / 32)). Not `%warpid`, which names the hardware slot and may change while the
/// thread runs.
#[inline(always)]
pub fn warp_id() -> u32 {
    on_gpu!("warp_id", { crate::thread::linear_idx() / SIZE })
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

/// `__shfl_sync(mask, value, src)`: lane `src`'s `value`, among the lanes of `mask` (every
/// lane of `mask`, `src` included, must call it together). [`shfl_idx`]`(mask, value, src, 32)`
/// on a `u32`.
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

/// The `value` of lane `lane - delta`; lanes below `delta` get their own value. Every lane of
/// the warp must call it: [`shfl_up`]`(FULL_MASK, value, delta, 32)` on a `u32`.
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

/// The lanes at or below this one (`%lanemask_le`).
#[inline(always)]
pub fn lanes_at_or_below() -> u32 {
    on_gpu!("lanes_at_or_below", {
        let mask: u32;
        // SAFETY: reads a special register; no memory is touched.
        unsafe {
            core::arch::asm!(
                "mov.u32 {m}, %lanemask_le;",
                m = out(reg32) mask,
                options(pure, nomem, nostack, preserves_flags),
            );
        }
        mask
    })
}

/// The lanes above this one (`%lanemask_gt`).
#[inline(always)]
pub fn lanes_above() -> u32 {
    on_gpu!("lanes_above", {
        let mask: u32;
        // SAFETY: reads a special register; no memory is touched.
        unsafe {
            core::arch::asm!(
                "mov.u32 {m}, %lanemask_gt;",
                m = out(reg32) mask,
                options(pure, nomem, nostack, preserves_flags),
            );
        }
        mask
    })
}

/// The lanes at or above this one (`%lanemask_ge`).
#[inline(always)]
pub fn lanes_at_or_above() -> u32 {
    on_gpu!("lanes_at_or_above", {
        let mask: u32;
        // SAFETY: reads a special register; no memory is touched.
        unsafe {
            core::arch::asm!(
                "mov.u32 {m}, %lanemask_ge;",
                m = out(reg32) mask,
                options(pure, nomem, nostack, preserves_flags),
            );
        }
        mask
    })
}

/// The `value` of lane `lane - delta`; lanes below `delta` get their own value. Every lane of
/// the warp must call it: [`shfl_up`]`(FULL_MASK, value, delta, 32)` on an `f32`.
#[inline(always)]
pub fn shfl_up_f32(value: f32, delta: u32) -> f32 {
    on_gpu!("shfl_up_f32", { f32::from_bits(shfl_up_u32(value.to_bits(), delta)) })
}

/// The `value` of lane `lane + delta`; lanes at or above `32 - delta` get their own value.
/// Every lane of the warp must call it: [`shfl_down`]`(FULL_MASK, value, delta, 32)` on an `f32`.
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

mod sealed {
    /// Closes [`Shuffle`](super::Shuffle), [`Match`](super::Match) and
    /// [`Reduce`](super::Reduce) to the types implemented here.
    pub trait Sealed {}
}

/// A value the shuffles move between lanes: `u32`, `i32`, `f32` (one `shfl.sync`) and `u64`,
/// `i64`, `f64` (two, one per 32-bit half). Sealed.
pub trait Shuffle: Copy + sealed::Sealed {
    /// Applies `shuffle_word` to each 32-bit word of the value (the low half, then the high
    /// half of a 64-bit one) and reassembles the words.
    #[doc(hidden)]
    fn shuffle_words(self, shuffle_word: impl FnMut(u32) -> u32) -> Self;
}

macro_rules! shuffle_32 {
    ($($t:ty: $to:expr, $from:expr;)*) => {$(
        impl sealed::Sealed for $t {}
        impl Shuffle for $t {
            #[inline(always)]
            fn shuffle_words(self, mut shuffle_word: impl FnMut(u32) -> u32) -> Self {
                $from(shuffle_word($to(self)))
            }
        }
    )*};
}

macro_rules! shuffle_64 {
    ($($t:ty: $to:expr, $from:expr;)*) => {$(
        impl sealed::Sealed for $t {}
        impl Shuffle for $t {
            #[inline(always)]
            fn shuffle_words(self, mut shuffle_word: impl FnMut(u32) -> u32) -> Self {
                let bits: u64 = $to(self);
                let low = shuffle_word(bits as u32);
                let high = shuffle_word((bits >> 32) as u32);
                $from(u64::from(low) | (u64::from(high) << 32))
            }
        }
    )*};
}

shuffle_32! {
    u32: |v| v, |w| w;
    i32: |v: i32| v as u32, |w| w as i32;
    f32: f32::to_bits, f32::from_bits;
}

shuffle_64! {
    u64: |v| v, |w| w;
    i64: |v: i64| v as u64, |w| w as i64;
    f64: f64::to_bits, f64::from_bits;
}

/// One `shfl.sync.<mode>.b32` on a word: `b` is the lane, delta or lane mask; `c` packs the
/// segment mask (bits 8..13) and the clamp lane (bits 0..5).
macro_rules! raw_shuffle {
    ($($name:ident: $mode:literal;)*) => {$(
        #[cfg(target_arch = "nvptx64")]
        #[inline(always)]
        fn $name(mask: u32, word: u32, b: u32, c: u32) -> u32 {
            let out: u32;
            // SAFETY: a register exchange among the lanes of `mask`; no memory is touched.
            unsafe {
                core::arch::asm!(
                    concat!("shfl.sync.", $mode, ".b32 {out}, {word}, {b}, {c}, {mask};"),
                    out = out(reg32) out,
                    word = in(reg32) word,
                    b = in(reg32) b,
                    c = in(reg32) c,
                    mask = in(reg32) mask,
                    options(nomem, nostack, preserves_flags),
                );
            }
            out
        }
    )*};
}

raw_shuffle! {
    shfl_word_idx: "idx";
    shfl_word_up: "up";
    shfl_word_down: "down";
    shfl_word_xor: "bfly";
}

/// The `c` operand of `shfl.sync.up` for segments of `width` lanes: the segment mask
/// `(32 - width) << 8`, clamp lane 0 (CUDA's `__shfl_up_sync`).
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
fn segment_lower_bound(width: u32) -> u32 {
    SIZE.wrapping_sub(width) << 8
}

/// The `c` operand of `shfl.sync.idx/down/bfly` for segments of `width` lanes: the segment
/// mask `(32 - width) << 8`, clamp lane 31 (CUDA's `__shfl_sync`, `__shfl_down_sync`,
/// `__shfl_xor_sync`).
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
fn segment_upper_bound(width: u32) -> u32 {
    (SIZE.wrapping_sub(width) << 8) | 0x1f
}

/// `__shfl_sync(mask, value, src_lane, width)`: the `value` of lane `src_lane % width` of this
/// thread's segment (the warp cut into segments of `width` lanes; `width` a power of two,
/// 1..=32; 32 for the whole warp). The source lane must be in `mask` too. 64-bit values take
/// two `shfl.sync.idx.b32`.
#[inline(always)]
pub fn shfl_idx<T: Shuffle>(mask: u32, value: T, src_lane: u32, width: u32) -> T {
    on_gpu!("shfl_idx", {
        let c = segment_upper_bound(width);
        value.shuffle_words(|word| shfl_word_idx(mask, word, src_lane, c))
    })
}

/// `__shfl_up_sync(mask, value, delta, width)`: the `value` of lane `lane - delta`; a lane whose
/// source would fall below the start of its `width`-lane segment keeps its own `value`.
/// `width` is a power of two, 1..=32. 64-bit values take two `shfl.sync.up.b32`.
#[inline(always)]
pub fn shfl_up<T: Shuffle>(mask: u32, value: T, delta: u32, width: u32) -> T {
    on_gpu!("shfl_up", {
        let c = segment_lower_bound(width);
        value.shuffle_words(|word| shfl_word_up(mask, word, delta, c))
    })
}

/// `__shfl_down_sync(mask, value, delta, width)`: the `value` of lane `lane + delta`; a lane
/// whose source would fall past the end of its `width`-lane segment keeps its own `value`.
/// `width` is a power of two, 1..=32. 64-bit values take two `shfl.sync.down.b32`.
#[inline(always)]
pub fn shfl_down<T: Shuffle>(mask: u32, value: T, delta: u32, width: u32) -> T {
    on_gpu!("shfl_down", {
        let c = segment_upper_bound(width);
        value.shuffle_words(|word| shfl_word_down(mask, word, delta, c))
    })
}

/// `__shfl_xor_sync(mask, value, lane_mask, width)`: the `value` of lane `lane ^ lane_mask`
/// (the butterfly of reductions). With `width` < 32 a lane whose source lies past the end of
/// its segment keeps its own `value` (sources in earlier segments are read, as in CUDA).
/// `width` is a power of two, 1..=32. 64-bit values take two `shfl.sync.bfly.b32`.
#[inline(always)]
pub fn shfl_xor<T: Shuffle>(mask: u32, value: T, lane_mask: u32, width: u32) -> T {
    on_gpu!("shfl_xor", {
        let c = segment_upper_bound(width);
        value.shuffle_words(|word| shfl_word_xor(mask, word, lane_mask, c))
    })
}

/// `__ballot_sync(mask, predicate)`: the lanes of `mask` whose `predicate` is true, one bit
/// per lane (`vote.sync.ballot.b32`).
#[inline(always)]
pub fn ballot(mask: u32, predicate: bool) -> u32 {
    on_gpu!("ballot", {
        let lanes: u32;
        // SAFETY: a vote among the lanes of `mask`; no memory is touched.
        unsafe {
            core::arch::asm!(
                "{{ .reg .pred vote_in;",
                "setp.ne.u32 vote_in, {p}, 0;",
                "vote.sync.ballot.b32 {lanes}, vote_in, {mask}; }}",
                lanes = out(reg32) lanes,
                p = in(reg32) u32::from(predicate),
                mask = in(reg32) mask,
                options(nomem, nostack, preserves_flags),
            );
        }
        lanes
    })
}

/// `__any_sync(mask, predicate)`: whether `predicate` is true in some lane of `mask`
/// (`vote.sync.any.pred`).
#[inline(always)]
pub fn any(mask: u32, predicate: bool) -> bool {
    on_gpu!("any", {
        let any: u32;
        // SAFETY: a vote among the lanes of `mask`; no memory is touched.
        unsafe {
            core::arch::asm!(
                "{{ .reg .pred vote_in, vote_out;",
                "setp.ne.u32 vote_in, {p}, 0;",
                "vote.sync.any.pred vote_out, vote_in, {mask};",
                "selp.u32 {any}, 1, 0, vote_out; }}",
                any = out(reg32) any,
                p = in(reg32) u32::from(predicate),
                mask = in(reg32) mask,
                options(nomem, nostack, preserves_flags),
            );
        }
        any != 0
    })
}

/// `__all_sync(mask, predicate)`: whether `predicate` is true in every lane of `mask`
/// (`vote.sync.all.pred`).
#[inline(always)]
pub fn all(mask: u32, predicate: bool) -> bool {
    on_gpu!("all", {
        let all: u32;
        // SAFETY: a vote among the lanes of `mask`; no memory is touched.
        unsafe {
            core::arch::asm!(
                "{{ .reg .pred vote_in, vote_out;",
                "setp.ne.u32 vote_in, {p}, 0;",
                "vote.sync.all.pred vote_out, vote_in, {mask};",
                "selp.u32 {all}, 1, 0, vote_out; }}",
                all = out(reg32) all,
                p = in(reg32) u32::from(predicate),
                mask = in(reg32) mask,
                options(nomem, nostack, preserves_flags),
            );
        }
        all != 0
    })
}

/// `__syncwarp(mask)`: the lanes of `mask` wait for each other here, and their memory accesses
/// before it are ordered before those after it, among them (`bar.warp.sync`).
#[inline(always)]
pub fn sync_warp(mask: u32) {
    on_gpu!("sync_warp", {
        // SAFETY: a barrier among the lanes of `mask`; it reads or writes no memory (it orders
        // the lanes' accesses, hence no `nomem`).
        unsafe {
            core::arch::asm!("bar.warp.sync {mask};", mask = in(reg32) mask, options(nostack, preserves_flags));
        }
    })
}

/// A value the match functions compare across lanes: `u32`, `i32` (`match.*.sync.b32`) and
/// `u64`, `i64` (`.b64`). Sealed.
pub trait Match: Copy + sealed::Sealed {
    /// `match.any.sync` on the value.
    #[doc(hidden)]
    fn match_any_lanes(self, mask: u32) -> u32;
    /// `match.all.sync` on the value.
    #[doc(hidden)]
    fn match_all_lanes(self, mask: u32) -> Option<u32>;
}

macro_rules! match_impl {
    ($($t:ty: $reg:ident, $bits:literal;)*) => {$(
        impl Match for $t {
            #[inline(always)]
            fn match_any_lanes(self, mask: u32) -> u32 {
                on_gpu!("match_any", {
                    let peers: u32;
                    // SAFETY: a register exchange among the lanes of `mask`; no memory is touched.
                    unsafe {
                        core::arch::asm!(
                            concat!("match.any.sync.", $bits, " {p}, {v}, {m};"),
                            p = out(reg32) peers,
                            v = in($reg) self,
                            m = in(reg32) mask,
                            options(nomem, nostack, preserves_flags),
                        );
                    }
                    peers
                })
            }

            #[inline(always)]
            fn match_all_lanes(self, mask: u32) -> Option<u32> {
                on_gpu!("match_all", {
                    let (lanes, same): (u32, u32);
                    // SAFETY: a register exchange among the lanes of `mask`; no memory is touched.
                    unsafe {
                        core::arch::asm!(
                            "{{ .reg .pred all_same;",
                            concat!("match.all.sync.", $bits, " {lanes}|all_same, {v}, {m};"),
                            "selp.u32 {same}, 1, 0, all_same; }}",
                            lanes = out(reg32) lanes,
                            same = out(reg32) same,
                            v = in($reg) self,
                            m = in(reg32) mask,
                            options(nomem, nostack, preserves_flags),
                        );
                    }
                    (same != 0).then_some(lanes)
                })
            }
        }
    )*};
}

match_impl! {
    u32: reg32, "b32";
    i32: reg32, "b32";
    u64: reg64, "b64";
    i64: reg64, "b64";
}

/// `__match_any_sync(mask, value)`: the lanes of `mask` holding the same `value` as this one
/// (`match.any.sync.b32` / `.b64`, sm_70+).
#[inline(always)]
pub fn match_any<T: Match>(mask: u32, value: T) -> u32 {
    value.match_any_lanes(mask)
}

/// `__match_all_sync(mask, value, &pred)`: `Some(mask)` if every lane of `mask` holds the same
/// `value`, else `None` (`match.all.sync.b32` / `.b64`, sm_70+).
#[inline(always)]
pub fn match_all<T: Match>(mask: u32, value: T) -> Option<u32> {
    value.match_all_lanes(mask)
}

/// A value the warp reductions combine: `u32` and `i32` (`redux.sync`, sm_80+). Sealed.
pub trait Reduce: Copy + sealed::Sealed {
    /// `redux.sync.add` on the value.
    #[doc(hidden)]
    fn redux_add(self, mask: u32) -> Self;
    /// `redux.sync.min` on the value.
    #[doc(hidden)]
    fn redux_min(self, mask: u32) -> Self;
    /// `redux.sync.max` on the value.
    #[doc(hidden)]
    fn redux_max(self, mask: u32) -> Self;
}

/// One `redux.sync.<op>.<type>` on a 32-bit register.
macro_rules! redux {
    ($name:literal, $op:literal, $mask:expr, $value:expr) => {
        on_gpu!($name, {
            let out;
            // SAFETY: a reduction among the lanes of `mask`; no memory is touched.
            unsafe {
                core::arch::asm!(
                    concat!("redux.sync.", $op, " {out}, {v}, {m};"),
                    out = out(reg32) out,
                    v = in(reg32) $value,
                    m = in(reg32) $mask,
                    options(nomem, nostack, preserves_flags),
                );
            }
            out
        })
    };
}

impl Reduce for u32 {
    #[inline(always)]
    fn redux_add(self, mask: u32) -> Self {
        redux!("reduce_add", "add.u32", mask, self)
    }
    #[inline(always)]
    fn redux_min(self, mask: u32) -> Self {
        redux!("reduce_min", "min.u32", mask, self)
    }
    #[inline(always)]
    fn redux_max(self, mask: u32) -> Self {
        redux!("reduce_max", "max.u32", mask, self)
    }
}

impl Reduce for i32 {
    #[inline(always)]
    fn redux_add(self, mask: u32) -> Self {
        redux!("reduce_add", "add.s32", mask, self)
    }
    #[inline(always)]
    fn redux_min(self, mask: u32) -> Self {
        redux!("reduce_min", "min.s32", mask, self)
    }
    #[inline(always)]
    fn redux_max(self, mask: u32) -> Self {
        redux!("reduce_max", "max.s32", mask, self)
    }
}

/// `__reduce_add_sync(mask, value)`: the sum (wrapping) of `value` over the lanes of `mask`,
/// in every one of them (`redux.sync.add`; sm_80+ only: `ptxas` rejects it for older GPUs).
#[inline(always)]
pub fn reduce_add<T: Reduce>(mask: u32, value: T) -> T {
    value.redux_add(mask)
}

/// `__reduce_min_sync(mask, value)`: the least `value` over the lanes of `mask`
/// (`redux.sync.min`; sm_80+).
#[inline(always)]
pub fn reduce_min<T: Reduce>(mask: u32, value: T) -> T {
    value.redux_min(mask)
}

/// `__reduce_max_sync(mask, value)`: the greatest `value` over the lanes of `mask`
/// (`redux.sync.max`; sm_80+).
#[inline(always)]
pub fn reduce_max<T: Reduce>(mask: u32, value: T) -> T {
    value.redux_max(mask)
}

/// `__reduce_and_sync(mask, value)`: the bitwise and of `value` over the lanes of `mask`
/// (`redux.sync.and.b32`; sm_80+).
#[inline(always)]
pub fn reduce_and(mask: u32, value: u32) -> u32 {
    redux!("reduce_and", "and.b32", mask, value)
}

/// `__reduce_or_sync(mask, value)`: the bitwise or of `value` over the lanes of `mask`
/// (`redux.sync.or.b32`; sm_80+).
#[inline(always)]
pub fn reduce_or(mask: u32, value: u32) -> u32 {
    redux!("reduce_or", "or.b32", mask, value)
}

/// `__reduce_xor_sync(mask, value)`: the bitwise xor of `value` over the lanes of `mask`
/// (`redux.sync.xor.b32`; sm_80+).
#[inline(always)]
pub fn reduce_xor(mask: u32, value: u32) -> u32 {
    redux!("reduce_xor", "xor.b32", mask, value)
}
