#include <cuda_runtime.h>
#include <cuda_fp16.h>
__global__ void k(__half2* out, const unsigned short* bits) {
  __half2_raw r;
  r.x = bits[0];
  r.y = bits[1];
  out[0] = r;
}
