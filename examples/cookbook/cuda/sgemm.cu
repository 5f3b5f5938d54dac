// Twin of cookbook_kernels::sgemm_64x64: C (m x n) = A (m x k) * B (k x n), row-major floats;
// m and n multiples of 64, k a multiple of 16. Blocks of 256 threads compute a 64x64 tile of
// C; each thread a 4x4 register block (rows 4*(t/16).., columns 4*(t%16)..). Per step of 16
// along k, the block stages A's 64x16 panel (transposed) and B's 16x64 panel in shared memory
// with float4 loads, then 16 unrolled rank-1 updates of 16 FMAs each.
#define BM 64
#define BN 64
#define BK 16
#define GEMM_BLOCK 256

extern "C" __global__ void __launch_bounds__(GEMM_BLOCK) sgemm_64x64(const float* a, const float* b, float* c, unsigned m, unsigned n, unsigned k) {
  __shared__ __align__(16) float a_panel[BK][BM];  // transposed: a_panel[kk][row]
  __shared__ __align__(16) float b_panel[BK][BN];
  unsigned t = threadIdx.x;
  unsigned tx = t % 16, ty = t / 16;
  unsigned row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  if (row0 >= m) return;
  unsigned a_row = t / 4, a_col = (t % 4) * 4;
  unsigned b_row = t / 16, b_col = (t % 16) * 4;
  float acc[4][4] = {};
  for (unsigned k0 = 0; k0 < k; k0 += BK) {
    float4 av = *reinterpret_cast<const float4*>(&a[(size_t)(row0 + a_row) * k + k0 + a_col]);
    a_panel[a_col + 0][a_row] = av.x;
    a_panel[a_col + 1][a_row] = av.y;
    a_panel[a_col + 2][a_row] = av.z;
    a_panel[a_col + 3][a_row] = av.w;
    *reinterpret_cast<float4*>(&b_panel[b_row][b_col]) =
        *reinterpret_cast<const float4*>(&b[(size_t)(k0 + b_row) * n + col0 + b_col]);
    __syncthreads();
#pragma unroll
    for (unsigned kk = 0; kk < BK; kk++) {
      float4 ar = *reinterpret_cast<const float4*>(&a_panel[kk][ty * 4]);
      float4 br = *reinterpret_cast<const float4*>(&b_panel[kk][tx * 4]);
      float ai[4] = {ar.x, ar.y, ar.z, ar.w};
      float bj[4] = {br.x, br.y, br.z, br.w};
#pragma unroll
      for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++) acc[i][j] = fmaf(ai[i], bj[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; i++)
    *reinterpret_cast<float4*>(&c[(size_t)(row0 + ty * 4 + i) * n + col0 + tx * 4]) =
        make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
}
