#include <cuda_runtime.h>
#include <cuda_fp16.h>
__global__ void k(__half* out) {
  __half_raw r = {0x3c00};
  __half h = r;
  out[0] = h;
}
