#include <cuda_runtime.h>
#include <cuda_fp16.h>
__global__ void k(__half2* out) {
  __half2_raw r;
  r.x = 0x3c00;
  r.y = 0x4000;
  out[0] = __half2(r);
}
