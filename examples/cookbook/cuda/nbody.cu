// Twin of cookbook_kernels::nbody_accelerations: the acceleration of each of n bodies
// (float4 x, y, z, mass) from all n (softened gravity, G = 1). Block 256, one thread per body;
// the bodies pass through shared memory in tiles of 256; rsqrtf and FMAs per pair.
#define NBODY_BLOCK 256

extern "C" __global__ void __launch_bounds__(NBODY_BLOCK) nbody_accelerations(const float4* bodies, float4* accelerations, unsigned n, float softening2) {
  __shared__ float4 tile[NBODY_BLOCK];
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  float4 me = i < n ? bodies[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  float ax = 0.0f, ay = 0.0f, az = 0.0f;
  for (unsigned start = 0; start < n; start += NBODY_BLOCK) {
    unsigned j = start + threadIdx.x;
    tile[threadIdx.x] = j < n ? bodies[j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    __syncthreads();
#pragma unroll 8
    for (unsigned t = 0; t < NBODY_BLOCK; t++) {
      float4 other = tile[t];
      float dx = other.x - me.x, dy = other.y - me.y, dz = other.z - me.z;
      float d2 = fmaf(dx, dx, fmaf(dy, dy, fmaf(dz, dz, softening2)));
      float inv = rsqrtf(d2);
      float s = other.w * (inv * inv * inv);
      ax = fmaf(dx, s, ax);
      ay = fmaf(dy, s, ay);
      az = fmaf(dz, s, az);
    }
    __syncthreads();
  }
  if (i < n) accelerations[i] = make_float4(ax, ay, az, 0.0f);
}
