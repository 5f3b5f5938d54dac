// Twin of cookbook_kernels::hgemm_f16 and hgemm_bf16: C (m x n, f32, row-major) = A (m x k)
// * B^T (B n x k; both row-major halves, K-contiguous: the "NT" layout), k a multiple of 8,
// f32 accumulation on the tensor cores (sm_80+). Blocks of 128 threads (four warps, two by
// two, each a 32x32 quarter: 2 x 4 tiles of m16n8) compute a 64x64 tile of C. A's and B's
// 64x32 stages are copied with cp.async (16 bytes a thread a copy, two per thread per operand,
// zero-filled past the edges) one stage ahead of the tensor cores, into two stages of shared
// rows of 32 halves plus one 16-byte chunk of padding (so the eight rows an ldmatrix reads
// fall in different banks); ldmatrix x4 loads the fragments and mma.sync m16n8k16 multiplies
// them. The PTX is CUTLASS's (cp_async_zfill, SM75_U32x4_LDSM_N, SM80_16x8x16_F32*), as the
// Rust kernel's toolkit wrappers emit it.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#define HGEMM_TILE 64
#define HGEMM_BLOCK 128
#define DEPTH 32                          // K depth of a stage
#define ROW_CHUNKS (DEPTH / 8 + 1)        // 16-byte chunks of a shared row: 4 + 1 of padding
#define STAGE_CHUNKS (HGEMM_TILE * ROW_CHUNKS)

__device__ __forceinline__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// Starts copying stage k0 of a rows x k operand (rows row0..row0+64, columns k0..k0+32) into
// tile's stage `stage`: 256 chunks of 16 bytes, two per thread; outside the operand nothing is
// read (0 valid bytes: the chunk is zeroed) and the operand's first chunk stands in as address.
__device__ __forceinline__ void load_stage(uint4* tile, unsigned stage, const uint4* operand, unsigned rows,
                                           unsigned k, unsigned row0, unsigned k0) {
#pragma unroll
  for (unsigned i = 0; i < 2; i++) {
    unsigned chunk = threadIdx.x + i * HGEMM_BLOCK;
    unsigned row = chunk / 4, column = chunk % 4;
    unsigned global_row = row0 + row, global_k = k0 + column * 8;
    bool inside = global_row < rows && global_k < k;
    size_t offset = inside ? ((size_t)global_row * k + global_k) / 8 : 0;
    unsigned dst = shared_address(&tile[stage * STAGE_CHUNKS + row * ROW_CHUNKS + column]);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(operand + offset),
                 "r"(inside ? 16u : 0u));
  }
}

__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const uint4* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(p)));
}

template <bool BF16_INPUT>
__device__ __forceinline__ void mma_m16n8k16(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  if (BF16_INPUT) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
}

template <bool BF16_INPUT>
__device__ __forceinline__ void hgemm(const uint4* a, const uint4* b, float* c, unsigned m, unsigned n,
                                      unsigned k) {
  __shared__ uint4 a_tile[2 * STAGE_CHUNKS];
  __shared__ uint4 b_tile[2 * STAGE_CHUNKS];
  unsigned row0 = blockIdx.y * HGEMM_TILE, col0 = blockIdx.x * HGEMM_TILE;
  unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  unsigned warp_row = (warp / 2) * 32, warp_col = (warp % 2) * 32;
  float acc[2][4][4] = {};
  unsigned stages = (k + DEPTH - 1) / DEPTH;
  load_stage(a_tile, 0, a, m, k, row0, 0);
  load_stage(b_tile, 0, b, n, k, col0, 0);
  asm volatile("cp.async.commit_group;\n" ::);
  for (unsigned s = 0; s < stages; s++) {
    if (s + 1 < stages) {
      // The stage overwritten was last read before the previous iteration's closing barrier.
      unsigned next = (s + 1) % 2;
      load_stage(a_tile, next, a, m, k, row0, (s + 1) * DEPTH);
      load_stage(b_tile, next, b, n, k, col0, (s + 1) * DEPTH);
    }
    // One group per iteration (empty on the last), so that "all but the newest" is this stage's.
    asm volatile("cp.async.commit_group;\n" ::);
    asm volatile("cp.async.wait_group 1;\n" ::);
    __syncthreads();
    unsigned base = (s % 2) * STAGE_CHUNKS;
#pragma unroll
    for (unsigned kk = 0; kk < DEPTH / 8; kk += 2) {
      // A: lanes 0-7 rows 0-7 at chunk kk, 8-15 rows 8-15, 16-23 rows 0-7 at kk + 1, 24-31 rows
      // 8-15 at kk + 1. B (n rows, k contiguous): lanes 0-7 rows 0-7 at kk, 8-15 the same rows
      // at kk + 1, 16-31 rows 8-15 likewise: two n8 fragments.
      unsigned a_row = lane % 8 + ((lane / 8) % 2) * 8, a_chunk = kk + lane / 16;
      unsigned b_row = lane % 8 + (lane / 16) * 8, b_chunk = kk + (lane / 8) % 2;
      unsigned fa[2][4], fb[4][2];
#pragma unroll
      for (unsigned i = 0; i < 2; i++) {
        ldmatrix_x4(fa[i], &a_tile[base + (warp_row + i * 16 + a_row) * ROW_CHUNKS + a_chunk]);
        unsigned pair[4];
        ldmatrix_x4(pair, &b_tile[base + (warp_col + i * 16 + b_row) * ROW_CHUNKS + b_chunk]);
        fb[2 * i][0] = pair[0];
        fb[2 * i][1] = pair[1];
        fb[2 * i + 1][0] = pair[2];
        fb[2 * i + 1][1] = pair[3];
      }
#pragma unroll
      for (int i = 0; i < 2; i++)
#pragma unroll
        for (int j = 0; j < 4; j++) mma_m16n8k16<BF16_INPUT>(acc[i][j], fa[i], fb[j]);
    }
    __syncthreads();
  }
  unsigned g = lane / 4, t = lane % 4;
#pragma unroll
  for (unsigned i = 0; i < 2; i++)
#pragma unroll
    for (unsigned j = 0; j < 4; j++)
#pragma unroll
      for (unsigned h = 0; h < 4; h++) {
        unsigned row = row0 + warp_row + i * 16 + g + (h / 2) * 8;
        unsigned col = col0 + warp_col + j * 8 + 2 * t + h % 2;
        if (row < m && col < n) c[(size_t)row * n + col] = acc[i][j][h];
      }
}

extern "C" __global__ void __launch_bounds__(HGEMM_BLOCK)
    hgemm_f16(const __half* a, const __half* b, float* c, unsigned m, unsigned n, unsigned k) {
  hgemm<false>(reinterpret_cast<const uint4*>(a), reinterpret_cast<const uint4*>(b), c, m, n, k);
}

extern "C" __global__ void __launch_bounds__(HGEMM_BLOCK)
    hgemm_bf16(const __nv_bfloat16* a, const __nv_bfloat16* b, float* c, unsigned m, unsigned n, unsigned k) {
  hgemm<true>(reinterpret_cast<const uint4*>(a), reinterpret_cast<const uint4*>(b), c, m, n, k);
}
