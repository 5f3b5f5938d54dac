// Twin of cookbook_kernels::transpose_f32: out (width x height) = in (height x width)
// transposed. Blocks of 32x8 threads move a 32x32 tile through a 32x33 shared tile (the
// extra column keeps the column reads free of bank conflicts); each thread moves 4 elements.
#define TILE 32
#define ROWS 8

extern "C" __global__ void __launch_bounds__(TILE * ROWS) transpose_f32(const float* in, float* out, unsigned width, unsigned height) {
  __shared__ float tile[TILE][TILE + 1];
  unsigned x = blockIdx.x * TILE + threadIdx.x;
  unsigned y = blockIdx.y * TILE + threadIdx.y;
  for (unsigned j = 0; j < TILE; j += ROWS)
    if (x < width && y + j < height) tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * width + x];
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
  for (unsigned j = 0; j < TILE; j += ROWS)
    if (x < height && y + j < width) out[(size_t)(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}
