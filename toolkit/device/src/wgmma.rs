//! Hopper's warpgroup matrix multiply-accumulate (`wgmma.mma_async`, sm_90a: the module using
//! it is built with `.arch("sm_90a")`): four warps (a warpgroup, 128 threads) multiply a 64 × 16
//! tile of A by a 16 × N tile of B, both read from shared memory through 64-bit descriptors,
//! into f32 accumulators spread over the warpgroup, asynchronously. CUDA C's
//! `wgmma.mma_async` inline PTX as CUTLASS's `SM90_64x64x16_F32BF16BF16_SS` writes it,
//! cuda-oxide's `wgmma`.
//!
//! The sequence, per group of products:
//! [`fence`] (`wgmma.fence`: the accumulators' and shared memory's earlier writes ordered before
//! the products), one or more [`mma_m64n64k16_bf16`] / [`mma_m64n64k16_f16`], [`commit`]
//! (`wgmma.commit_group`), [`wait::<N>`](wait) (`wgmma.wait_group N`) before the accumulators
//! are read or the tiles overwritten.
//!
//! Tiles are K-major without swizzle: "core matrices" of 8 rows × 16 bytes (8 halves of K), each
//! 128 contiguous bytes; [`SharedDescriptor::k_major`] gives the byte distance between core
//! matrices next to each other along K (the leading offset) and along M or N (the stride
//! offset). Element (row r, k) of a tile laid out with leading offset L and stride offset S is
//! at byte `(r / 8)·S + (k / 8)·L + (r % 8)·16 + (k % 8)·2`.
//!
//! Accumulators (`[f32; 32]` per thread for N = 64): warp `w` of the warpgroup holds rows
//! `16w..16w + 16`; with `g = lane / 4`, `t = lane % 4`, element `4j + h` is row
//! `16w + g + 8·(h / 2)`, column `8j + 2t + h % 2` (the `mma.sync` C layout, once per 8 columns).
//! `cookbook::wgmma_gemm_bf16` is the worked example.

/// A shared-memory matrix descriptor (the 64-bit operand of `wgmma`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SharedDescriptor(pub u64);

impl SharedDescriptor {
    /// The descriptor of a K-major tile without swizzle starting at shared-space byte
    /// `address` (16-byte aligned), with `leading` bytes between core matrices adjacent along K
    /// and `stride` bytes between those adjacent along M (or N); each a multiple of 16 below
    /// 2¹⁸ (the fields hold them in units of 16 bytes, 14 bits each).
    pub const fn k_major(address: u32, leading: u32, stride: u32) -> Self {
        // Bits 0-13 the address, 16-29 the leading offset, 32-45 the stride offset, 49-51 the
        // base offset (0), 62-63 the swizzle (0: none).
        Self(descriptor_field(address) | (descriptor_field(leading) << 16) | (descriptor_field(stride) << 32))
    }

    /// The same tile `bytes` further on (a later K step of a larger tile).
    pub const fn offset(self, bytes: u32) -> Self {
        Self(self.0 + ((bytes >> 4) as u64))
    }
}

/// A byte count as a descriptor's 14-bit field in units of 16 bytes.
const fn descriptor_field(bytes: u32) -> u64 {
    ((bytes >> 4) & 0x3fff) as u64
}

/// Orders the warpgroup's earlier register and shared-memory writes before the next
/// `wgmma.mma_async` (`wgmma.fence.sync.aligned`).
#[inline(always)]
pub fn fence() {
    on_gpu!("wgmma::fence", {
        // SAFETY: a fence (no `nomem`); the warpgroup runs it together (the callers' structure).
        unsafe { core::arch::asm!("wgmma.fence.sync.aligned;", options(nostack, preserves_flags)) }
    })
}

/// Closes the group of this warpgroup's products issued since the last commit
/// (`wgmma.commit_group.sync.aligned`).
#[inline(always)]
pub fn commit() {
    on_gpu!("wgmma::commit", {
        // SAFETY: as in `fence`.
        unsafe { core::arch::asm!("wgmma.commit_group.sync.aligned;", options(nostack, preserves_flags)) }
    })
}

