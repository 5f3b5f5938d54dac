// Twins of cookbook_kernels' GEMMs on Hopper's warpgroup MMA (sm_90a only: wgmma is
// architecture-specific): wgmma_gemm_bf16 (kernels/src/hopper.rs: one warpgroup per 64x64 tile,
// cp.async into the K-major core-matrix layout, single-buffered) and gemm_tma_wgmma_bf16
// (kernels/src/wgmma_gemm.rs: warp-specialised, a producer thread streaming TMA boxes in the
// 128-byte swizzle through a five-stage ring of full/empty mbarriers, two consumer warpgroups on
// wgmma m64n128k16 with one group in flight). Both compute C (m x n, f32, row-major) = A (m x k)
// * B^T (B n x k; both row-major bf16, K-contiguous: the "NT" layout), k a multiple of 8.
//
// The PTX is the Rust kernels' (the toolkit's wrappers in ptxkit_device::{wgmma, mbarrier, tma,
// async_copy} emit what CUTLASS's SM90_64xNx16_F32BF16BF16_SS, ClusterTransactionBarrier and
// SM90_TMA_LOAD_2D emit), written inline; the shared-memory descriptors are built as
// SharedDescriptor::k_major / k_major_swizzle_128 build them. The tensor maps travel as the Rust
// kernel's do (and as tma.cu's): a pointer to the 128-byte CUtensorMap in global memory, acquired
// with fence.proxy.tensormap before first use, not a __grid_constant__ parameter.
//
// Build: nvcc -O3 -arch=sm_90a -cubin (sm_90 refuses wgmma; CUDA 12.3 or later).
#include <cuda.h>
#include <cuda_bf16.h>

// wgmma_gemm_bf16: a 64x64 tile of C per block of one warpgroup, stages of 64 along K.
#define WGMMA_TILE 64
#define WGMMA_BLOCK 128
#define WGMMA_DEPTH 64
#define WGMMA_LEADING 128  // bytes between core matrices (8 rows x 16 bytes) adjacent along K
#define WGMMA_STRIDE 1024  // bytes between core matrices adjacent along M (or N)

// gemm_tma_wgmma_bf16: a 128x128 tile of C per block of three warpgroups, a ring of 5 stages.
#define GEMM_TILE 128
#define GEMM_DEPTH 64
#define GEMM_BLOCK 384
#define GEMM_STAGES 5
#define OPERAND_BYTES (GEMM_TILE * GEMM_DEPTH * 2)  // one operand's stage: 128 rows of 128 bytes
#define STAGE_BYTES (2 * OPERAND_BYTES)             // A's tile, then B's
// The dynamic shared memory the launch gives: the ring, and 1 KiB to align it to the swizzle's
// 1024-byte atoms (as GEMM_SHARED_BYTES).
#define GEMM_SHARED_BYTES (GEMM_STAGES * STAGE_BYTES + 1024)

__device__ __forceinline__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// --- shared-memory matrix descriptors (SharedDescriptor) --------------------------------------

// A byte count as a descriptor's 14-bit field in units of 16 bytes.
__device__ __forceinline__ unsigned long long descriptor_field(unsigned bytes) {
  return (bytes >> 4) & 0x3fff;
}

// A K-major tile without swizzle at shared-space byte `address`: bits 0-13 the address, 16-29 the
// leading offset (between core matrices adjacent along K), 32-45 the stride offset (adjacent
// along M or N), base offset 0, swizzle 0.
__device__ __forceinline__ unsigned long long k_major(unsigned address, unsigned leading, unsigned stride) {
  return descriptor_field(address) | (descriptor_field(leading) << 16) | (descriptor_field(stride) << 32);
}

// A K-major tile in TMA's 128-byte swizzle: the leading offset unused (1, as CUTLASS sets it),
// `stride` bytes between 8-row groups, bits 62-63 = 1.
__device__ __forceinline__ unsigned long long k_major_swizzle_128(unsigned address, unsigned stride) {
  return descriptor_field(address) | (1ull << 16) | (descriptor_field(stride) << 32) | (1ull << 62);
}

// --- wgmma: fence, products, commit, wait ---------------------------------------------------------

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }

