// Programmatic dependent launch (Hopper) against plain launches, in a CUDA graph: a chain of
// 200 short kernels of 384 blocks x 96 threads (Gray-Scott 512²'s tuned shape), three kernel
// lengths; prints microseconds per kernel (median of 9). docs/performance.md, issue 58's evening.
//     nvcc -O3 -arch=sm_90 -o /tmp/pdl scripts/pdl-chain.cu && /tmp/pdl
#include <cstdio>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)
__global__ void step(const float* __restrict__ in, float* __restrict__ out, int n, int iters, int pdl) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float a = 0.f;
  for (int k = 0; k < 8; k++) a += __sinf(i * 0.001f + k);   // prologue not depending on `in`
  if (pdl) asm volatile("griddepcontrol.wait;" ::: "memory");
  for (int j = i; j < n; j += gridDim.x * blockDim.x) {
    float v = in[j];
    for (int k = 0; k < iters; k++) v = v * 0.999f + a * 1e-6f;
    out[j] = v;
  }
  if (pdl) asm volatile("griddepcontrol.launch_dependents;");
}
int main() {
  int n = 512 * 512, blocks = 384, threads = 96;
  float *a, *b; CK(cudaMalloc(&a, n * 4)); CK(cudaMalloc(&b, n * 4)); CK(cudaMemset(a, 0, n * 4));
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (int iters : {8, 64, 160}) for (int pdl = 0; pdl < 2; pdl++) {
    cudaGraph_t g; cudaGraphExec_t ge;
    int chain = 200;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    for (int k = 0; k < chain; k++) {
      cudaLaunchConfig_t cfg = {}; cfg.gridDim = blocks; cfg.blockDim = threads; cfg.stream = s;
      cudaLaunchAttribute at[1]; at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
      at[0].val.programmaticStreamSerializationAllowed = 1; cfg.attrs = at; cfg.numAttrs = pdl;
      float* in = (k & 1) ? b : a; float* out = (k & 1) ? a : b;
      CK(cudaLaunchKernelEx(&cfg, step, (const float*)in, out, n, iters, pdl));
    }
    CK(cudaStreamEndCapture(s, &g)); CK(cudaGraphInstantiate(&ge, g, 0));
    cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
    for (int w = 0; w < 3; w++) CK(cudaGraphLaunch(ge, s));
    float best = 1e9, all[9];
    for (int r = 0; r < 9; r++) {
      cudaEventRecord(e0, s); CK(cudaGraphLaunch(ge, s)); cudaEventRecord(e1, s); CK(cudaEventSynchronize(e1));
      float ms; cudaEventElapsedTime(&ms, e0, e1); all[r] = ms * 1000 / chain; if (all[r] < best) best = all[r];
    }
    for (int i = 0; i < 9; i++) for (int j = i + 1; j < 9; j++) if (all[j] < all[i]) { float t = all[i]; all[i] = all[j]; all[j] = t; }
    printf("iters %3d pdl %d: %.3f us per kernel (median of 9; best %.3f)\n", iters, pdl, all[4], best);
  }
  return 0;
}
