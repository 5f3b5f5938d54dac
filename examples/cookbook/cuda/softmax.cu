// Twin of cookbook_kernels::softmax_rows: out = softmax of each row of a rows x cols matrix.
// Block 256 = 8 warps, one warp per row: the lanes stride along the row; the row's maximum
// and the sum of exp(x - max) by __shfl_xor_sync reductions; expf (accurate).
#define SOFTMAX_BLOCK 256

extern "C" __global__ void __launch_bounds__(SOFTMAX_BLOCK) softmax_rows(const float* in, float* out, unsigned rows, unsigned cols) {
  unsigned lane = threadIdx.x % 32;
  unsigned row = blockIdx.x * (SOFTMAX_BLOCK / 32) + threadIdx.x / 32;
  if (row >= rows) return;
  const float* x = in + (size_t)row * cols;
  float* y = out + (size_t)row * cols;
  float m = __int_as_float(0xff800000);  // -infinity
  for (unsigned c = lane; c < cols; c += 32) m = fmaxf(m, x[c]);
  for (int offset = 16; offset > 0; offset >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, offset, 32));
  float s = 0.0f;
  for (unsigned c = lane; c < cols; c += 32) s += expf(x[c] - m);
  for (int offset = 16; offset > 0; offset >>= 1) s += __shfl_xor_sync(0xffffffffu, s, offset, 32);
  float inv = 1.0f / s;
  for (unsigned c = lane; c < cols; c += 32) y[c] = expf(x[c] - m) * inv;
}
