#include <cuda_runtime.h>
__global__ void k(float4* v) {
  float* p = &v[0].x;
  *p = 1.f;
}