__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }

template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// d (+)= A*B^T for 64x16 tiles of A and B (K-major, through descriptors); accumulate 0 starts
// from zero. 32 f32 accumulators a thread: warp w holds rows 16w..16w+16; with g = lane / 4,
// t = lane % 4, element 4j + h is row 16w + g + 8(h / 2), column 8j + 2t + h % 2.
__device__ __forceinline__ void wgmma_m64n64k16_bf16(float (&d)[32], unsigned long long a, unsigned long long b,
                                                     unsigned accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
      "}, %32, %33, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(a), "l"(b), "r"(accumulate)
      : "memory");
}

// As wgmma_m64n64k16_bf16 for a 128x16 tile of B: 64 accumulators a thread (16 column groups).
__device__ __forceinline__ void wgmma_m64n128k16_bf16(float (&d)[64], unsigned long long a, unsigned long long b,
                                                      unsigned accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
      "}, %64, %65, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(a), "l"(b), "r"(accumulate)
      : "memory");
}

// --- mbarrier and TMA (as tma.cu) ----------------------------------------------------------------

__device__ __forceinline__ void mbarrier_init(unsigned barrier, unsigned arrivals) {
  asm volatile("mbarrier.init.shared.b64 [%0], %1;\n" ::"r"(barrier), "r"(arrivals) : "memory");
}

// Makes the initialisation visible to the asynchronous proxy and the cluster.
__device__ __forceinline__ void mbarrier_fence_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

__device__ __forceinline__ unsigned long long mbarrier_arrive(unsigned barrier) {
  unsigned long long state;
  asm volatile("mbarrier.arrive.shared.b64 %0, [%1];\n" : "=l"(state) : "r"(barrier) : "memory");
  return state;
}

__device__ __forceinline__ unsigned long long mbarrier_arrive_expect_tx(unsigned barrier, unsigned bytes) {
  unsigned long long state;
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 %0, [%1], %2;\n"
               : "=l"(state)
               : "r"(barrier), "r"(bytes)
               : "memory");
  return state;
}

// Waits until the phase of parity `parity` completes: a loop on try_wait.parity.
__device__ __forceinline__ void mbarrier_wait_parity(unsigned barrier, unsigned parity) {
  unsigned done;
  do {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n"
        "}\n"
        : "=r"(done)
        : "r"(barrier), "r"(parity)
        : "memory");
  } while (!done);
}

__device__ __forceinline__ void acquire_tensor_map(const CUtensorMap* map) {
  asm volatile("fence.proxy.tensormap::generic.acquire.sys [%0], 128;\n" ::"l"(map) : "memory");
}

// Makes this thread's generic-proxy shared-memory writes visible to the asynchronous proxy.
__device__ __forceinline__ void fence_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// Starts copying the box of `map` at (c0, c1) (innermost first) to shared byte `dst`,
// completing on `barrier`.
__device__ __forceinline__ void tma_load_2d(unsigned dst, const CUtensorMap* map, int c0, int c1, unsigned barrier) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], "
      "[%4];\n" ::"r"(dst),
      "l"(map), "r"(c0), "r"(c1), "r"(barrier)
      : "memory");
}

// --- wgmma_gemm_bf16 ---------------------------------------------------------------------------

// Starts copying stage k0 of a rows x k operand (rows row0..row0+64, columns k0..k0+64) into
// `tile` in wgmma's K-major core-matrix layout (element (r, k) at byte (r / 8)*1024 +
// (k / 8)*128 + (r % 8)*16 + (k % 8)*2): 512 chunks of 16 bytes, four per thread; outside the
// operand nothing is read (0 valid bytes: the chunk is zeroed) and the operand's first chunk
// stands in as address.
__device__ __forceinline__ void load_wgmma_stage(uint4* tile, const uint4* operand, unsigned rows, unsigned k,
                                                 unsigned row0, unsigned k0) {
#pragma unroll
  for (unsigned i = 0; i < 4; i++) {
    unsigned chunk = threadIdx.x + i * WGMMA_BLOCK;
    unsigned row = chunk / 8, column = chunk % 8;
    unsigned global_row = row0 + row, global_k = k0 + column * 8;
    bool inside = global_row < rows && global_k < k;
    size_t offset = inside ? ((size_t)global_row * k + global_k) / 8 : 0;
    unsigned slot = (row / 8) * (WGMMA_STRIDE / 16) + column * (WGMMA_LEADING / 16) + row % 8;
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(&tile[slot])),
                 "l"(operand + offset), "r"(inside ? 16u : 0u)
                 : "memory");
  }
}

