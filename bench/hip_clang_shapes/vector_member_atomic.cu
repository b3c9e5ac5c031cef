#include <cuda_runtime.h>
__global__ void k(float2* v) {
  atomicAdd(&v[0].y, 1.f);
}
