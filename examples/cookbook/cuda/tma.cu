// Twins of cookbook_kernels' Hopper kernels (kernels/src/hopper.rs; sm_90 only): TMA tensor
// and bulk copies completing on an mbarrier, and a histogram over a thread-block cluster's
// distributed shared memory. The PTX is the Rust kernels' (the toolkit's wrappers emit what
// CUDA's cuda::barrier / cuda::memcpy_async / cooperative_groups headers emit), written inline.
//
// The tensor maps travel as the Rust kernel's do: a pointer to the 128-byte CUtensorMap in
// global memory (written there by the host; fence.proxy.tensormap acquire before first use),
// not a __grid_constant__ parameter.
//
// Build: nvcc -O3 -arch=sm_90 -cubin (sm_90a also works; PTX ISA 8.3 for fence.proxy.tensormap,
// so CUDA 12.3 or later).
#include <cuda.h>

#define TMA_TILE 32
#define TMA_BLOCK 256
#define BULK_CHUNK 2048
#define HISTOGRAM_CLUSTER 4
#define CLUSTER_BINS 1024

__device__ __forceinline__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

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

// Makes this thread's shared-memory writes visible to the asynchronous proxy (TMA stores).
__device__ __forceinline__ void fence_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

__device__ __forceinline__ void bulk_commit_and_wait_read() {
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
  asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
}

// output (width rows of height) = input (height rows of width) transposed, both through TMA:
// thread 0 loads a 32x32 box with cp.async.bulk.tensor.2d (zeros past the edges) completing on
// an mbarrier, the block (256 threads, 4 elements each) transposes it in shared memory, and
// thread 0 stores the transposed box with one cp.async.bulk.tensor.2d store (the parts past the
// output's edges left out). Grid ceil(width/32) x ceil(height/32). Maps: input of dims
// (width, height), output of dims (height, width), boxes 32x32.
extern "C" __global__ void __launch_bounds__(TMA_BLOCK)
    tma_transpose_f32(const CUtensorMap* input, const CUtensorMap* output) {
  __shared__ __align__(128) float tile_in[TMA_TILE * TMA_TILE];
  __shared__ __align__(128) float tile_out[TMA_TILE * TMA_TILE];
  __shared__ __align__(8) unsigned long long full;
  unsigned tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  int x0 = blockIdx.x * TMA_TILE, y0 = blockIdx.y * TMA_TILE;
  unsigned barrier = shared_address(&full);
  if (tid == 0) {
    mbarrier_init(barrier, 1);
    mbarrier_fence_init();
  }
  __syncthreads();
  if (tid == 0) {
    acquire_tensor_map(input);
    acquire_tensor_map(output);
    mbarrier_arrive_expect_tx(barrier, TMA_TILE * TMA_TILE * 4);
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], "
        "[%4];\n" ::"r"(shared_address(tile_in)),
        "l"(input), "r"(x0), "r"(y0), "r"(barrier)
        : "memory");
  }
  mbarrier_wait_parity(barrier, 0);
  for (unsigned i = tid; i < TMA_TILE * TMA_TILE; i += TMA_BLOCK) {
    unsigned x = i % TMA_TILE, y = i / TMA_TILE;
    tile_out[x * TMA_TILE + y] = tile_in[y * TMA_TILE + x];
  }
  fence_async_shared();
  __syncthreads();
  if (tid == 0) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(output),
                 "r"(y0), "r"(x0), "r"(shared_address(tile_out))
                 : "memory");
    bulk_commit_and_wait_read();
  }
}

// y = a*x through 1-D bulk copies: thread 0 loads a chunk of 2048 elements with one
// cp.async.bulk (completing on an mbarrier), the block (256 threads) scales it in shared
// memory, and thread 0 stores it with one bulk store; the last chunk's elements past a multiple
// of 4 (16 bytes) go by plain loads and stores. One block per chunk.
extern "C" __global__ void __launch_bounds__(TMA_BLOCK) bulk_scale_f32(const float* x, float* y, unsigned n, float a) {
  __shared__ __align__(128) float chunk_buffer[BULK_CHUNK];
  __shared__ __align__(8) unsigned long long full;
  unsigned tid = threadIdx.x;
  unsigned base = blockIdx.x * BULK_CHUNK;
  unsigned chunk = min(n - base, (unsigned)BULK_CHUNK);
  unsigned bulk = chunk & ~3u;
  unsigned barrier = shared_address(&full);
  if (tid == 0) {
    mbarrier_init(barrier, 1);
    mbarrier_fence_init();
  }
  __syncthreads();
  if (tid == 0) {
    if (bulk > 0) {
      mbarrier_arrive_expect_tx(barrier, bulk * 4);
      asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                       shared_address(chunk_buffer)),
                   "l"(x + base), "r"(bulk * 4), "r"(barrier)
                   : "memory");
    } else {
      mbarrier_arrive(barrier);
    }
  }
  mbarrier_wait_parity(barrier, 0);
  for (unsigned i = tid; i < bulk; i += TMA_BLOCK) chunk_buffer[i] = a * chunk_buffer[i];
  for (unsigned i = bulk + tid; i < chunk; i += TMA_BLOCK) y[base + i] = a * x[base + i];
  fence_async_shared();
  __syncthreads();
  if (tid == 0 && bulk > 0) {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(y + base),
                 "r"(shared_address(chunk_buffer)), "r"(bulk * 4)
                 : "memory");
    bulk_commit_and_wait_read();
  }
}

// Waits until every thread of every block of the cluster has arrived (cluster.sync()).
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\n" ::: "memory");
  asm volatile("barrier.cluster.wait.acquire;\n" ::: "memory");
}

// bins[v % 1024] += 1 for every v of values, the 1024 bins of each cluster of 4 blocks spread
// over the blocks' shared memory (256 each): every thread adds to the owning block's bin with
// atom.shared::cluster.add (distributed shared memory, the address from mapa), then each block
// adds its 256 bins to the global ones. Blocks of 256 threads in clusters of 4 (compiled in
// with __cluster_dims__, so a plain launch gets the Rust launch's clusters), a grid-stride loop.
extern "C" __global__ void __cluster_dims__(HISTOGRAM_CLUSTER, 1, 1) __launch_bounds__(256)
    cluster_histogram_1024(const unsigned* values, unsigned n, unsigned* bins) {
  __shared__ unsigned local[256];
  unsigned tid = threadIdx.x;
  local[tid] = 0;
  // Every block's bins are zeroed before any block adds to them.
  cluster_sync();
  unsigned local_address = shared_address(local);
  unsigned stride = gridDim.x * blockDim.x;
  for (unsigned i = blockIdx.x * blockDim.x + tid; i < n; i += stride) {
    unsigned bin = values[i] % CLUSTER_BINS;
    unsigned owner;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(owner) : "r"(local_address), "r"(bin / 256));
    [[maybe_unused]] unsigned old;  // fetch_add's old value, unused as in the Rust kernel
    asm volatile("atom.shared::cluster.add.u32 %0, [%1], %2;\n"
                 : "=r"(old)
                 : "r"(owner + (bin % 256) * 4), "r"(1u)
                 : "memory");
  }
  // Every add into this block's bins is done.
  cluster_sync();
  unsigned count = local[tid];
  if (count > 0) {
    unsigned rank;
    asm("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
    atomicAdd(&bins[rank * 256 + tid], count);
  }
}
