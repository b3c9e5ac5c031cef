#include <cuda_runtime.h>
#include <cuda_fp16.h>
__global__ void k(__half2* out) {
  __half2 h = {__float2half(0.f), __float2half(1.f)};
  out[0] = h;
}