/// Waits until at most `N` of the warpgroup's committed groups are pending
/// (`wgmma.wait_group.sync.aligned N`): their accumulators may then be read.
#[inline(always)]
pub fn wait<const N: u32>() {
    on_gpu!("wgmma::wait", {
        // SAFETY: as in `fence`.
        unsafe {
            core::arch::asm!("wgmma.wait_group.sync.aligned {n};", n = const N, options(nostack, preserves_flags))
        }
    })
}

/// `acc` (+)= A·Bᵀ for a 64 × 16 bf16 tile A and a 64 × 16 (N × K) bf16 tile B, both K-major in
/// shared memory (`wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16`); `accumulate` false
/// starts from zero instead of `acc`.
///
/// # Safety
/// The four warps of a warpgroup (128 consecutive threads, the first a multiple of 128) run
/// it together; `a` and `b` describe 64 × 16 and 64 × 16 (N × K) bf16 tiles in shared memory,
/// written before ([`fence_async_shared`](crate::tma::fence_async_shared) after generic writes,
/// then a barrier), and [`fence`] ran after the accumulators were last written; nothing reads or
/// writes `acc` until [`wait::<0>`](wait) (or the wait covering this group) returns.
#[inline(always)]
pub unsafe fn mma_m64n64k16_bf16(
    acc: &mut [f32; 32],
    a: SharedDescriptor,
    b: SharedDescriptor,
    accumulate: bool,
) {
    on_gpu!("wgmma::mma_m64n64k16_bf16", {
        // SAFETY: the caller's contract; reads shared memory, writes the accumulators.
        unsafe {
            core::arch::asm!(
                "{{",
                ".reg .pred p;",
                "setp.ne.b32 p, {scale}, 0;",
                "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{{d0}, {d1}, {d2}, {d3}, {d4}, {d5}, {d6}, {d7}, {d8}, {d9}, {d10}, {d11}, {d12}, {d13}, {d14}, {d15}, {d16}, {d17}, {d18}, {d19}, {d20}, {d21}, {d22}, {d23}, {d24}, {d25}, {d26}, {d27}, {d28}, {d29}, {d30}, {d31}}}, {a}, {b}, p, 1, 1, 0, 0;",
                "}}",
                d0 = inout(reg32) acc[0],
                d1 = inout(reg32) acc[1],
                d2 = inout(reg32) acc[2],
                d3 = inout(reg32) acc[3],
                d4 = inout(reg32) acc[4],
                d5 = inout(reg32) acc[5],
                d6 = inout(reg32) acc[6],
                d7 = inout(reg32) acc[7],
                d8 = inout(reg32) acc[8],
                d9 = inout(reg32) acc[9],
                d10 = inout(reg32) acc[10],
                d11 = inout(reg32) acc[11],
                d12 = inout(reg32) acc[12],
                d13 = inout(reg32) acc[13],
                d14 = inout(reg32) acc[14],
                d15 = inout(reg32) acc[15],
                d16 = inout(reg32) acc[16],
                d17 = inout(reg32) acc[17],
                d18 = inout(reg32) acc[18],
                d19 = inout(reg32) acc[19],
                d20 = inout(reg32) acc[20],
                d21 = inout(reg32) acc[21],
                d22 = inout(reg32) acc[22],
                d23 = inout(reg32) acc[23],
                d24 = inout(reg32) acc[24],
                d25 = inout(reg32) acc[25],
                d26 = inout(reg32) acc[26],
                d27 = inout(reg32) acc[27],
                d28 = inout(reg32) acc[28],
                d29 = inout(reg32) acc[29],
                d30 = inout(reg32) acc[30],
                d31 = inout(reg32) acc[31],
                a = in(reg64) a.0,
                b = in(reg64) b.0,
                scale = in(reg32) u32::from(accumulate),
                options(nostack, preserves_flags),
            );
        }
    })
}

