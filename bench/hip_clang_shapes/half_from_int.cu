#include <cuda_runtime.h>
#include <cuda_fp16.h>
__global__ void k(__half* out) {
  __half h = 0;
  out[0] = h;
}
