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

    /// The descriptor of a K-major tile in TMA's 128-byte swizzle (`CU_TENSOR_MAP_SWIZZLE_128B`:
    /// rows of 64 halves, each group of 8 rows a 1024-byte atom whose 16-byte chunks are
    /// permuted by the row) starting at shared-space byte `address` (the atom's start
    /// 1024-byte aligned; a later K step of 16 halves adds 32 bytes, [`offset`](Self::offset)),
    /// `stride` bytes between 8-row groups (1024 for a densely packed tile).
    pub const fn k_major_swizzle_128(address: u32, stride: u32) -> Self {
        // The leading offset is unused in this layout (1 by convention, as CUTLASS sets it);
        // bits 62-63 = 1: 128-byte swizzle.
        Self(descriptor_field(address) | (1 << 16) | (descriptor_field(stride) << 32) | (1 << 62))
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
/// shared memory (`wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16`, 32 accumulators a
/// thread); `accumulate` false starts from zero instead of `acc`.
///
/// # Safety
/// The four warps of a warpgroup (128 consecutive threads, the first a multiple of 128) run
/// it together; `a` and `b` describe 64 × 16 and 64 × 16 (N × K) bf16 tiles in shared memory,
/// written before ([`fence_async_shared`](crate::tma::fence_async_shared) after generic writes,
/// then a barrier; or a completed TMA copy), and [`fence`] ran after the accumulators were last
/// written; nothing reads or writes `acc` until [`wait::<0>`](wait) (or the wait covering this
/// group) returns.
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
/// then a barrier; or a completed TMA copy), and [`fence`] ran after the accumulators were last
/// written; nothing reads or writes `acc` until [`wait::<0>`](wait) (or the wait covering this
/// group) returns.
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

/// `acc` (+)= A·Bᵀ for a 64 × 16 bf16 tile A and a 128 × 16 (N × K) bf16 tile B, both K-major in
/// shared memory (`wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16`, 64 accumulators a
/// thread); `accumulate` false starts from zero instead of `acc`.
///
/// # Safety
/// The four warps of a warpgroup (128 consecutive threads, the first a multiple of 128) run
/// it together; `a` and `b` describe 64 × 16 and 128 × 16 (N × K) bf16 tiles in shared memory,
/// written before ([`fence_async_shared`](crate::tma::fence_async_shared) after generic writes,
/// then a barrier; or a completed TMA copy), and [`fence`] ran after the accumulators were last
/// written; nothing reads or writes `acc` until [`wait::<0>`](wait) (or the wait covering this
/// group) returns.
#[inline(always)]
pub unsafe fn mma_m64n128k16_bf16(
    acc: &mut [f32; 64],
    a: SharedDescriptor,
    b: SharedDescriptor,
    accumulate: bool,
) {
    on_gpu!("wgmma::mma_m64n128k16_bf16", {
        // SAFETY: the caller's contract; reads shared memory, writes the accumulators.
        unsafe {
            core::arch::asm!(
                "{{",
                ".reg .pred p;",
                "setp.ne.b32 p, {scale}, 0;",
                "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{{d0}, {d1}, {d2}, {d3}, {d4}, {d5}, {d6}, {d7}, {d8}, {d9}, {d10}, {d11}, {d12}, {d13}, {d14}, {d15}, {d16}, {d17}, {d18}, {d19}, {d20}, {d21}, {d22}, {d23}, {d24}, {d25}, {d26}, {d27}, {d28}, {d29}, {d30}, {d31}, {d32}, {d33}, {d34}, {d35}, {d36}, {d37}, {d38}, {d39}, {d40}, {d41}, {d42}, {d43}, {d44}, {d45}, {d46}, {d47}, {d48}, {d49}, {d50}, {d51}, {d52}, {d53}, {d54}, {d55}, {d56}, {d57}, {d58}, {d59}, {d60}, {d61}, {d62}, {d63}}}, {a}, {b}, p, 1, 1, 0, 0;",
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
                d32 = inout(reg32) acc[32],
                d33 = inout(reg32) acc[33],
                d34 = inout(reg32) acc[34],
                d35 = inout(reg32) acc[35],
                d36 = inout(reg32) acc[36],
                d37 = inout(reg32) acc[37],
                d38 = inout(reg32) acc[38],
                d39 = inout(reg32) acc[39],
                d40 = inout(reg32) acc[40],
                d41 = inout(reg32) acc[41],
                d42 = inout(reg32) acc[42],
                d43 = inout(reg32) acc[43],
                d44 = inout(reg32) acc[44],
                d45 = inout(reg32) acc[45],
                d46 = inout(reg32) acc[46],
                d47 = inout(reg32) acc[47],
                d48 = inout(reg32) acc[48],
                d49 = inout(reg32) acc[49],
                d50 = inout(reg32) acc[50],
                d51 = inout(reg32) acc[51],
                d52 = inout(reg32) acc[52],
                d53 = inout(reg32) acc[53],
                d54 = inout(reg32) acc[54],
                d55 = inout(reg32) acc[55],
                d56 = inout(reg32) acc[56],
                d57 = inout(reg32) acc[57],
                d58 = inout(reg32) acc[58],
                d59 = inout(reg32) acc[59],
                d60 = inout(reg32) acc[60],
                d61 = inout(reg32) acc[61],
                d62 = inout(reg32) acc[62],
                d63 = inout(reg32) acc[63],
                a = in(reg64) a.0,
                b = in(reg64) b.0,
                scale = in(reg32) u32::from(accumulate),
                options(nostack, preserves_flags),
            );
        }
    })
}

/// As [`mma_m64n128k16_bf16`] for f16 tiles (`...m64n128k16.f32.f16.f16`).
///
/// # Safety
/// The four warps of a warpgroup (128 consecutive threads, the first a multiple of 128) run
/// it together; `a` and `b` describe 64 × 16 and 128 × 16 (N × K) f16 tiles in shared memory,
/// written before ([`fence_async_shared`](crate::tma::fence_async_shared) after generic writes,
/// then a barrier; or a completed TMA copy), and [`fence`] ran after the accumulators were last
/// written; nothing reads or writes `acc` until [`wait::<0>`](wait) (or the wait covering this
/// group) returns.
#[inline(always)]
pub unsafe fn mma_m64n128k16_f16(
    acc: &mut [f32; 64],
    a: SharedDescriptor,
    b: SharedDescriptor,
    accumulate: bool,
) {
    on_gpu!("wgmma::mma_m64n128k16_f16", {
        // SAFETY: the caller's contract; reads shared memory, writes the accumulators.
        unsafe {
            core::arch::asm!(
                "{{",
                ".reg .pred p;",
                "setp.ne.b32 p, {scale}, 0;",
                "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {{{d0}, {d1}, {d2}, {d3}, {d4}, {d5}, {d6}, {d7}, {d8}, {d9}, {d10}, {d11}, {d12}, {d13}, {d14}, {d15}, {d16}, {d17}, {d18}, {d19}, {d20}, {d21}, {d22}, {d23}, {d24}, {d25}, {d26}, {d27}, {d28}, {d29}, {d30}, {d31}, {d32}, {d33}, {d34}, {d35}, {d36}, {d37}, {d38}, {d39}, {d40}, {d41}, {d42}, {d43}, {d44}, {d45}, {d46}, {d47}, {d48}, {d49}, {d50}, {d51}, {d52}, {d53}, {d54}, {d55}, {d56}, {d57}, {d58}, {d59}, {d60}, {d61}, {d62}, {d63}}}, {a}, {b}, p, 1, 1, 0, 0;",
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
                d32 = inout(reg32) acc[32],
                d33 = inout(reg32) acc[33],
                d34 = inout(reg32) acc[34],
                d35 = inout(reg32) acc[35],
                d36 = inout(reg32) acc[36],
                d37 = inout(reg32) acc[37],
                d38 = inout(reg32) acc[38],
                d39 = inout(reg32) acc[39],
                d40 = inout(reg32) acc[40],
                d41 = inout(reg32) acc[41],
                d42 = inout(reg32) acc[42],
                d43 = inout(reg32) acc[43],
                d44 = inout(reg32) acc[44],
                d45 = inout(reg32) acc[45],
                d46 = inout(reg32) acc[46],
                d47 = inout(reg32) acc[47],
                d48 = inout(reg32) acc[48],
                d49 = inout(reg32) acc[49],
                d50 = inout(reg32) acc[50],
                d51 = inout(reg32) acc[51],
                d52 = inout(reg32) acc[52],
                d53 = inout(reg32) acc[53],
                d54 = inout(reg32) acc[54],
                d55 = inout(reg32) acc[55],
                d56 = inout(reg32) acc[56],
                d57 = inout(reg32) acc[57],
                d58 = inout(reg32) acc[58],
                d59 = inout(reg32) acc[59],
                d60 = inout(reg32) acc[60],
                d61 = inout(reg32) acc[61],
                d62 = inout(reg32) acc[62],
                d63 = inout(reg32) acc[63],
                a = in(reg64) a.0,
                b = in(reg64) b.0,
                scale = in(reg32) u32::from(accumulate),
                options(nostack, preserves_flags),
            );
        }
    })
}

/// `acc` (+)= A·Bᵀ for a 64 × 16 bf16 tile A and a 256 × 16 (N × K) bf16 tile B, both K-major in
/// shared memory (`wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16`, 128 accumulators a
/// thread); `accumulate` false starts from zero instead of `acc`.
///
/// # Safety
/// The four warps of a warpgroup (128 consecutive threads, the first a multiple of 128) run
/// it together; `a` and `b` describe 64 × 16 and 256 × 16 (N × K) bf16 tiles in shared memory,
/// written before ([`fence_async_shared`](crate::tma::fence_async_shared) after generic writes,
/// then a barrier; or a completed TMA copy), and [`fence`] ran after the accumulators were last
/// written; nothing reads or writes `acc` until [`wait::<0>`](wait) (or the wait covering this
/// group) returns.
#[inline(always)]
pub unsafe fn mma_m64n256k16_bf16(
    acc: &mut [f32; 128],
    a: SharedDescriptor,
    b: SharedDescriptor,
    accumulate: bool,
) {
    on_gpu!("wgmma::mma_m64n256k16_bf16", {
        // SAFETY: the caller's contract; reads shared memory, writes the accumulators.
        unsafe {
            core::arch::asm!(
                "{{",
                ".reg .pred p;",
                "setp.ne.b32 p, {scale}, 0;",
                "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {{{d0}, {d1}, {d2}, {d3}, {d4}, {d5}, {d6}, {d7}, {d8}, {d9}, {d10}, {d11}, {d12}, {d13}, {d14}, {d15}, {d16}, {d17}, {d18}, {d19}, {d20}, {d21}, {d22}, {d23}, {d24}, {d25}, {d26}, {d27}, {d28}, {d29}, {d30}, {d31}, {d32}, {d33}, {d34}, {d35}, {d36}, {d37}, {d38}, {d39}, {d40}, {d41}, {d42}, {d43}, {d44}, {d45}, {d46}, {d47}, {d48}, {d49}, {d50}, {d51}, {d52}, {d53}, {d54}, {d55}, {d56}, {d57}, {d58}, {d59}, {d60}, {d61}, {d62}, {d63}, {d64}, {d65}, {d66}, {d67}, {d68}, {d69}, {d70}, {d71}, {d72}, {d73}, {d74}, {d75}, {d76}, {d77}, {d78}, {d79}, {d80}, {d81}, {d82}, {d83}, {d84}, {d85}, {d86}, {d87}, {d88}, {d89}, {d90}, {d91}, {d92}, {d93}, {d94}, {d95}, {d96}, {d97}, {d98}, {d99}, {d100}, {d101}, {d102}, {d103}, {d104}, {d105}, {d106}, {d107}, {d108}, {d109}, {d110}, {d111}, {d112}, {d113}, {d114}, {d115}, {d116}, {d117}, {d118}, {d119}, {d120}, {d121}, {d122}, {d123}, {d124}, {d125}, {d126}, {d127}}}, {a}, {b}, p, 1, 1, 0, 0;",
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
                d32 = inout(reg32) acc[32],
                d33 = inout(reg32) acc[33],
                d34 = inout(reg32) acc[34],
                d35 = inout(reg32) acc[35],
                d36 = inout(reg32) acc[36],
                d37 = inout(reg32) acc[37],
                d38 = inout(reg32) acc[38],
                d39 = inout(reg32) acc[39],
                d40 = inout(reg32) acc[40],
                d41 = inout(reg32) acc[41],
                d42 = inout(reg32) acc[42],
                d43 = inout(reg32) acc[43],
                d44 = inout(reg32) acc[44],
                d45 = inout(reg32) acc[45],
                d46 = inout(reg32) acc[46],
                d47 = inout(reg32) acc[47],
                d48 = inout(reg32) acc[48],
                d49 = inout(reg32) acc[49],
                d50 = inout(reg32) acc[50],
                d51 = inout(reg32) acc[51],
                d52 = inout(reg32) acc[52],
                d53 = inout(reg32) acc[53],
                d54 = inout(reg32) acc[54],
                d55 = inout(reg32) acc[55],
                d56 = inout(reg32) acc[56],
                d57 = inout(reg32) acc[57],
                d58 = inout(reg32) acc[58],
                d59 = inout(reg32) acc[59],
                d60 = inout(reg32) acc[60],
                d61 = inout(reg32) acc[61],
                d62 = inout(reg32) acc[62],
                d63 = inout(reg32) acc[63],
                d64 = inout(reg32) acc[64],
                d65 = inout(reg32) acc[65],
                d66 = inout(reg32) acc[66],
                d67 = inout(reg32) acc[67],
                d68 = inout(reg32) acc[68],
                d69 = inout(reg32) acc[69],
                d70 = inout(reg32) acc[70],
                d71 = inout(reg32) acc[71],
                d72 = inout(reg32) acc[72],
                d73 = inout(reg32) acc[73],
                d74 = inout(reg32) acc[74],
                d75 = inout(reg32) acc[75],
                d76 = inout(reg32) acc[76],
                d77 = inout(reg32) acc[77],
                d78 = inout(reg32) acc[78],
                d79 = inout(reg32) acc[79],
                d80 = inout(reg32) acc[80],
                d81 = inout(reg32) acc[81],
                d82 = inout(reg32) acc[82],
                d83 = inout(reg32) acc[83],
                d84 = inout(reg32) acc[84],
                d85 = inout(reg32) acc[85],
                d86 = inout(reg32) acc[86],
                d87 = inout(reg32) acc[87],
                d88 = inout(reg32) acc[88],
                d89 = inout(reg32) acc[89],
                d90 = inout(reg32) acc[90],
                d91 = inout(reg32) acc[91],
                d92 = inout(reg32) acc[92],
                d93 = inout(reg32) acc[93],
                d94 = inout(reg32) acc[94],
                d95 = inout(reg32) acc[95],
                d96 = inout(reg32) acc[96],
                d97 = inout(reg32) acc[97],
                d98 = inout(reg32) acc[98],
                d99 = inout(reg32) acc[99],
                d100 = inout(reg32) acc[100],
                d101 = inout(reg32) acc[101],
                d102 = inout(reg32) acc[102],
                d103 = inout(reg32) acc[103],
                d104 = inout(reg32) acc[104],
                d105 = inout(reg32) acc[105],
                d106 = inout(reg32) acc[106],
                d107 = inout(reg32) acc[107],
                d108 = inout(reg32) acc[108],
                d109 = inout(reg32) acc[109],
                d110 = inout(reg32) acc[110],
                d111 = inout(reg32) acc[111],
                d112 = inout(reg32) acc[112],
                d113 = inout(reg32) acc[113],
                d114 = inout(reg32) acc[114],
                d115 = inout(reg32) acc[115],
                d116 = inout(reg32) acc[116],
                d117 = inout(reg32) acc[117],
                d118 = inout(reg32) acc[118],
                d119 = inout(reg32) acc[119],
                d120 = inout(reg32) acc[120],
                d121 = inout(reg32) acc[121],
                d122 = inout(reg32) acc[122],
                d123 = inout(reg32) acc[123],
                d124 = inout(reg32) acc[124],
                d125 = inout(reg32) acc[125],
                d126 = inout(reg32) acc[126],
                d127 = inout(reg32) acc[127],
                a = in(reg64) a.0,
                b = in(reg64) b.0,
                scale = in(reg32) u32::from(accumulate),
                options(nostack, preserves_flags),
            );
        }
    })
}

/// As [`mma_m64n256k16_bf16`] for f16 tiles (`...m64n256k16.f32.f16.f16`).
///
/// # Safety
/// The four warps of a warpgroup (128 consecutive threads, the first a multiple of 128) run
/// it together; `a` and `b` describe 64 × 16 and 256 × 16 (N × K) f16 tiles in shared memory,
/// written before ([`fence_async_shared`](crate::tma::fence_async_shared) after generic writes,
/// then a barrier; or a completed TMA copy), and [`fence`] ran after the accumulators were last
/// written; nothing reads or writes `acc` until [`wait::<0>`](wait) (or the wait covering this
/// group) returns.
#[inline(always)]
pub unsafe fn mma_m64n256k16_f16(
    acc: &mut [f32; 128],
    a: SharedDescriptor,
    b: SharedDescriptor,
    accumulate: bool,
) {
    on_gpu!("wgmma::mma_m64n256k16_f16", {
        // SAFETY: the caller's contract; reads shared memory, writes the accumulators.
        unsafe {
            core::arch::asm!(
                "{{",
                ".reg .pred p;",
                "setp.ne.b32 p, {scale}, 0;",
                "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {{{d0}, {d1}, {d2}, {d3}, {d4}, {d5}, {d6}, {d7}, {d8}, {d9}, {d10}, {d11}, {d12}, {d13}, {d14}, {d15}, {d16}, {d17}, {d18}, {d19}, {d20}, {d21}, {d22}, {d23}, {d24}, {d25}, {d26}, {d27}, {d28}, {d29}, {d30}, {d31}, {d32}, {d33}, {d34}, {d35}, {d36}, {d37}, {d38}, {d39}, {d40}, {d41}, {d42}, {d43}, {d44}, {d45}, {d46}, {d47}, {d48}, {d49}, {d50}, {d51}, {d52}, {d53}, {d54}, {d55}, {d56}, {d57}, {d58}, {d59}, {d60}, {d61}, {d62}, {d63}, {d64}, {d65}, {d66}, {d67}, {d68}, {d69}, {d70}, {d71}, {d72}, {d73}, {d74}, {d75}, {d76}, {d77}, {d78}, {d79}, {d80}, {d81}, {d82}, {d83}, {d84}, {d85}, {d86}, {d87}, {d88}, {d89}, {d90}, {d91}, {d92}, {d93}, {d94}, {d95}, {d96}, {d97}, {d98}, {d99}, {d100}, {d101}, {d102}, {d103}, {d104}, {d105}, {d106}, {d107}, {d108}, {d109}, {d110}, {d111}, {d112}, {d113}, {d114}, {d115}, {d116}, {d117}, {d118}, {d119}, {d120}, {d121}, {d122}, {d123}, {d124}, {d125}, {d126}, {d127}}}, {a}, {b}, p, 1, 1, 0, 0;",
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
                d32 = inout(reg32) acc[32],
                d33 = inout(reg32) acc[33],
                d34 = inout(reg32) acc[34],
                d35 = inout(reg32) acc[35],
                d36 = inout(reg32) acc[36],
                d37 = inout(reg32) acc[37],
                d38 = inout(reg32) acc[38],
                d39 = inout(reg32) acc[39],
                d40 = inout(reg32) acc[40],
                d41 = inout(reg32) acc[41],
                d42 = inout(reg32) acc[42],
                d43 = inout(reg32) acc[43],
                d44 = inout(reg32) acc[44],
                d45 = inout(reg32) acc[45],
                d46 = inout(reg32) acc[46],
                d47 = inout(reg32) acc[47],
                d48 = inout(reg32) acc[48],
                d49 = inout(reg32) acc[49],
                d50 = inout(reg32) acc[50],
                d51 = inout(reg32) acc[51],
                d52 = inout(reg32) acc[52],
                d53 = inout(reg32) acc[53],
                d54 = inout(reg32) acc[54],
                d55 = inout(reg32) acc[55],
                d56 = inout(reg32) acc[56],
                d57 = inout(reg32) acc[57],
                d58 = inout(reg32) acc[58],
                d59 = inout(reg32) acc[59],
                d60 = inout(reg32) acc[60],
                d61 = inout(reg32) acc[61],
                d62 = inout(reg32) acc[62],
                d63 = inout(reg32) acc[63],
                d64 = inout(reg32) acc[64],
                d65 = inout(reg32) acc[65],
                d66 = inout(reg32) acc[66],
                d67 = inout(reg32) acc[67],
                d68 = inout(reg32) acc[68],
                d69 = inout(reg32) acc[69],
                d70 = inout(reg32) acc[70],
                d71 = inout(reg32) acc[71],
                d72 = inout(reg32) acc[72],
                d73 = inout(reg32) acc[73],
                d74 = inout(reg32) acc[74],
                d75 = inout(reg32) acc[75],
                d76 = inout(reg32) acc[76],
                d77 = inout(reg32) acc[77],
                d78 = inout(reg32) acc[78],
                d79 = inout(reg32) acc[79],
                d80 = inout(reg32) acc[80],
                d81 = inout(reg32) acc[81],
                d82 = inout(reg32) acc[82],
                d83 = inout(reg32) acc[83],
                d84 = inout(reg32) acc[84],
                d85 = inout(reg32) acc[85],
                d86 = inout(reg32) acc[86],
                d87 = inout(reg32) acc[87],
                d88 = inout(reg32) acc[88],
                d89 = inout(reg32) acc[89],
                d90 = inout(reg32) acc[90],
                d91 = inout(reg32) acc[91],
                d92 = inout(reg32) acc[92],
                d93 = inout(reg32) acc[93],
                d94 = inout(reg32) acc[94],
                d95 = inout(reg32) acc[95],
                d96 = inout(reg32) acc[96],
                d97 = inout(reg32) acc[97],
                d98 = inout(reg32) acc[98],
                d99 = inout(reg32) acc[99],
                d100 = inout(reg32) acc[100],
                d101 = inout(reg32) acc[101],
                d102 = inout(reg32) acc[102],
                d103 = inout(reg32) acc[103],
                d104 = inout(reg32) acc[104],
                d105 = inout(reg32) acc[105],
                d106 = inout(reg32) acc[106],
                d107 = inout(reg32) acc[107],
                d108 = inout(reg32) acc[108],
                d109 = inout(reg32) acc[109],
                d110 = inout(reg32) acc[110],
                d111 = inout(reg32) acc[111],
                d112 = inout(reg32) acc[112],
                d113 = inout(reg32) acc[113],
                d114 = inout(reg32) acc[114],
                d115 = inout(reg32) acc[115],
                d116 = inout(reg32) acc[116],
                d117 = inout(reg32) acc[117],
                d118 = inout(reg32) acc[118],
                d119 = inout(reg32) acc[119],
                d120 = inout(reg32) acc[120],
                d121 = inout(reg32) acc[121],
                d122 = inout(reg32) acc[122],
                d123 = inout(reg32) acc[123],
                d124 = inout(reg32) acc[124],
                d125 = inout(reg32) acc[125],
                d126 = inout(reg32) acc[126],
                d127 = inout(reg32) acc[127],
                a = in(reg64) a.0,
                b = in(reg64) b.0,
                scale = in(reg32) u32::from(accumulate),
                options(nostack, preserves_flags),
            );
        }
    })
}

/// `acc` (+)= A·Bᵀ with A's 64 × 16 bf16 tile in registers (each warp's 16 rows as the
/// `mma.sync` m16n8k16 A fragment: `a[0]` (g, 2t..2t+1), `a[1]` (g+8, ..), `a[2]` (g, 2t+8..),
/// `a[3]` (g+8, 2t+8..), rows offset by 16 per warp of the warpgroup; [`mma::load_matrix_x4`](crate::mma::load_matrix_x4)
/// loads it) and B's 64 × 16 (N × K) tile in shared memory
/// (`wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16` with a register A).
///
/// # Safety
/// As [`mma_m64n64k16_bf16`]; `a` is not written until the wait covering this group returns.
#[inline(always)]
pub unsafe fn mma_m64n64k16_bf16_rs(acc: &mut [f32; 32], a: [u32; 4], b: SharedDescriptor, accumulate: bool) {
    on_gpu!("wgmma::mma_m64n64k16_bf16_rs", {
        // SAFETY: the caller's contract; reads shared memory and `a`, writes the accumulators.
        unsafe {
            core::arch::asm!(
                "{{",
                ".reg .pred p;",
                "setp.ne.b32 p, {scale}, 0;",
                "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{{d0}, {d1}, {d2}, {d3}, {d4}, {d5}, {d6}, {d7}, {d8}, {d9}, {d10}, {d11}, {d12}, {d13}, {d14}, {d15}, {d16}, {d17}, {d18}, {d19}, {d20}, {d21}, {d22}, {d23}, {d24}, {d25}, {d26}, {d27}, {d28}, {d29}, {d30}, {d31}}}, {{{a0}, {a1}, {a2}, {a3}}}, {b}, p, 1, 1, 0;",
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
                a0 = in(reg32) a[0],
                a1 = in(reg32) a[1],
                a2 = in(reg32) a[2],
                a3 = in(reg32) a[3],
                b = in(reg64) b.0,
                scale = in(reg32) u32::from(accumulate),
                options(nostack, preserves_flags),
            );
        }
    })
}

/// `acc` (+)= A·Bᵀ with A's 64 × 16 f16 tile in registers (each warp's 16 rows as the
/// `mma.sync` m16n8k16 A fragment: `a[0]` (g, 2t..2t+1), `a[1]` (g+8, ..), `a[2]` (g, 2t+8..),
/// `a[3]` (g+8, 2t+8..), rows offset by 16 per warp of the warpgroup; [`mma::load_matrix_x4`](crate::mma::load_matrix_x4)
/// loads it) and B's 64 × 16 (N × K) tile in shared memory
/// (`wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16` with a register A).
///
/// # Safety
/// As [`mma_m64n64k16_f16`]; `a` is not written until the wait covering this group returns.
#[inline(always)]
pub unsafe fn mma_m64n64k16_f16_rs(acc: &mut [f32; 32], a: [u32; 4], b: SharedDescriptor, accumulate: bool) {
    on_gpu!("wgmma::mma_m64n64k16_f16_rs", {
        // SAFETY: the caller's contract; reads shared memory and `a`, writes the accumulators.
        unsafe {
            core::arch::asm!(
                "{{",
                ".reg .pred p;",
                "setp.ne.b32 p, {scale}, 0;",
                "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{{d0}, {d1}, {d2}, {d3}, {d4}, {d5}, {d6}, {d7}, {d8}, {d9}, {d10}, {d11}, {d12}, {d13}, {d14}, {d15}, {d16}, {d17}, {d18}, {d19}, {d20}, {d21}, {d22}, {d23}, {d24}, {d25}, {d26}, {d27}, {d28}, {d29}, {d30}, {d31}}}, {{{a0}, {a1}, {a2}, {a3}}}, {b}, p, 1, 1, 0;",
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
                a0 = in(reg32) a[0],
                a1 = in(reg32) a[1],
                a2 = in(reg32) a[2],
                a3 = in(reg32) a[3],
                b = in(reg64) b.0,
                scale = in(reg32) u32::from(accumulate),
                options(nostack, preserves_flags),
            );
        }
    })
}

/// `acc` (+)= A·Bᵀ with A's 64 × 16 bf16 tile in registers (each warp's 16 rows as the
/// `mma.sync` m16n8k16 A fragment: `a[0]` (g, 2t..2t+1), `a[1]` (g+8, ..), `a[2]` (g, 2t+8..),
/// `a[3]` (g+8, 2t+8..), rows offset by 16 per warp of the warpgroup; [`mma::load_matrix_x4`](crate::mma::load_matrix_x4)
/// loads it) and B's 128 × 16 (N × K) tile in shared memory
/// (`wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16` with a register A).
///
/// # Safety
/// As [`mma_m64n128k16_bf16`]; `a` is not written until the wait covering this group returns.
#[inline(always)]
pub unsafe fn mma_m64n128k16_bf16_rs(
    acc: &mut [f32; 64],
    a: [u32; 4],
    b: SharedDescriptor,
    accumulate: bool,
) {
    on_gpu!("wgmma::mma_m64n128k16_bf16_rs", {
        // SAFETY: the caller's contract; reads shared memory and `a`, writes the accumulators.
        unsafe {
            core::arch::asm!(
                "{{",
                ".reg .pred p;",
                "setp.ne.b32 p, {scale}, 0;",
                "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{{d0}, {d1}, {d2}, {d3}, {d4}, {d5}, {d6}, {d7}, {d8}, {d9}, {d10}, {d11}, {d12}, {d13}, {d14}, {d15}, {d16}, {d17}, {d18}, {d19}, {d20}, {d21}, {d22}, {d23}, {d24}, {d25}, {d26}, {d27}, {d28}, {d29}, {d30}, {d31}, {d32}, {d33}, {d34}, {d35}, {d36}, {d37}, {d38}, {d39}, {d40}, {d41}, {d42}, {d43}, {d44}, {d45}, {d46}, {d47}, {d48}, {d49}, {d50}, {d51}, {d52}, {d53}, {d54}, {d55}, {d56}, {d57}, {d58}, {d59}, {d60}, {d61}, {d62}, {d63}}}, {{{a0}, {a1}, {a2}, {a3}}}, {b}, p, 1, 1, 0;",
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
                d32 = inout(reg32) acc[32],
                d33 = inout(reg32) acc[33],
                d34 = inout(reg32) acc[34],
                d35 = inout(reg32) acc[35],
                d36 = inout(reg32) acc[36],
                d37 = inout(reg32) acc[37],
                d38 = inout(reg32) acc[38],
                d39 = inout(reg32) acc[39],
                d40 = inout(reg32) acc[40],
                d41 = inout(reg32) acc[41],
                d42 = inout(reg32) acc[42],
                d43 = inout(reg32) acc[43],
                d44 = inout(reg32) acc[44],
                d45 = inout(reg32) acc[45],
                d46 = inout(reg32) acc[46],
                d47 = inout(reg32) acc[47],
                d48 = inout(reg32) acc[48],
                d49 = inout(reg32) acc[49],
                d50 = inout(reg32) acc[50],
                d51 = inout(reg32) acc[51],
                d52 = inout(reg32) acc[52],
                d53 = inout(reg32) acc[53],
                d54 = inout(reg32) acc[54],
                d55 = inout(reg32) acc[55],
                d56 = inout(reg32) acc[56],
                d57 = inout(reg32) acc[57],
                d58 = inout(reg32) acc[58],
                d59 = inout(reg32) acc[59],
                d60 = inout(reg32) acc[60],
                d61 = inout(reg32) acc[61],
                d62 = inout(reg32) acc[62],
                d63 = inout(reg32) acc[63],
                a0 = in(reg32) a[0],
                a1 = in(reg32) a[1],
                a2 = in(reg32) a[2],
                a3 = in(reg32) a[3],
                b = in(reg64) b.0,
                scale = in(reg32) u32::from(accumulate),
                options(nostack, preserves_flags),
            );
        }
    })
}

/// `acc` (+)= A·Bᵀ with A's 64 × 16 f16 tile in registers (each warp's 16 rows as the
/// `mma.sync` m16n8k16 A fragment: `a[0]` (g, 2t..2t+1), `a[1]` (g+8, ..), `a[2]` (g, 2t+8..),
/// `a[3]` (g+8, 2t+8..), rows offset by 16 per warp of the warpgroup; [`mma::load_matrix_x4`](crate::mma::load_matrix_x4)
/// loads it) and B's 128 × 16 (N × K) tile in shared memory
/// (`wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16` with a register A).
///
/// # Safety
/// As [`mma_m64n128k16_f16`]; `a` is not written until the wait covering this group returns.
#[inline(always)]
pub unsafe fn mma_m64n128k16_f16_rs(acc: &mut [f32; 64], a: [u32; 4], b: SharedDescriptor, accumulate: bool) {
    on_gpu!("wgmma::mma_m64n128k16_f16_rs", {
        // SAFETY: the caller's contract; reads shared memory and `a`, writes the accumulators.
        unsafe {
            core::arch::asm!(
                "{{",
                ".reg .pred p;",
                "setp.ne.b32 p, {scale}, 0;",
                "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {{{d0}, {d1}, {d2}, {d3}, {d4}, {d5}, {d6}, {d7}, {d8}, {d9}, {d10}, {d11}, {d12}, {d13}, {d14}, {d15}, {d16}, {d17}, {d18}, {d19}, {d20}, {d21}, {d22}, {d23}, {d24}, {d25}, {d26}, {d27}, {d28}, {d29}, {d30}, {d31}, {d32}, {d33}, {d34}, {d35}, {d36}, {d37}, {d38}, {d39}, {d40}, {d41}, {d42}, {d43}, {d44}, {d45}, {d46}, {d47}, {d48}, {d49}, {d50}, {d51}, {d52}, {d53}, {d54}, {d55}, {d56}, {d57}, {d58}, {d59}, {d60}, {d61}, {d62}, {d63}}}, {{{a0}, {a1}, {a2}, {a3}}}, {b}, p, 1, 1, 0;",
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
                d32 = inout(reg32) acc[32],
                d33 = inout(reg32) acc[33],
                d34 = inout(reg32) acc[34],
                d35 = inout(reg32) acc[35],
                d36 = inout(reg32) acc[36],
                d37 = inout(reg32) acc[37],
                d38 = inout(reg32) acc[38],
                d39 = inout(reg32) acc[39],
                d40 = inout(reg32) acc[40],
                d41 = inout(reg32) acc[41],
                d42 = inout(reg32) acc[42],
                d43 = inout(reg32) acc[43],
                d44 = inout(reg32) acc[44],
                d45 = inout(reg32) acc[45],
                d46 = inout(reg32) acc[46],
                d47 = inout(reg32) acc[47],
                d48 = inout(reg32) acc[48],
                d49 = inout(reg32) acc[49],
                d50 = inout(reg32) acc[50],
                d51 = inout(reg32) acc[51],
                d52 = inout(reg32) acc[52],
                d53 = inout(reg32) acc[53],
                d54 = inout(reg32) acc[54],
                d55 = inout(reg32) acc[55],
                d56 = inout(reg32) acc[56],
                d57 = inout(reg32) acc[57],
                d58 = inout(reg32) acc[58],
                d59 = inout(reg32) acc[59],
                d60 = inout(reg32) acc[60],
                d61 = inout(reg32) acc[61],
                d62 = inout(reg32) acc[62],
                d63 = inout(reg32) acc[63],
                a0 = in(reg32) a[0],
                a1 = in(reg32) a[1],
                a2 = in(reg32) a[2],
                a3 = in(reg32) a[3],
                b = in(reg64) b.0,
                scale = in(reg32) u32::from(accumulate),
                options(nostack, preserves_flags),
            );
        }
    })
}

/// Raises this warpgroup's registers per thread to `N` (`setmaxnreg.inc.sync.aligned.u32 N`,
/// sm_90a; N a multiple of 8 from 24 to 256): a consumer warpgroup of a warp-specialised
/// kernel takes the registers a producer gave up with [`shrink_registers`].
///
/// # Safety
/// Every thread of the warpgroup runs it together; the block's warpgroups together stay within
/// the registers the launch has (the producer shrank first).
#[inline(always)]
pub unsafe fn grow_registers<const N: u32>() {
    on_gpu!("wgmma::grow_registers", {
        // SAFETY: the caller's contract.
        unsafe {
            core::arch::asm!("setmaxnreg.inc.sync.aligned.u32 {n};", n = const N, options(nostack, preserves_flags))
        }
    })
}

/// Lowers this warpgroup's registers per thread to `N` (`setmaxnreg.dec.sync.aligned.u32 N`,
/// sm_90a): a producer warpgroup that only starts copies gives its registers to the consumers.
///
/// # Safety
/// As [`grow_registers`]; the code after it needs no more than `N` registers.
#[inline(always)]
pub unsafe fn shrink_registers<const N: u32>() {
    on_gpu!("wgmma::shrink_registers", {
        // SAFETY: the caller's contract.
        unsafe {
            core::arch::asm!("setmaxnreg.dec.sync.aligned.u32 {n};", n = const N, options(nostack, preserves_flags))
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
        let swizzled = SharedDescriptor::k_major_swizzle_128(0x4000, 1024);
        assert_eq!((swizzled.0 & 0x3fff, (swizzled.0 >> 16) & 0x3fff), (0x400, 1));
        assert_eq!(((swizzled.0 >> 32) & 0x3fff, swizzled.0 >> 62), (64, 1));
        assert_eq!(swizzled.offset(32).0 & 0x3fff, 0x402, "a K step of 16 halves is 32 bytes");
    }
}
