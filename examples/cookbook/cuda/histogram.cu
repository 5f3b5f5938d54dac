// Twin of cookbook_kernels::histogram_256: counts of the 256 byte values of n_words 32-bit
// words (4 bytes each, little-endian) into bins (zeroed by the host). Block 256: the block's
// histogram in shared memory (shared atomics, a grid-stride loop over words), then one
// global atomicAdd per non-zero bin.
#define HIST_BLOCK 256

extern "C" __global__ void __launch_bounds__(HIST_BLOCK) histogram_256(const unsigned* words, unsigned n_words, unsigned* bins) {
  __shared__ unsigned local[256];
  local[threadIdx.x] = 0;
  __syncthreads();
  unsigned stride = gridDim.x * blockDim.x;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n_words; i += stride) {
    unsigned w = words[i];
    atomicAdd(&local[w & 0xff], 1u);
    atomicAdd(&local[(w >> 8) & 0xff], 1u);
    atomicAdd(&local[(w >> 16) & 0xff], 1u);
    atomicAdd(&local[w >> 24], 1u);
  }
  __syncthreads();
  unsigned count = local[threadIdx.x];
  if (count != 0) atomicAdd(&bins[threadIdx.x], count);
}
