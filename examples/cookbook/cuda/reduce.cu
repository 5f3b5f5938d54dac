// Twin of cookbook_kernels::reduce_sum_f32: sum of n floats into *sum (zeroed by the host).
// Block 256, a grid-stride loop (each thread sums its elements), a warp reduction with
// __shfl_xor_sync, the 8 warp sums through shared memory, warp 0 reduces them, one
// atomicAdd per block.
#define REDUCE_BLOCK 256

__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset, 32);
  return v;
}

extern "C" __global__ void __launch_bounds__(REDUCE_BLOCK) reduce_sum_f32(const float* x, unsigned n, float* sum) {
  __shared__ float warp_sums[REDUCE_BLOCK / 32];
  float acc = 0.0f;
  unsigned stride = gridDim.x * blockDim.x;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) acc += x[i];
  acc = warp_sum(acc);
  unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_sums[warp] = acc;
  __syncthreads();
  if (warp == 0) {
    float v = lane < REDUCE_BLOCK / 32 ? warp_sums[lane] : 0.0f;
    v = warp_sum(v);
    if (lane == 0) atomicAdd(sum, v);
  }
}