// One warpgroup (128 threads) per 64x64 tile of C (grid ceil(n/64) x ceil(m/64)); per stage of 64
// along K the threads copy A's and B's 64x64 tiles into shared memory in the core-matrix layout
// (cp.async, zero-filled past the edges), fence.proxy.async so the async proxy sees them, then
// four wgmma m64n64k16 read them through descriptors into 32 f32 accumulators a thread.
// Single-buffered.
extern "C" __global__ void __launch_bounds__(WGMMA_BLOCK)
    wgmma_gemm_bf16(const __nv_bfloat16* a_half, const __nv_bfloat16* b_half, float* c, unsigned m, unsigned n,
                    unsigned k) {
  __shared__ __align__(128) uint4 a_tile[512];
  __shared__ __align__(128) uint4 b_tile[512];
  unsigned row0 = blockIdx.y * WGMMA_TILE, col0 = blockIdx.x * WGMMA_TILE;
  const uint4* a = reinterpret_cast<const uint4*>(a_half);
  const uint4* b = reinterpret_cast<const uint4*>(b_half);
  float acc[32];
#pragma unroll
  for (int e = 0; e < 32; e++) acc[e] = 0.0f;
  for (unsigned k0 = 0; k0 < k; k0 += WGMMA_DEPTH) {
    // The tiles were last read by the products waited for before the previous barrier.
    load_wgmma_stage(a_tile, a, m, k, row0, k0);
    load_wgmma_stage(b_tile, b, n, k, col0, k0);
    asm volatile("cp.async.commit_group;\n" ::: "memory");
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
    // The copies wrote through the generic proxy; the products read through the async one.
    fence_async_shared();
    __syncthreads();
    wgmma_fence();
#pragma unroll
    for (unsigned kk = 0; kk < WGMMA_DEPTH / 16; kk++) {
      // Each k16 step starts two core matrices (256 bytes) further along K.
      unsigned step = kk * 2 * WGMMA_LEADING;
      unsigned long long da = k_major(shared_address(a_tile) + step, WGMMA_LEADING, WGMMA_STRIDE);
      unsigned long long db = k_major(shared_address(b_tile) + step, WGMMA_LEADING, WGMMA_STRIDE);
      wgmma_m64n64k16_bf16(acc, da, db, k0 > 0 || kk > 0);
    }
    wgmma_commit();
    wgmma_wait<0>();
    __syncthreads();
  }
  unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  unsigned g = lane / 4, t = lane % 4;
#pragma unroll
  for (unsigned e = 0; e < 32; e++) {
    unsigned j = e / 4, h = e % 4;
    unsigned row = row0 + warp * 16 + g + (h / 2) * 8;
    unsigned col = col0 + j * 8 + 2 * t + h % 2;
    if (row < m && col < n) c[(size_t)row * n + col] = acc[e];
  }
}

// --- gemm_tma_wgmma_bf16 -------------------------------------------------------------------------

