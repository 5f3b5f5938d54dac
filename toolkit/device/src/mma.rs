//! Tensor cores through warp-wide matrix multiply-accumulate (`mma.sync`, sm_80+) and the
//! shared-memory loads that feed them (`ldmatrix`): CUDA C's `mma.h` PTX wrappers as CUTLASS's
//! `SM80_16x8x16_F32F16F16F32_TN` and `SM75_U32x4_LDSM_N` use them, cuda-oxide's
//! `mma_m16n8k16_*`.
//!
//! One [`mma_m16n8k16_f16`] (or [`mma_m16n8k16_bf16`]) is D = A·B + C for a 16×16 A (row-major),
//! a 16×8 B (column-major: B's columns are K-contiguous) and 16×8 f32 C and D, spread over the
//! 32 lanes of a warp. With `g = lane / 4` and `t = lane % 4`, each lane holds:
//!
//! | fragment | registers | elements (row, column) |
//! | --- | --- | --- |
//! | A (`[u32; 4]`, two 16-bit values each, the lower first) | `a[0]`, `a[1]`, `a[2]`, `a[3]` | (g, 2t..2t+1), (g+8, 2t..2t+1), (g, 2t+8..2t+9), (g+8, 2t+8..2t+9) |
//! | B (`[u32; 2]`) | `b[0]`, `b[1]` | (k = 2t..2t+1, n = g), (k = 2t+8..2t+9, n = g) |
//! | C and D (`[f32; 4]`) | `c[0]`..`c[3]` | (g, 2t), (g, 2t+1), (g+8, 2t), (g+8, 2t+1) |
//!
//! [`load_matrix_x4`] fills an A fragment from shared memory in one instruction (and
//! [`load_matrix_x2`] a B fragment from an N×K row-major tile), each lane giving the address
//! of one 16-byte row: lanes 0-7 the rows of the first 8×8 matrix, 8-15 the second, 16-23 the
//! third, 24-31 the fourth (for A: rows 0-7 and 8-15 at column 0, then the same rows at
//! column 8). `cookbook::hgemm_mma` is the worked example.

use crate::SharedArray;

