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
