#include <cuda_runtime.h>
#include <cuda_fp16.h>
__global__ void k(__half2* out, const __half* a) {
  out[0] = make_half2(a[0], a[1]);
  out[1] = __halves2half2(a[0], a[1]);
}
