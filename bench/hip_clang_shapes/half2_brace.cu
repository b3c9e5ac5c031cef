#include <cuda_runtime.h>
#include <cuda_fp16.h>
__global__ void k(__half2* out, const __half* a) {
  __half2 h = {a[0], a[1]};
  out[0] = h;
}
