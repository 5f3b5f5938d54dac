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

// Twin of cookbook_kernels::scan_lookback: the same exclusive prefix sum in one pass, by
// decoupled look-back (Merrill & Garland). Tiles of 2048 elements, one per block of 256
// threads, each thread 8 consecutive elements; tiles in the order of a ticket counter. A
// tile's status word is a u64: flag in the high 32 bits (0 nothing yet, 1 aggregate,
// 2 inclusive prefix), value in the low 32. state[gridDim.x] holds the ticket counter (its
// low half); all of state is zero at the launch.
#define LOOKBACK_BLOCK 256
#define LOOKBACK_ITEMS 8
#define LOOKBACK_TILE (LOOKBACK_BLOCK * LOOKBACK_ITEMS)
#define FLAG_AGGREGATE (1ull << 32)
#define FLAG_PREFIX (2ull << 32)

__device__ __forceinline__ unsigned long long load_acquire(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ void store_release(unsigned long long* p, unsigned long long v) {
  asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

// Warp 0's look-back for tile > 0: lane l polls the word of tile - 1 - l; the lanes up to
// the nearest inclusive prefix add their values; no prefix among 32: move 32 tiles back.
__device__ __forceinline__ unsigned look_back(const unsigned long long* state, unsigned tile, unsigned lane) {
  unsigned prefix = 0;
  for (unsigned end = tile;; end -= 32) {
    unsigned long long word = FLAG_PREFIX;
    if (end > lane) {
      const unsigned long long* at = state + (end - 1 - lane);
      do word = load_acquire(at); while ((word >> 32) == 0);
    }
    unsigned prefixes = __ballot_sync(0xffffffffu, word >= FLAG_PREFIX);
    unsigned stop = prefixes != 0 ? __ffs(prefixes) - 1 : 32;
    prefix += __reduce_add_sync(0xffffffffu, lane <= stop ? (unsigned)word : 0u);
    if (prefixes != 0) return prefix;
  }
}

extern "C" __global__ void __launch_bounds__(LOOKBACK_BLOCK, 8) scan_lookback(const unsigned* in, unsigned n, unsigned* out, unsigned long long* state) {
  __shared__ unsigned warp_totals[LOOKBACK_BLOCK / 32];
  __shared__ unsigned broadcast[2];
  unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (threadIdx.x == 0) broadcast[0] = atomicAdd((unsigned*)(state + gridDim.x), 1u);
  __syncthreads();
  unsigned tile = broadcast[0];
  size_t base = (size_t)tile * LOOKBACK_TILE + threadIdx.x * LOOKBACK_ITEMS;
  unsigned items[LOOKBACK_ITEMS];
  load_items(in, base, n, items);
  unsigned acc = 0;
#pragma unroll
  for (unsigned k = 0; k < LOOKBACK_ITEMS; k++) acc += items[k];
  // The block's scan as block_exclusive_scan, the warp totals read where they are used: the
  // tile's total by warp 0 before the look-back, each thread's warps-before sum after it.
  unsigned within_warp = warp_inclusive_scan(acc, lane) - acc;
  if (lane == 31) warp_totals[warp] = within_warp + acc;
  __syncthreads();
  if (warp == 0) {
    unsigned total = __reduce_add_sync(0xffffffffu, lane < LOOKBACK_BLOCK / 32 ? warp_totals[lane] : 0u);
    unsigned long long* word = state + tile;
    unsigned prefix = 0;
    if (tile == 0) {
      if (lane == 0) store_release(word, FLAG_PREFIX | total);
    } else {
      if (lane == 0) store_release(word, FLAG_AGGREGATE | total);
      prefix = look_back(state, tile, lane);
      if (lane == 0) store_release(word, FLAG_PREFIX | (unsigned)(prefix + total));
    }
    if (lane == 0) broadcast[1] = prefix;
  }
  __syncthreads();
  unsigned before = 0;
#pragma unroll
  for (unsigned w = 0; w < LOOKBACK_BLOCK / 32; w++)
    if (w < warp) before += warp_totals[w];
  unsigned running = broadcast[1] + before + within_warp;
  unsigned count = base < n ? (unsigned)min((size_t)n - base, (size_t)LOOKBACK_ITEMS) : 0u;
#pragma unroll
  for (unsigned k = 0; k < LOOKBACK_ITEMS; k++) {
    if (k < count) out[base + k] = running;
    running += items[k];
  }
}
