// Twin of cookbook_kernels::{jacobi_5pt, jacobi_5pt_raw}: one Jacobi sweep of Laplace's
// equation on a width x height grid (row-major): each interior cell becomes the mean of its
// four neighbours, boundary cells are copied. Blocks of 32x8, one thread per cell.
extern "C" __global__ void __launch_bounds__(256) jacobi_5pt(const float* in, float* out, unsigned width, unsigned height) {
  unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= width || y >= height) return;
  size_t i = (size_t)y * width + x;
  if (x == 0 || y == 0 || x == width - 1 || y == height - 1) {
    out[i] = in[i];
  } else {
    out[i] = 0.25f * ((in[i - 1] + in[i + 1]) + (in[i - width] + in[i + width]));
  }
}

// Twin of cookbook_kernels::{jacobi_5pt_tiled, jacobi_5pt_tiled_raw}: the same sweep through a
// shared tile. Blocks of exactly 32x8 threads, one per cell; each block stages its 32x8 cells
// and a one-cell halo (34x10 floats; slot s by the block's thread s and s + 256) in shared
// memory, then every thread reads its cell and four neighbours from the tile.
#define TILED_BX 32
#define TILED_BY 8
#define TILE_W (TILED_BX + 2)
#define TILE_SLOTS (TILE_W * (TILED_BY + 2))
extern "C" __global__ void __launch_bounds__(256) jacobi_5pt_tiled(const float* in, float* out, unsigned width, unsigned height) {
  __shared__ float tile[TILE_SLOTS];
  unsigned tx = threadIdx.x, ty = threadIdx.y;
  unsigned x0 = blockIdx.x * TILED_BX, y0 = blockIdx.y * TILED_BY;
  for (unsigned slot = ty * TILED_BX + tx; slot < TILE_SLOTS; slot += TILED_BX * TILED_BY) {
    unsigned gx = x0 + slot % TILE_W - 1, gy = y0 + slot / TILE_W - 1;
    tile[slot] = gx < width && gy < height ? in[(size_t)gy * width + gx] : 0.0f;
  }
  __syncthreads();
  unsigned x = x0 + tx, y = y0 + ty;
  if (x >= width || y >= height) return;
  unsigned at = (ty + 1) * TILE_W + tx + 1;
  float centre = tile[at];
  float value = x == 0 || y == 0 || x + 1 == width || y + 1 == height
                    ? centre
                    : 0.25f * ((tile[at - 1] + tile[at + 1]) + (tile[at - TILE_W] + tile[at + TILE_W]));
  out[(size_t)y * width + x] = value;
}
