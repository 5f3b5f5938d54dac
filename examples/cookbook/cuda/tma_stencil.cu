// Twin of cookbook_kernels::tma_stencil_7pt (kernels/src/tma_stencil.rs; sm_90 only): one
// Jacobi step of Laplace's equation on an nx x ny x nz grid (x innermost), zero outside the
// grid: out = (1/6) * (((west + east) + (south + north)) + (below + above)) for every cell.
// Blocks of 32 x 8 threads, one per 32 x 8 x 8 tile of the output (grid ceil(nx/32) x
// ceil(ny/8) x ceil(nz/8)). Thread (0, 0) loads the tile and its one-cell halo, a box of
// 40 x 10 x 10 (a halo of 4 columns: TMA wants the innermost start at 16 bytes) starting at (x0 - 4, y0 - 1, z0 - 1),
// with one cp.async.bulk.tensor.3d completing on an mbarrier (TMA fills the cells outside the
// grid with zeros: the boundary rule); then each thread computes its (x, y) column's 8 cells
// from shared memory and stores them with plain stores.
//
// The map travels as the Rust kernel's does (tma.cu says why): a pointer to the 128-byte
// CUtensorMap in global memory, dims (nx, ny, nz), box 40 x 10 x 10; fence.proxy.tensormap
// acquire before its first use. The mbarrier and TMA instructions are the Rust kernel's PTX,
// written inline as in tma.cu. The multiply comes last, so nvcc has no product to fuse into an
// FMA: the result is the Rust kernel's (and the CPU's) bit for bit.
//
// Build: nvcc -O3 -arch=sm_90 -cubin (PTX ISA 8.3 for fence.proxy.tensormap: CUDA 12.3 or later).
#include <cuda.h>

#define TILE_X 32
#define TILE_Y 8
#define TILE_Z 8
#define BOX_X 40
#define HALO_X 4
#define BOX_Y (TILE_Y + 2)
#define BOX_Z (TILE_Z + 2)
#define BOX (BOX_X * BOX_Y * BOX_Z)

__device__ __forceinline__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

extern "C" __global__ void __launch_bounds__(TILE_X * TILE_Y)
    tma_stencil_7pt(const CUtensorMap* input, float* output, unsigned nx, unsigned ny, unsigned nz) {
  __shared__ __align__(128) float tile[BOX];
  __shared__ __align__(8) unsigned long long full;
  unsigned tx = threadIdx.x, ty = threadIdx.y;
  unsigned x0 = blockIdx.x * TILE_X, y0 = blockIdx.y * TILE_Y, z0 = blockIdx.z * TILE_Z;
  unsigned barrier = shared_address(&full);
  bool leader = tx == 0 && ty == 0;
  if (leader) {
    asm volatile("mbarrier.init.shared.b64 [%0], %1;\n" ::"r"(barrier), "r"(1) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  if (leader) {
    asm volatile("fence.proxy.tensormap::generic.acquire.sys [%0], 128;\n" ::"l"(input) : "memory");
    [[maybe_unused]] unsigned long long state;  // the arrival token, unused as in the Rust kernel
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 %0, [%1], %2;\n"
                 : "=l"(state)
                 : "r"(barrier), "r"(BOX * 4)
                 : "memory");
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
        "[%5];\n" ::"r"(shared_address(tile)),
        "l"(input), "r"((int)x0 - HALO_X), "r"((int)y0 - 1), "r"((int)z0 - 1), "r"(barrier)
        : "memory");
  }
  // Every thread: phase 0 completes once the leader arrived and the box landed.
  unsigned done;
  do {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n"
        "}\n"
        : "=r"(done)
        : "r"(barrier), "r"(0)
        : "memory");
  } while (!done);
  unsigned x = x0 + tx, y = y0 + ty;
  if (x >= nx || y >= ny) return;
  const unsigned row = BOX_X, plane = BOX_X * BOX_Y;
  unsigned at = plane + (ty + 1) * row + tx + HALO_X;
  size_t out = ((size_t)z0 * ny + y) * nx + x;
  size_t plane_out = (size_t)ny * nx;
  for (unsigned z = z0; z < nz && z < z0 + TILE_Z; ++z) {
    float west = tile[at - 1], east = tile[at + 1];
    float south = tile[at - row], north = tile[at + row];
    float below = tile[at - plane], above = tile[at + plane];
    output[out] = (1.0f / 6.0f) * (((west + east) + (south + north)) + (below + above));
    at += plane;
    out += plane_out;
  }
}
