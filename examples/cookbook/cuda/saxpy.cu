// Twin of cookbook_kernels::{saxpy, saxpy_raw}: out = a * x + y. Block 256, one thread per
// element.
extern "C" __global__ void __launch_bounds__(256) saxpy(const float* x, const float* y, float* out, unsigned n, float a) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = fmaf(a, x[i], y[i]);
}
