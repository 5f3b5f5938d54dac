// The bandwidth ceiling of the Gray-Scott step's memory traffic, without the stencil: how fast
// can any kernel read two 4096² float fields and write two, against cudaMemcpy (device to
// device) of the same bytes? The `fused` kernel moves exactly this (16 B per cell).
//
//   nvcc -O3 -arch=native -o /tmp/copy-ceiling scripts/copy-ceiling.cu && /tmp/copy-ceiling
//
// Prints the median of 21 timed repeats (after 3 warm-ups, CUDA events) of each, as GB/s of
// bytes read + written and as a share of cudaMemcpy's.
#include <algorithm>
#include <cstdio>
#include <vector>

#define CHECK(x)                                                                   \
    do {                                                                           \
        cudaError_t e = (x);                                                       \
        if (e != cudaSuccess) {                                                    \
            fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e));                \
            return 1;                                                              \
        }                                                                          \
    } while (0)

// Two fields in, two out, one float per thread: the fused kernel's traffic pattern.
__global__ void copy2(const float* u, const float* v, float* un, float* vn, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) {
        un[i] = u[i];
        vn[i] = v[i];
    }
}

// The same with float4 accesses (four cells per thread).
__global__ void copy2_vec4(const float4* u, const float4* v, float4* un, float4* vn, size_t n4) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n4) {
        un[i] = u[i];
        vn[i] = v[i];
    }
}

template <typename F>
static float median_ms(F run) {
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    for (int i = 0; i < 3; i++) run();
    std::vector<float> t;
    for (int i = 0; i < 21; i++) {
        cudaEventRecord(a);
        run();
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        float ms;
        cudaEventElapsedTime(&ms, a, b);
        t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

int main() {
    const size_t n = 4096ull * 4096ull, bytes = n * sizeof(float);
    float *u, *v, *un, *vn;
    CHECK(cudaMalloc(&u, bytes));
    CHECK(cudaMalloc(&v, bytes));
    CHECK(cudaMalloc(&un, bytes));
    CHECK(cudaMalloc(&vn, bytes));
    CHECK(cudaMemset(u, 0, bytes));
    CHECK(cudaMemset(v, 0, bytes));
    const double moved = 4.0 * bytes;  // read u, v; write un, vn
    float memcpy_ms = median_ms([&] {
        cudaMemcpyAsync(un, u, bytes, cudaMemcpyDeviceToDevice);
        cudaMemcpyAsync(vn, v, bytes, cudaMemcpyDeviceToDevice);
    });
    CHECK(cudaGetLastError());
    double memcpy_gbs = moved / memcpy_ms / 1e6;
    printf("%-34s %8.2f us  %7.0f GB/s  100.0%%\n", "cudaMemcpy D2D (two fields)", memcpy_ms * 1e3, memcpy_gbs);
    for (int threads : {128, 256, 512}) {
        float ms = median_ms([&] { copy2<<<(n + threads - 1) / threads, threads>>>(u, v, un, vn, n); });
        CHECK(cudaGetLastError());
        char name[64];
        snprintf(name, sizeof name, "copy 2 in, 2 out, float, %d thr", threads);
        printf("%-34s %8.2f us  %7.0f GB/s  %5.1f%%\n", name, ms * 1e3, moved / ms / 1e6,
               100.0 * memcpy_ms / ms);
    }
    for (int threads : {128, 256, 512}) {
        size_t n4 = n / 4;
        float ms = median_ms([&] {
            copy2_vec4<<<(n4 + threads - 1) / threads, threads>>>((const float4*)u, (const float4*)v,
                                                                  (float4*)un, (float4*)vn, n4);
        });
        CHECK(cudaGetLastError());
        char name[64];
        snprintf(name, sizeof name, "copy 2 in, 2 out, float4, %d thr", threads);
        printf("%-34s %8.2f us  %7.0f GB/s  %5.1f%%\n", name, ms * 1e3, moved / ms / 1e6,
               100.0 * memcpy_ms / ms);
    }
    return 0;
}