/// As [`mma_m64n64k16_bf16`] for f16 tiles (`...m64n64k16.f32.f16.f16`).
///
/// # Safety
/// The four warps of a warpgroup (128 consecutive threads, the first a multiple of 128) run
/// it together; `a` and `b` describe 64 × 16 and 64 × 16 (N × K) f16 tiles in shared memory,
/// written before ([`fence_async_shared`](crate::tma::fence_async_shared) after generic writes,
/// then a barrier), and [`fence`] ran after the accumulators were last written; nothing reads or
/// writes `acc` until [`wait::<0>`](wait) (or the wait covering this group) returns.
#[inline(always)]
pub unsafe fn mma_m64n64k16_f16(
    acc: &mut [f32; 32],
    a: SharedDescriptor,
    b: SharedDescriptor,
    accumulate: bool,
) {
    on_gpu!("wgmma::mma_m64n64k16_f16", {
        // SAFETY: the caller's contract; reads shared memory, writes the accumulators.
        unsafe {
            core::arch::asm!(
                "{{",
                ".reg .pred p;",
                "setp.ne.b32 p, {scale}, 0;",
                "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{{d0}, {d1}, {d2}, {d3}, {d4}, {d5}, {d6}, {d7}, {d8}, {d9}, {d10}, {d11}, {d12}, {d13}, {d14}, {d15}, {d16}, {d17}, {d18}, {d19}, {d20}, {d21}, {d22}, {d23}, {d24}, {d25}, {d26}, {d27}, {d28}, {d29}, {d30}, {d31}}}, {a}, {b}, p, 1, 1, 0, 0;",
                "}}",
                d0 = inout(reg32) acc[0],
                d1 = inout(reg32) acc[1],
                d2 = inout(reg32) acc[2],
                d3 = inout(reg32) acc[3],
                d4 = inout(reg32) acc[4],
                d5 = inout(reg32) acc[5],
                d6 = inout(reg32) acc[6],
                d7 = inout(reg32) acc[7],
                d8 = inout(reg32) acc[8],
                d9 = inout(reg32) acc[9],
                d10 = inout(reg32) acc[10],
                d11 = inout(reg32) acc[11],
                d12 = inout(reg32) acc[12],
                d13 = inout(reg32) acc[13],
                d14 = inout(reg32) acc[14],
                d15 = inout(reg32) acc[15],
                d16 = inout(reg32) acc[16],
                d17 = inout(reg32) acc[17],
                d18 = inout(reg32) acc[18],
                d19 = inout(reg32) acc[19],
                d20 = inout(reg32) acc[20],
                d21 = inout(reg32) acc[21],
                d22 = inout(reg32) acc[22],
                d23 = inout(reg32) acc[23],
                d24 = inout(reg32) acc[24],
                d25 = inout(reg32) acc[25],
                d26 = inout(reg32) acc[26],
                d27 = inout(reg32) acc[27],
                d28 = inout(reg32) acc[28],
                d29 = inout(reg32) acc[29],
                d30 = inout(reg32) acc[30],
                d31 = inout(reg32) acc[31],
                a = in(reg64) a.0,
                b = in(reg64) b.0,
                scale = in(reg32) u32::from(accumulate),
                options(nostack, preserves_flags),
            );
        }
    })
}

#[cfg(test)]
mod tests {
    use super::SharedDescriptor;

    #[test]
    fn a_descriptor_holds_address_and_offsets_in_units_of_16_bytes() {
        let d = SharedDescriptor::k_major(0x1230, 128, 1024);
        assert_eq!(d.0 & 0x3fff, 0x123);
        assert_eq!((d.0 >> 16) & 0x3fff, 8);
        assert_eq!((d.0 >> 32) & 0x3fff, 64);
        assert_eq!(d.0 >> 46, 0, "no base offset, no swizzle");
        assert_eq!(d.offset(256).0 & 0x3fff, 0x133);
    }
}
