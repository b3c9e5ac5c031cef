#include <cuda_runtime.h>
#include <cuda_fp16.h>
__global__ void k(__half* out, const unsigned short* bits) {
  __half_raw r = {.x = bits[0]};
  __half_raw z = {};
  __half_raw zero = {0};
  out[0] = r;
  out[1] = z;
  out[2] = zero;
}
