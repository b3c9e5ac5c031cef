#include <cuda_runtime.h>
#include <cuda_fp16.h>
__global__ void k(unsigned short* out, const __half* in) {
  __half_raw r = in[0];
  out[0] = r.x;
}
