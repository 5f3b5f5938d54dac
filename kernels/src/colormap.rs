//! Colour mapping of a Gray-Scott frame into 8-bit palette levels, as in the reference
//! write-up's "cyberpunk" pipeline: normalise V by its min/max (or U when V is flat), square
//! root, ×1.2 − 0.1, clip to [0, 1], then one of 256 levels. The level indexes a 256-entry
//! palette on the host, which is also the GIF's global palette, so frames leave the GPU as
//! one byte per cell and no colour quantisation is ever needed.
//!
//! Kernels, in pipeline order: [`field_min_max`] (a reduction into four `u32` slots) then
//! [`colormap_levels`].

use ptxkit_device::kernel;
use ptxkit_device::{
    atomic::{atomic_max_u32, atomic_min_u32},
    shared_array, thread,
};

/// Below this range a field counts as flat (the reference's threshold).
pub const FLAT_RANGE: f32 = 1e-6;

/// Number of palette levels.
pub const LEVELS: usize = 256;

/// Maps a float to a `u32` whose unsigned order is the float order (for all non-NaN values,
/// −0.0 just below +0.0), so atomic integer min/max can reduce floats.
#[inline(always)]
pub fn ordered_bits(x: f32) -> u32 {
    let bits = x.to_bits();
    if bits & 0x8000_0000 != 0 { !bits } else { bits | 0x8000_0000 }
}

/// The inverse of [`ordered_bits`].
#[inline(always)]
pub fn from_ordered_bits(key: u32) -> f32 {
    f32::from_bits(if key & 0x8000_0000 != 0 { key & 0x7fff_ffff } else { !key })
}

/// The four slots [`field_min_max`] reduces into, in order: V min, V max, U min, U max,
/// each as [`ordered_bits`]. Reset them with [`MinMax::EMPTY`] before a reduction.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct MinMax {
    pub v_min: f32,
    pub v_max: f32,
    pub u_min: f32,
    pub u_max: f32,
}

impl MinMax {
    /// The reset value of the four `u32` slots.
    pub const EMPTY: [u32; 4] = [u32::MAX, 0, u32::MAX, 0];

    /// Decodes the four reduction slots.
    #[inline(always)]
    pub fn from_slots(slots: [u32; 4]) -> Self {
        Self {
            v_min: from_ordered_bits(slots[0]),
            v_max: from_ordered_bits(slots[1]),
            u_min: from_ordered_bits(slots[2]),
            u_max: from_ordered_bits(slots[3]),
        }
    }

    /// Which field to show and its range: V if it varies, else U if it varies, else nothing
    /// (a uniform frame at level 0), as the reference does.
    #[inline(always)]
    pub fn source(&self) -> Source {
        if self.v_max - self.v_min > FLAT_RANGE {
            Source::V { lo: self.v_min, hi: self.v_max }
        } else if self.u_max - self.u_min > FLAT_RANGE {
            Source::U { lo: self.u_min, hi: self.u_max }
        } else {
            Source::Flat
        }
    }
}

/// The field a frame is drawn from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Source {
    V { lo: f32, hi: f32 },
    U { lo: f32, hi: f32 },
    Flat,
}

/// The palette level of `x` in a field ranging over [lo, hi]: normalise, square root,
/// contrast boost (×1.2 − 0.1), clip, and scale to 0..=255 (truncating, like the reference).
#[inline(always)]
pub fn level(x: f32, lo: f32, hi: f32) -> u8 {
    let t = ((x - lo) / (hi - lo)).max(0.0);
    let boosted = crate::math::clamp01(core::f32::math::sqrt(t) * 1.2 - 0.1);
    (boosted * 255.0) as u8
}