// One block of 384 threads per 128x128 tile of C (grid ceil(n/128) x ceil(m/128)), GEMM_SHARED_BYTES
// of dynamic shared memory. Maps of A and B: dims (k, rows), 64x128 boxes (64 along K, 128 rows),
// 128-byte swizzle. Warpgroup 0's first thread is the producer: for each stage of 64 along K it
// waits until the ring's slot is free (empty barrier), then starts two TMA loads that complete on
// the slot's full barrier. Warpgroups 1 and 2 are the consumers, rows 0-63 and 64-127 of the
// tile: each waits for a slot's full barrier, issues four wgmma m64n128k16 on it (64 f32
// accumulators a thread), keeps one group in flight and frees the previous slot once its group
// has completed.
extern "C" __global__ void __launch_bounds__(GEMM_BLOCK)
    gemm_tma_wgmma_bf16(const CUtensorMap* a, const CUtensorMap* b, float* c, unsigned m, unsigned n, unsigned k) {
  extern __shared__ __align__(16) unsigned char ring[];
  __shared__ __align__(8) unsigned long long full[GEMM_STAGES];
  __shared__ __align__(8) unsigned long long empty[GEMM_STAGES];
  // The ring starts at the first 1024-byte boundary of the dynamic shared memory.
  unsigned base = shared_address(ring);
  unsigned start = (base + 1023) & ~1023u;
  unsigned full0 = shared_address(full), empty0 = shared_address(empty);
  unsigned tid = threadIdx.x;
  unsigned group = tid / 128;
  unsigned m0 = blockIdx.y * GEMM_TILE, n0 = blockIdx.x * GEMM_TILE;
  unsigned stages = (k + GEMM_DEPTH - 1) / GEMM_DEPTH;
  if (tid == 0) {
    for (unsigned s = 0; s < GEMM_STAGES; s++) {
      mbarrier_init(full0 + 8 * s, 1);
      mbarrier_init(empty0 + 8 * s, 2);
    }
    mbarrier_fence_init();
  }
  __syncthreads();
  if (group == 0) {
    if (tid != 0) return;
    acquire_tensor_map(a);
    acquire_tensor_map(b);
    for (unsigned kt = 0; kt < stages; kt++) {
      unsigned slot = kt % GEMM_STAGES, phase = (kt / GEMM_STAGES) % 2;
      unsigned filled = full0 + 8 * slot, freed = empty0 + 8 * slot;
      unsigned at = start + slot * STAGE_BYTES;
      // The slot is free once both consumers released its previous use (a fresh barrier passes
      // parity 1 at once); the phase expects both boxes' bytes (zeros past the edges included).
      mbarrier_wait_parity(freed, phase ^ 1);
      mbarrier_arrive_expect_tx(filled, STAGE_BYTES);
      tma_load_2d(at, a, kt * GEMM_DEPTH, m0, filled);
      tma_load_2d(at + OPERAND_BYTES, b, kt * GEMM_DEPTH, n0, filled);
    }
    return;
  }
  unsigned consumer = group - 1;
  float acc[64];
#pragma unroll
  for (int e = 0; e < 64; e++) acc[e] = 0.0f;
  for (unsigned kt = 0; kt < stages; kt++) {
    unsigned slot = kt % GEMM_STAGES, phase = (kt / GEMM_STAGES) % 2;
    mbarrier_wait_parity(full0 + 8 * slot, phase);
    unsigned a_tile = start + slot * STAGE_BYTES + consumer * 64 * 128;
    unsigned b_tile = start + slot * STAGE_BYTES + OPERAND_BYTES;
    wgmma_fence();
#pragma unroll
    for (unsigned kk = 0; kk < 4; kk++) {
      // A K step of 16 halves is 32 bytes further into the swizzled rows.
      unsigned long long da = k_major_swizzle_128(a_tile, 1024) + (kk * 32 >> 4);
      unsigned long long db = k_major_swizzle_128(b_tile, 1024) + (kk * 32 >> 4);
      wgmma_m64n128k16_bf16(acc, da, db, kt > 0 || kk > 0);
    }
    wgmma_commit();
    // One group in flight: the previous stage's products are done, its slot is free.
    wgmma_wait<1>();
    if (kt > 0 && tid % 128 == 0) mbarrier_arrive(empty0 + 8 * ((kt - 1) % GEMM_STAGES));
  }
  wgmma_wait<0>();
  unsigned lane = tid % 32, warp = (tid / 32) % 4;
  unsigned g = lane / 4, t = lane % 4;
#pragma unroll
  for (unsigned e = 0; e < 64; e++) {
    unsigned j = e / 4, h = e % 4;
    unsigned row = m0 + consumer * 64 + warp * 16 + g + (h / 2) * 8;
    unsigned col = n0 + j * 8 + 2 * t + h % 2;
    if (row < m && col < n) c[(size_t)row * n + col] = acc[e];
  }
}
