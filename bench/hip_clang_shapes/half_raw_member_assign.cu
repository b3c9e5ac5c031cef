#include <cuda_runtime.h>
#include <cuda_fp16.h>
__global__ void k(__half* out, const unsigned short* bits) {
  __half_raw r;
  r.x = bits[0];
  out[0] = r;
}
