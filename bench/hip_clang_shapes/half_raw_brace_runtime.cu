#include <cuda_runtime.h>
#include <cuda_fp16.h>
__global__ void k(__half* out, const unsigned short* bits) {
  __half_raw r = {bits[threadIdx.x]};
  out[threadIdx.x] = r;
}
