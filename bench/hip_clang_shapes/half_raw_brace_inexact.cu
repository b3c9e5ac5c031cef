#include <cuda_runtime.h>
#include <cuda_fp16.h>
__global__ void k(__half* out) {
  __half_raw r = {0x7bff};
  out[0] = r;
}
