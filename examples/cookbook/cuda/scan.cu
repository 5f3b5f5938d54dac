// Twin of cookbook_kernels::{scan_tile_sums, scan_block_sums, scan_tiles}: exclusive prefix
// sum of n u32 (wrapping), reduce-then-scan in three kernels. Tiles of 2048 elements, one
// per block of 256 threads, each thread 8 consecutive elements.
#define SCAN_BLOCK 256
#define SCAN_ITEMS 8
#define SCAN_TILE (SCAN_BLOCK * SCAN_ITEMS)
#define SCAN_SUMS_BLOCK 1024

// Inclusive scan across the warp (Kogge-Stone with __shfl_up_sync).
// A thread's SCAN_ITEMS consecutive inputs from base (0 past n): a run wholly inside the input
// loads unconditionally, a run that crosses n checks each item (as the Rust kernels do).
__device__ __forceinline__ void load_items(const unsigned* in, size_t base, unsigned n, unsigned items[SCAN_ITEMS]) {
  if (base + SCAN_ITEMS <= n) {
#pragma unroll
    for (unsigned k = 0; k < SCAN_ITEMS; k++) items[k] = in[base + k];
  } else {
#pragma unroll
    for (unsigned k = 0; k < SCAN_ITEMS; k++) items[k] = base + k < n ? in[base + k] : 0;
  }
}

__device__ __forceinline__ unsigned warp_inclusive_scan(unsigned v, unsigned lane) {
  for (unsigned delta = 1; delta < 32; delta <<= 1) {
    unsigned up = __shfl_up_sync(0xffffffffu, v, delta, 32);
    if (lane >= delta) v += up;
  }
  return v;
}

// Exclusive scan of one value per thread across the block; every thread gets the block total.
template <unsigned WARPS>
__device__ __forceinline__ unsigned block_exclusive_scan(unsigned v, unsigned* warp_totals, unsigned* total) {
  unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  unsigned inclusive = warp_inclusive_scan(v, lane);
  if (lane == 31) warp_totals[warp] = inclusive;
  __syncthreads();
  unsigned before = 0, all = 0;
  for (unsigned w = 0; w < WARPS; w++) {
    unsigned t = warp_totals[w];
    if (w < warp) before += t;
    all += t;
  }
  __syncthreads();
  *total = all;
  return before + inclusive - v;
}

// Pass 1: the sum of each tile (the warp's by __reduce_add_sync, sm_80+).
extern "C" __global__ void __launch_bounds__(SCAN_BLOCK) scan_tile_sums(const unsigned* in, unsigned n, unsigned* tile_sums) {
  __shared__ unsigned warp_sums[SCAN_BLOCK / 32];
  size_t base = (size_t)blockIdx.x * SCAN_TILE + threadIdx.x * SCAN_ITEMS;
  unsigned items[SCAN_ITEMS];
  load_items(in, base, n, items);
  unsigned acc = 0;
#pragma unroll
  for (unsigned k = 0; k < SCAN_ITEMS; k++) acc += items[k];
  acc = __reduce_add_sync(0xffffffffu, acc);
  unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_sums[warp] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned s = 0;
    for (unsigned w = 0; w < SCAN_BLOCK / 32; w++) s += warp_sums[w];
    tile_sums[blockIdx.x] = s;
  }
}

// Pass 2: exclusive scan of the tile sums in place, by one block of 1024 threads.
extern "C" __global__ void __launch_bounds__(SCAN_SUMS_BLOCK) scan_block_sums(unsigned* sums, unsigned count) {
  __shared__ unsigned warp_totals[SCAN_SUMS_BLOCK / 32];
  unsigned carry = 0;
  for (unsigned start = 0; start < count; start += SCAN_SUMS_BLOCK) {
    unsigned i = start + threadIdx.x;
    unsigned v = i < count ? sums[i] : 0;
    unsigned total;
    unsigned exclusive = block_exclusive_scan<SCAN_SUMS_BLOCK / 32>(v, warp_totals, &total);
    if (i < count) sums[i] = carry + exclusive;
    carry += total;
  }
}

// Pass 3: each tile's exclusive scan, offset by the scanned tile sums.
extern "C" __global__ void __launch_bounds__(SCAN_BLOCK) scan_tiles(const unsigned* in, unsigned n, const unsigned* tile_offsets, unsigned* out) {
  __shared__ unsigned warp_totals[SCAN_BLOCK / 32];
  size_t base = (size_t)blockIdx.x * SCAN_TILE + threadIdx.x * SCAN_ITEMS;
  unsigned items[SCAN_ITEMS];
  load_items(in, base, n, items);
  unsigned acc = 0;
#pragma unroll
  for (unsigned k = 0; k < SCAN_ITEMS; k++) acc += items[k];
  unsigned total;
  unsigned running = tile_offsets[blockIdx.x] + block_exclusive_scan<SCAN_BLOCK / 32>(acc, warp_totals, &total);
#pragma unroll
  for (unsigned k = 0; k < SCAN_ITEMS; k++) {
    if (base + k < n) out[base + k] = running;
    running += items[k];
  }
}
