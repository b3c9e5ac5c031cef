#include <cuda_runtime.h>
#include <cuda_fp16.h>
__global__ void k(__half2* out, float2 f) {
  out[0] = __float22half2_rn(f);
  __half2 h = __half2(__float2half(f.x), __float2half(f.y));
  out[1] = h;
}
