// Gray-Scott 512^2 with the project's own streaming c1 kernels (PTX from the Rust build,
// patched to sm_90 with griddepcontrol by scripts/pdl-gs-patch.py, which says how to run this):
// a CUDA graph of 1,200 steps per shape and variant, with and without programmatic dependent
// launch; us per step (median of 9), and the fields compared bit for bit with the first row.
// docs/performance.md, "programmatic dependent launch".
#include <cstdio>
#include <cstring>
#include <vector>
#include <string>
#include <algorithm>
#include <cuda.h>
#define CK(x) do { CUresult e = (x); if (e != CUDA_SUCCESS) { const char* m; cuGetErrorString(e, &m); printf("%s: %s (line %d)\n", #x, m, __LINE__); exit(1); } } while (0)
struct Rates { float du, dv, feed, kill, dt; };
static std::string slurp(const char* p) { FILE* f = fopen(p, "rb"); if (!f) { printf("no %s\n", p); exit(1); } std::string s; char b[65536]; size_t n; while ((n = fread(b, 1, sizeof b, f))) s.append(b, n); fclose(f); s.push_back(0); return s; }
int main(int argc, char** argv) {
  const int W = 512, H = 512, N = W * H;
  CK(cuInit(0)); CUdevice dev; CK(cuDeviceGet(&dev, 0)); CUcontext ctx; CK(cuDevicePrimaryCtxRetain(&ctx, dev)); CK(cuCtxSetCurrent(ctx));
  char name[256]; cuDeviceGetName(name, 256, dev); printf("%s\n", name);
  const char* files[] = {"orig.ptx", "wait.ptx", "wait.ptx", "trig.ptx", "late.ptx", "latenotrig.ptx"};
  const int pdl[] = {0, 0, 1, 1, 1, 1};
  const char* label[] = {"sm_70 PTX, plain graph (today)", "sm_90 + wait, no PDL attr", "sm_90 + wait, PDL", "sm_90 + wait + early trigger, PDL", "sm_90 trigger first, wait before 1st load, PDL", "sm_90 wait before 1st load, no trigger, PDL"};
  const int NV = 6;
  CUmodule mods[NV];
  for (int i = 0; i < NV; i++) { std::string s = slurp(files[i]); CK(cuModuleLoadData(&mods[i], s.data())); }
  std::vector<float> u0(N, 1.f), v0(N, 0.f);
  for (int y = 0; y < H; y++) for (int x = 0; x < W; x++) { unsigned h = (x * 73856093u) ^ (y * 19349663u); h = h * 2654435761u;
    if (abs(x - 200) < 40 && abs(y - 260) < 30) { u0[y * W + x] = 0.5f; v0[y * W + x] = 0.25f + (h >> 24) * 1e-4f; } }
  CUdeviceptr b[4]; for (int i = 0; i < 4; i++) CK(cuMemAlloc(&b[i], N * 4));
  CUstream st; CK(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
  Rates r = {0.16f, 0.08f, 0.035f, 0.065f, 1.0f};
  struct Shape { int steps, warps, chunk; } shapes[] = {{5, 3, 8}, {4, 3, 8}, {6, 3, 8}, {5, 2, 8}, {5, 4, 8}, {5, 3, 16}, {3, 3, 8}, {8, 3, 8}, {4, 2, 8},
    // Shorter and longer chunks than the tuner's (not yet run): a block's serial chain against the wavefront's start.
    {5, 3, 4}, {5, 3, 6}, {5, 3, 10}, {5, 3, 12}, {4, 3, 6}, {6, 3, 6}, {5, 2, 6}};
  const int total = 1200;  // steps per graph (a multiple of every step count below)
  std::vector<float> ref_u, ref_v;
  printf("%-48s %s\n", "variant", "us/step for shapes (steps,warps,chunk) ...");
  for (auto sh : shapes) {
    int strip = 32 * sh.warps - 2 * sh.steps; unsigned gx = (W + strip - 1) / strip, gy = (H + sh.chunk - 1) / sh.chunk;
    unsigned shared = 2 * sh.steps * 4 * (4 * (32 * 4 + 2));
    char kname[64]; snprintf(kname, 64, "gray_scott_streaming_c1_s%d", sh.steps);
    printf("shape s%d w%d c%d (%ux%u blocks):\n", sh.steps, sh.warps, sh.chunk, gx, gy);
    for (int vi = 0; vi < NV; vi++) {
      CUfunction f; CK(cuModuleGetFunction(&f, mods[vi], kname));
      if (shared > 48 * 1024) CK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shared));
      CK(cuMemcpyHtoD(b[0], u0.data(), N * 4)); CK(cuMemcpyHtoD(b[1], v0.data(), N * 4));
      int launches = total / sh.steps;
      CUgraph g; CUgraphExec ge;
      CK(cuStreamBeginCapture(st, CU_STREAM_CAPTURE_MODE_GLOBAL));
      for (int k = 0; k < launches; k++) {
        CUdeviceptr a0 = b[(k & 1) ? 2 : 0], a1 = b[(k & 1) ? 3 : 1], o0 = b[(k & 1) ? 0 : 2], o1 = b[(k & 1) ? 1 : 3];
        unsigned w = W, h = H, c = sh.chunk;
        void* params[] = {&a0, &a1, &o0, &o1, &w, &h, &r, &c};
        CUlaunchConfig cfg = {}; cfg.gridDimX = gx; cfg.gridDimY = gy; cfg.gridDimZ = 1; cfg.blockDimX = 32 * sh.warps; cfg.blockDimY = 1; cfg.blockDimZ = 1;
        cfg.sharedMemBytes = shared; cfg.hStream = st;
        CUlaunchAttribute at[1]; at[0].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION; at[0].value.programmaticStreamSerializationAllowed = 1;
        cfg.attrs = at; cfg.numAttrs = pdl[vi];
        CK(cuLaunchKernelEx(&cfg, f, params, nullptr));
      }
      CK(cuStreamEndCapture(st, &g)); CK(cuGraphInstantiate(&ge, g, 0));
      // One replay from the initial fields for the comparison (launches is even or odd: the
      // result is in b[0..2] when launches is even).
      CK(cuGraphLaunch(ge, st)); CK(cuStreamSynchronize(st));
      int res = (launches & 1) ? 2 : 0;
      std::vector<float> u(N), v(N); CK(cuMemcpyDtoH(u.data(), b[res], N * 4)); CK(cuMemcpyDtoH(v.data(), b[res + 1], N * 4));
      if (ref_u.empty()) { ref_u = u; ref_v = v; }
      long diff = 0; for (int i = 0; i < N; i++) diff += memcmp(&u[i], &ref_u[i], 4) != 0 || memcmp(&v[i], &ref_v[i], 4) != 0;
      double vsum = 0; for (int i = 0; i < N; i++) vsum += v[i];
      for (int wu = 0; wu < 3; wu++) CK(cuGraphLaunch(ge, st));
      CUevent e0, e1; CK(cuEventCreate(&e0, 0)); CK(cuEventCreate(&e1, 0));
      std::vector<float> t;
      for (int rep = 0; rep < 9; rep++) { CK(cuEventRecord(e0, st)); CK(cuGraphLaunch(ge, st)); CK(cuEventRecord(e1, st)); CK(cuEventSynchronize(e1)); float ms; cuEventElapsedTime(&ms, e0, e1); t.push_back(ms * 1000 / total); }
      std::sort(t.begin(), t.end());
      printf("  %-48s %.3f us/step (min %.3f max %.3f)  cells differing from the first: %ld  sum V %.3f\n", label[vi], t[4], t[0], t[8], diff, vsum);
      cuGraphExecDestroy(ge); cuGraphDestroy(g); cuEventDestroy(e0); cuEventDestroy(e1);
    }
  }
  return 0;
}
