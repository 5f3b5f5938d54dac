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
//! Swizzled K-major tiles are what TMA writes with a 32-, 64- or 128-byte swizzle (the host's
//! `TmaSwizzle`), a box's row of W = 32, 64 or 128 bytes (16, 32 or 64 halves) per row of the
//! tile: row r starts at byte `(r / 8)·S + (r % 8)·W`, and its 16-byte chunk c is stored as
//! chunk `c ^ ((r % 8) / (128 / W))`, each 8-row atom of 8·W bytes aligned to 8·W (the XOR
//! is on address bits 4-6 by bits 7-9). [`SharedDescriptor::k_major_swizzle_128`],
//! [`k_major_swizzle_64`](SharedDescriptor::k_major_swizzle_64) and
//! [`k_major_swizzle_32`](SharedDescriptor::k_major_swizzle_32) describe them, S = 8·W for a
//! dense tile; a K step of 16 halves is 32 bytes further along the row
//! ([`SharedDescriptor::offset`]).
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

    /// The descriptor of a K-major tile in TMA's 64-byte swizzle (`CU_TENSOR_MAP_SWIZZLE_64B`:
    /// rows of 32 halves, each group of 8 rows a 512-byte atom whose 16-byte chunks are
    /// permuted by the row) starting at shared-space byte `address` (the atom's start 512-byte
    /// aligned; a later K step of 16 halves adds 32 bytes, [`offset`](Self::offset)), `stride`
    /// bytes between 8-row groups (512 for a densely packed tile).
    pub const fn k_major_swizzle_64(address: u32, stride: u32) -> Self {
        // The leading offset unused, as in the 128-byte swizzle; bits 62-63 = 2: 64-byte
        // swizzle.
        Self(descriptor_field(address) | (1 << 16) | (descriptor_field(stride) << 32) | (2 << 62))
    }

    /// The descriptor of a K-major tile in TMA's 32-byte swizzle (`CU_TENSOR_MAP_SWIZZLE_32B`:
    /// rows of 16 halves, one K step, each group of 8 rows a 256-byte atom whose two 16-byte
    /// chunks swap in rows 4-7) starting at shared-space byte `address` (the atom's start
    /// 256-byte aligned), `stride` bytes between 8-row groups (256 for a densely packed tile).
    pub const fn k_major_swizzle_32(address: u32, stride: u32) -> Self {
        // The leading offset unused, as in the 128-byte swizzle; bits 62-63 = 3: 32-byte
        // swizzle.
        Self(descriptor_field(address) | (1 << 16) | (descriptor_field(stride) << 32) | (3 << 62))
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

/// Defines a `wgmma.mma_async` from two shared-memory descriptors: `acc`'s registers are the
/// positional operands `{0}`..`{regs - 1}`, in order.
macro_rules! wgmma_shared_a {
    ($(#[$doc:meta])* $name:ident, $n:literal, $ty:literal, $regs:literal, [$first:literal $($i:literal)*]) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// The four warps of a warpgroup (128 consecutive threads, the first a multiple of 128)
        /// run it together; `a` and `b` describe 64 × 16 and N × 16 (N × K) tiles in shared
        /// memory, written before ([`fence_async_shared`](crate::tma::fence_async_shared) after
        /// generic writes, then a barrier; or a completed TMA copy), and [`fence`] ran after the
        /// accumulators were last written; nothing reads or writes `acc` until
        /// [`wait::<0>`](wait) (or the wait covering this group) returns.
        #[inline(always)]
        pub unsafe fn $name(acc: &mut [f32; $regs], a: SharedDescriptor, b: SharedDescriptor, accumulate: bool) {
            on_gpu!("wgmma::mma_async (shared A)", {
                // SAFETY: the caller's contract; reads shared memory, writes the accumulators.
                unsafe {
                    core::arch::asm!(
                        "{{",
                        ".reg .pred p;",
                        "setp.ne.b32 p, {scale}, 0;",
                        concat!(
                            "wgmma.mma_async.sync.aligned.m64n", $n, "k16.f32.", $ty, ".", $ty,
                            " {{{", $first, "}", $(", {", $i, "}",)* "}}, {a}, {b}, p, 1, 1, 0, 0;"
                        ),
                        "}}",
                        inout(reg32) acc[$first],
                        $(inout(reg32) acc[$i],)*
                        a = in(reg64) a.0,
                        b = in(reg64) b.0,
                        scale = in(reg32) u32::from(accumulate),
                        options(nostack, preserves_flags),
                    );
                }
            })
        }
    };
}

/// Defines a `wgmma.mma_async` with A in registers (`{a0}`..`{a3}`) and B from a descriptor.
macro_rules! wgmma_register_a {
    ($(#[$doc:meta])* $name:ident, $n:literal, $ty:literal, $regs:literal, [$first:literal $($i:literal)*]) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// As the shared-A form of the same shape; `a` is not written until the wait covering
        /// this group returns.
        #[inline(always)]
        pub unsafe fn $name(acc: &mut [f32; $regs], a: [u32; 4], b: SharedDescriptor, accumulate: bool) {
            on_gpu!("wgmma::mma_async (register A)", {
                // SAFETY: the caller's contract; reads shared memory and `a`, writes the
                // accumulators.
                unsafe {
                    core::arch::asm!(
                        "{{",
                        ".reg .pred p;",
                        "setp.ne.b32 p, {scale}, 0;",
                        concat!(
                            "wgmma.mma_async.sync.aligned.m64n", $n, "k16.f32.", $ty, ".", $ty,
                            " {{{", $first, "}", $(", {", $i, "}",)* "}}, {{{a0}, {a1}, {a2}, {a3}}}, {b}, p, 1, 1, 0;"
                        ),
                        "}}",
                        inout(reg32) acc[$first],
                        $(inout(reg32) acc[$i],)*
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
    };
}

wgmma_shared_a!(
    /// `acc` (+)= A·Bᵀ for a 64 × 16 bf16 tile A and a 64 × 16 (N × K) bf16 tile B, both K-major in
    /// shared memory (`wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16`, 32 accumulators a
    /// thread); `accumulate` false starts from zero instead of `acc`.
    mma_m64n64k16_bf16, "64", "bf16", 32,
    [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31]
);
wgmma_shared_a!(
    /// `acc` (+)= A·Bᵀ for a 64 × 16 f16 tile A and a 64 × 16 (N × K) f16 tile B, both K-major in
    /// shared memory (`wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16`, 32 accumulators a
    /// thread); `accumulate` false starts from zero instead of `acc`.
    mma_m64n64k16_f16, "64", "f16", 32,
    [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31]
);
wgmma_shared_a!(
    /// `acc` (+)= A·Bᵀ for a 64 × 16 bf16 tile A and a 128 × 16 (N × K) bf16 tile B, both K-major in
    /// shared memory (`wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16`, 64 accumulators a
    /// thread); `accumulate` false starts from zero instead of `acc`.
    mma_m64n128k16_bf16, "128", "bf16", 64,
    [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63]
);
wgmma_shared_a!(
    /// `acc` (+)= A·Bᵀ for a 64 × 16 f16 tile A and a 128 × 16 (N × K) f16 tile B, both K-major in
    /// shared memory (`wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16`, 64 accumulators a
    /// thread); `accumulate` false starts from zero instead of `acc`.
    mma_m64n128k16_f16, "128", "f16", 64,
    [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63]
);
wgmma_shared_a!(
    /// `acc` (+)= A·Bᵀ for a 64 × 16 bf16 tile A and a 256 × 16 (N × K) bf16 tile B, both K-major in
    /// shared memory (`wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16`, 128 accumulators a
    /// thread); `accumulate` false starts from zero instead of `acc`.
    mma_m64n256k16_bf16, "256", "bf16", 128,
    [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87 88 89 90 91 92 93 94 95 96 97 98 99 100 101 102 103 104 105 106 107 108 109 110 111 112 113 114 115 116 117 118 119 120 121 122 123 124 125 126 127]
);
wgmma_shared_a!(
    /// `acc` (+)= A·Bᵀ for a 64 × 16 f16 tile A and a 256 × 16 (N × K) f16 tile B, both K-major in
    /// shared memory (`wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16`, 128 accumulators a
    /// thread); `accumulate` false starts from zero instead of `acc`.
    mma_m64n256k16_f16, "256", "f16", 128,
    [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87 88 89 90 91 92 93 94 95 96 97 98 99 100 101 102 103 104 105 106 107 108 109 110 111 112 113 114 115 116 117 118 119 120 121 122 123 124 125 126 127]
);
wgmma_register_a!(
    /// `acc` (+)= A·Bᵀ with A's 64 × 16 bf16 tile in registers (each warp's 16 rows as the
    /// `mma.sync` m16n8k16 A fragment: `a[0]` (g, 2t..2t+1), `a[1]` (g+8, ..), `a[2]` (g, 2t+8..),
    /// `a[3]` (g+8, 2t+8..), rows offset by 16 per warp of the warpgroup;
    /// [`mma::load_matrix_x4`](crate::mma::load_matrix_x4) loads it) and B's 64 × 16 (N × K) tile in
    /// shared memory (`wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16` with a register A).
    mma_m64n64k16_bf16_rs, "64", "bf16", 32,
    [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31]
);
wgmma_register_a!(
    /// `acc` (+)= A·Bᵀ with A's 64 × 16 f16 tile in registers (each warp's 16 rows as the
    /// `mma.sync` m16n8k16 A fragment: `a[0]` (g, 2t..2t+1), `a[1]` (g+8, ..), `a[2]` (g, 2t+8..),
    /// `a[3]` (g+8, 2t+8..), rows offset by 16 per warp of the warpgroup;
    /// [`mma::load_matrix_x4`](crate::mma::load_matrix_x4) loads it) and B's 64 × 16 (N × K) tile in
    /// shared memory (`wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16` with a register A).
    mma_m64n64k16_f16_rs, "64", "f16", 32,
    [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31]
);
wgmma_register_a!(
    /// `acc` (+)= A·Bᵀ with A's 64 × 16 bf16 tile in registers (each warp's 16 rows as the
    /// `mma.sync` m16n8k16 A fragment: `a[0]` (g, 2t..2t+1), `a[1]` (g+8, ..), `a[2]` (g, 2t+8..),
    /// `a[3]` (g+8, 2t+8..), rows offset by 16 per warp of the warpgroup;
    /// [`mma::load_matrix_x4`](crate::mma::load_matrix_x4) loads it) and B's 128 × 16 (N × K) tile in
    /// shared memory (`wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16` with a register A).
    mma_m64n128k16_bf16_rs, "128", "bf16", 64,
    [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63]
);
wgmma_register_a!(
    /// `acc` (+)= A·Bᵀ with A's 64 × 16 f16 tile in registers (each warp's 16 rows as the
    /// `mma.sync` m16n8k16 A fragment: `a[0]` (g, 2t..2t+1), `a[1]` (g+8, ..), `a[2]` (g, 2t+8..),
    /// `a[3]` (g+8, 2t+8..), rows offset by 16 per warp of the warpgroup;
    /// [`mma::load_matrix_x4`](crate::mma::load_matrix_x4) loads it) and B's 128 × 16 (N × K) tile in
    /// shared memory (`wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16` with a register A).
    mma_m64n128k16_f16_rs, "128", "f16", 64,
    [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63]
);

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

    /// The fields of a descriptor: start address, leading offset, stride offset (each in units
    /// of 16 bytes), base offset, swizzle mode; and whether the bits between them are clear.
    fn fields(d: SharedDescriptor) -> (u64, u64, u64, u64, u64, bool) {
        let gaps = (0b11 << 14) | (0b11 << 30) | (0b111 << 46) | (0x3ff << 52);
        (
            d.0 & 0x3fff,
            (d.0 >> 16) & 0x3fff,
            (d.0 >> 32) & 0x3fff,
            (d.0 >> 49) & 0b111,
            d.0 >> 62,
            d.0 & gaps == 0,
        )
    }

    #[test]
    fn swizzled_descriptors_carry_the_ptx_isa_swizzle_modes() {
        // PTX ISA's matrix descriptor (CUTLASS's GMMA::LayoutType): bits 62-63 are 0 for no
        // swizzle, 1 for 128 bytes, 2 for 64, 3 for 32; the leading offset is unused (1) in
        // the swizzled K-major layouts; the stride offset is 8 rows of the swizzle's span.
        assert_eq!(fields(SharedDescriptor::k_major(0x2000, 128, 1024)), (0x200, 8, 64, 0, 0, true));
        assert_eq!(fields(SharedDescriptor::k_major_swizzle_128(0x2000, 1024)), (0x200, 1, 64, 0, 1, true));
        assert_eq!(fields(SharedDescriptor::k_major_swizzle_64(0x2000, 512)), (0x200, 1, 32, 0, 2, true));
        assert_eq!(fields(SharedDescriptor::k_major_swizzle_32(0x2000, 256)), (0x200, 1, 16, 0, 3, true));
        // Addresses up to the 14-bit field's 256 KiB; a K step of 16 halves is 32 bytes (2 in
        // the address field), also inside a 64-byte span.
        assert_eq!(fields(SharedDescriptor::k_major_swizzle_64(0x3_fe00, 512).offset(32)).0, 0x3fe2);
        assert_eq!(fields(SharedDescriptor::k_major_swizzle_32(0x1_0100, 256)).0, 0x1010);
        // A larger stride (8-row groups spread apart) fills the stride field alone.
        let wide = SharedDescriptor::k_major_swizzle_32(0, 4096);
        assert_eq!(fields(wide), (0, 1, 256, 0, 3, true));
        assert_eq!(wide.0, (3 << 62) | (256 << 32) | (1 << 16));
        assert_eq!(SharedDescriptor::k_major_swizzle_64(0, 512).0, 0x8000_0020_0001_0000);
        assert_eq!(SharedDescriptor::k_major_swizzle_32(0, 256).0, 0xc000_0010_0001_0000);
    }
}