/// Reduces V and U to their minima and maxima, into `slots` (see [`MinMax`]), which the
/// caller resets to [`MinMax::EMPTY`]. Handles a batch of frames: frame `blockIdx.y` reads
/// `u`, `v` at offset `blockIdx.y × cells` and reduces into slots `4 × blockIdx.y ..`.
///
/// Thread mapping: a 1-D grid-stride loop with blocks of exactly [`MIN_MAX_BLOCK`] threads;
/// each thread folds its cells in registers, the block reduces through a shared tile, and
/// thread 0 merges the block's result with four global atomics. Bytes per cell: 8 (reads u
/// and v once).
#[kernel]
pub unsafe fn field_min_max(u: *const f32, v: *const f32, cells: u32, slots: *mut u32) {
    let frame = thread::block_idx_y() as usize;
    let (u, v, slots) =
        unsafe { (u.add(frame * cells as usize), v.add(frame * cells as usize), slots.add(4 * frame)) };
    let mut acc = [u32::MAX, 0, u32::MAX, 0];
    let mut i = thread::index_1d();
    while i < cells {
        let (vk, uk) = unsafe { (ordered_bits(*v.add(i as usize)), ordered_bits(*u.add(i as usize))) };
        acc = [acc[0].min(vk), acc[1].max(vk), acc[2].min(uk), acc[3].max(uk)];
        i += thread::grid_size_1d();
    }

    let tile: *mut u32 = shared_array!(min_max_tile: [u32; 4 * MIN_MAX_BLOCK]);
    let t = thread::thread_idx_x() as usize;
    unsafe {
        for (k, value) in acc.iter().enumerate() {
            *tile.add(k * MIN_MAX_BLOCK + t) = *value;
        }
    }
    thread::sync_threads();
    let mut half = MIN_MAX_BLOCK / 2;
    while half > 0 {
        if t < half {
            unsafe {
                for k in 0..4 {
                    let (mine, other) =
                        (tile.add(k * MIN_MAX_BLOCK + t), tile.add(k * MIN_MAX_BLOCK + t + half));
                    *mine = if k % 2 == 0 { (*mine).min(*other) } else { (*mine).max(*other) };
                }
            }
        }
        thread::sync_threads();
        half /= 2;
    }
    if t == 0 {
        unsafe {
            atomic_min_u32(slots, *tile);
            atomic_max_u32(slots.add(1), *tile.add(MIN_MAX_BLOCK));
            atomic_min_u32(slots.add(2), *tile.add(2 * MIN_MAX_BLOCK));
            atomic_max_u32(slots.add(3), *tile.add(3 * MIN_MAX_BLOCK));
        }
    }
}

/// The block size [`field_min_max`] must be launched with (a power of two).
pub const MIN_MAX_BLOCK: usize = 256;

/// Writes the palette level of every cell of a frame, normalised by the reduced `slots`.
/// Batched like [`field_min_max`]: frame `blockIdx.y` reads `u`, `v` and writes `levels` at
/// offset `blockIdx.y × cells`, normalised by slots `4 × blockIdx.y ..`.
///
/// Thread mapping: one thread per cell of a 1-D launch (x), one frame per grid row (y).
/// Bytes per cell: reads one field (4 B) and writes one level (1 B).
#[kernel]
pub unsafe fn colormap_levels(u: *const f32, v: *const f32, cells: u32, slots: *const u32, levels: *mut u8) {
    let i = thread::index_1d();
    if i >= cells {
        return;
    }
    let frame = thread::block_idx_y() as usize;
    let i = frame * cells as usize + i as usize;
    let slots = unsafe { slots.add(4 * frame) };
    unsafe {
        let range = MinMax::from_slots([*slots, *slots.add(1), *slots.add(2), *slots.add(3)]);
        *levels.add(i) = match range.source() {
            Source::V { lo, hi } => level(*v.add(i), lo, hi),
            Source::U { lo, hi } => level(*u.add(i), lo, hi),
            Source::Flat => 0,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordered_bits_preserve_float_order() {
        let values = [f32::NEG_INFINITY, -3.5, -1e-30, -0.0, 0.0, 1e-30, 0.25, 1.0, 7e20, f32::INFINITY];
        for pair in values.windows(2) {
            assert!(ordered_bits(pair[0]) < ordered_bits(pair[1]), "{pair:?}");
        }
        for x in values {
            assert_eq!(from_ordered_bits(ordered_bits(x)).to_bits(), x.to_bits());
        }
    }

    #[test]
    fn level_spans_the_palette() {
        assert_eq!(level(0.0, 0.0, 1.0), 0);
        assert_eq!(level(1.0, 0.0, 1.0), 255);
        // sqrt(0.25) * 1.2 - 0.1 = 0.5 → 127.5, truncated.
        assert_eq!(level(0.25, 0.0, 1.0), 127);
        assert_eq!(level(2.25, 2.0, 3.0), 127);
    }

    #[test]
    fn source_falls_back_to_u_then_flat() {
        let mm = |v_min, v_max, u_min, u_max| MinMax { v_min, v_max, u_min, u_max };
        assert_eq!(mm(0.0, 0.5, 0.0, 1.0).source(), Source::V { lo: 0.0, hi: 0.5 });
        assert_eq!(mm(0.2, 0.2, 0.1, 0.9).source(), Source::U { lo: 0.1, hi: 0.9 });
        assert_eq!(mm(0.2, 0.2, 0.3, 0.3).source(), Source::Flat);
        // A range of exactly FLAT_RANGE is still flat (the reference's `>`), one ulp more is not.
        let above = f32::from_bits(FLAT_RANGE.to_bits() + 1);
        assert_eq!(mm(0.0, FLAT_RANGE, 0.0, FLAT_RANGE).source(), Source::Flat);
        assert_eq!(mm(0.0, FLAT_RANGE, 0.0, above).source(), Source::U { lo: 0.0, hi: above });
        assert_eq!(mm(0.0, above, 0.0, FLAT_RANGE).source(), Source::V { lo: 0.0, hi: above });
    }
}
