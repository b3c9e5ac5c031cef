#include <cuda_runtime.h>
__device__ void bump(float& r) { r += 1.f; }
__global__ void k(float4* v) {
  bump(v[0].x);
}
