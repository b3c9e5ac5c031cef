#include <cuda_runtime.h>
#include <cuda_fp16.h>
__global__ void k(__half* out) {
  __half_raw r;
  r.x = 0x3c00;
  out[0] = __half(r);
}
