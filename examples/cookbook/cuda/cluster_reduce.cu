// Twin of cookbook_kernels::cluster_reduce_f32 (kernels/src/cluster_reduce.rs; sm_90 only):
// the sum of n floats into *sum (zeroed by the host), one atomic per cluster of 8 blocks. Each
// block as reduce.cu's (256 threads, a grid-stride loop, a __shfl_xor_sync butterfly, the 8
// warp sums through shared memory, warp 0 sums them) into its partial in shared memory; after a
// cluster barrier, warp 0 of the cluster's block of rank 0 reads the partials, lane r the one of
// the block of rank r (mapa + ld.shared::cluster, cooperative_groups' map_shared_rank), sums
// them with the same butterfly and adds the cluster's sum to *sum; a second cluster barrier
// keeps every block's shared memory alive until it was read. The cluster barrier, mapa and
// the remote load are the Rust kernel's PTX, written inline as in tma.cu.
//
// __cluster_dims__(8, 1, 1): a plain launch of this cubin runs the Rust launch's clusters (the
// grid a multiple of 8).
//
// Build: nvcc -O3 -arch=sm_90 -cubin (CUDA 12.0 or later).
#define CLUSTER_REDUCE_BLOCK 256
#define CLUSTER_REDUCE_CLUSTER 8

__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset, 32);
  return v;
}

// Waits until every thread of every block of the cluster has arrived (cluster.sync()).
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\n" ::: "memory");
  asm volatile("barrier.cluster.wait.acquire;\n" ::: "memory");
}

__device__ __forceinline__ unsigned special_cluster_ctarank() {
  unsigned rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  return rank;
}

__device__ __forceinline__ unsigned special_cluster_nctarank() {
  unsigned blocks;
  asm volatile("mov.u32 %0, %%cluster_nctarank;\n" : "=r"(blocks));
  return blocks;
}

extern "C" __global__ void __cluster_dims__(CLUSTER_REDUCE_CLUSTER, 1, 1) __launch_bounds__(CLUSTER_REDUCE_BLOCK)
    cluster_reduce_f32(const float* x, unsigned n, float* sum) {
  __shared__ float warp_sums[CLUSTER_REDUCE_BLOCK / 32];
  __shared__ float partial;
  float acc = 0.0f;
  unsigned stride = gridDim.x * blockDim.x;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) acc += x[i];
  acc = warp_sum(acc);
  unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_sums[warp] = acc;
  __syncthreads();
  if (warp == 0) {
    float block_sum = warp_sum(lane < CLUSTER_REDUCE_BLOCK / 32 ? warp_sums[lane] : 0.0f);
    if (lane == 0) partial = block_sum;
  }
  // Every block's partial is written (release) before the leading block reads it (acquire).
  cluster_sync();
  if (special_cluster_ctarank() == 0 && warp == 0) {
    float remote = 0.0f;
    if (lane < special_cluster_nctarank()) {
      unsigned address;
      asm("mapa.shared::cluster.u32 %0, %1, %2;\n"
          : "=r"(address)
          : "r"(static_cast<unsigned>(__cvta_generic_to_shared(&partial))), "r"(lane));
      asm volatile("ld.shared::cluster.b32 %0, [%1];\n" : "=f"(remote) : "r"(address) : "memory");
    }
    float cluster_sum = warp_sum(remote);
    if (lane == 0) atomicAdd(sum, cluster_sum);
  }
  // No block exits (its shared memory gone) before the leading block has read its partial.
  cluster_sync();
}