/// Defines an `mma.sync` m16n8k16 of 16-bit inputs `$ty` with f32 accumulation.
macro_rules! mma_m16n8k16 {
    ($(#[$doc:meta])* $name:ident, $ty:literal) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// Every lane of the warp executes it together (converged, no lane exited), each with
        /// its own part of the fragments.
        #[inline(always)]
        pub unsafe fn $name(a: [u32; 4], b: [u32; 2], c: [f32; 4]) -> [f32; 4] {
            on_gpu!("mma::mma_m16n8k16", {
                let (d0, d1, d2, d3): (f32, f32, f32, f32);
                // SAFETY: the caller's contract; registers only.
                unsafe {
                    core::arch::asm!(
                        concat!(
                            "mma.sync.aligned.m16n8k16.row.col.f32.", $ty, ".", $ty, ".f32 {{{d0}, {d1}, {d2}, {d3}}}, ",
                            "{{{a0}, {a1}, {a2}, {a3}}}, {{{b0}, {b1}}}, {{{c0}, {c1}, {c2}, {c3}}};"
                        ),
                        d0 = out(reg32) d0, d1 = out(reg32) d1, d2 = out(reg32) d2, d3 = out(reg32) d3,
                        a0 = in(reg32) a[0], a1 = in(reg32) a[1], a2 = in(reg32) a[2], a3 = in(reg32) a[3],
                        b0 = in(reg32) b[0], b1 = in(reg32) b[1],
                        c0 = in(reg32) c[0], c1 = in(reg32) c[1], c2 = in(reg32) c[2], c3 = in(reg32) c[3],
                        options(pure, nomem, nostack, preserves_flags),
                    );
                }
                [d0, d1, d2, d3]
            })
        }
    };
}

mma_m16n8k16!(
    /// D = A·B + C on the tensor cores, f16 inputs and f32 accumulation
    /// (`mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32`). Fragments as the module's table.
    mma_m16n8k16_f16,
    "f16"
);
mma_m16n8k16!(
    /// D = A·B + C on the tensor cores, bf16 inputs and f32 accumulation
    /// (`mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32`). Fragments as the module's table.
    mma_m16n8k16_bf16,
    "bf16"
);

/// The shared-space byte address of `array[index]`.
#[inline(always)]
fn element_address<T: Copy>(array: SharedArray<T>, index: u32) -> u32 {
    array.shared_address().wrapping_add(index.wrapping_mul(core::mem::size_of::<T>() as u32))
}

/// Four 8×8 matrices of 16-bit elements from shared memory, one register of each per lane
/// (`ldmatrix.sync.aligned.m8n8.x4.shared.b16`): lane `l` gives the row `l % 8` of matrix
/// `l / 8` at `src[index]` (16 contiguous bytes, 16-byte aligned; `T` is any element type,
/// `F16`, `BF16` or a 16-byte `U32x4` chunk of eight, as the tile is laid out) and receives, of each matrix
/// `m`, elements (row `l / 4`, columns `2(l % 4)`, `+1`) in `[m]`.
///
/// # Safety
/// Every lane executes it together; each lane's 16 bytes are in bounds of `src` and written
/// before (a barrier in between when other threads wrote them).
#[inline(always)]
pub unsafe fn load_matrix_x4<T: Copy>(src: SharedArray<T>, index: u32) -> [u32; 4] {
    on_gpu!("mma::load_matrix_x4", {
        let (r0, r1, r2, r3): (u32, u32, u32, u32);
        // SAFETY: the caller's contract; reads shared memory.
        unsafe {
            core::arch::asm!(
                "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{{r0}, {r1}, {r2}, {r3}}}, [{a}];",
                r0 = out(reg32) r0, r1 = out(reg32) r1, r2 = out(reg32) r2, r3 = out(reg32) r3,
                a = in(reg32) element_address(src, index),
                options(readonly, nostack, preserves_flags),
            );
        }
        [r0, r1, r2, r3]
    })
}

/// Two 8×8 matrices (`ldmatrix.sync.aligned.m8n8.x2.shared.b16`): lanes 0-15 give the rows
/// (lanes 16-31's addresses are ignored but must be valid). As [`load_matrix_x4`] otherwise.
///
/// # Safety
/// As [`load_matrix_x4`].
#[inline(always)]
pub unsafe fn load_matrix_x2<T: Copy>(src: SharedArray<T>, index: u32) -> [u32; 2] {
    on_gpu!("mma::load_matrix_x2", {
        let (r0, r1): (u32, u32);
        // SAFETY: the caller's contract; reads shared memory.
        unsafe {
            core::arch::asm!(
                "ldmatrix.sync.aligned.m8n8.x2.shared.b16 {{{r0}, {r1}}}, [{a}];",
                r0 = out(reg32) r0, r1 = out(reg32) r1,
                a = in(reg32) element_address(src, index),
                options(readonly, nostack, preserves_flags),
            );
        }
        [r0, r1]
    })
}

/// Four 8×8 matrices, each transposed on the way (`ldmatrix.sync.aligned.m8n8.x4.trans.shared
/// .b16`): a B fragment from a K×N row-major tile. Addresses as [`load_matrix_x4`].
///
/// # Safety
/// As [`load_matrix_x4`].
#[inline(always)]
pub unsafe fn load_matrix_x4_trans<T: Copy>(src: SharedArray<T>, index: u32) -> [u32; 4] {
    on_gpu!("mma::load_matrix_x4_trans", {
        let (r0, r1, r2, r3): (u32, u32, u32, u32);
        // SAFETY: the caller's contract; reads shared memory.
        unsafe {
            core::arch::asm!(
                "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {{{r0}, {r1}, {r2}, {r3}}}, [{a}];",
                r0 = out(reg32) r0, r1 = out(reg32) r1, r2 = out(reg32) r2, r3 = out(reg32) r3,
                a = in(reg32) element_address(src, index),
                options(readonly, nostack, preserves_flags),
            );
        }
        [r0, r1, r2, r3]
    })
}
