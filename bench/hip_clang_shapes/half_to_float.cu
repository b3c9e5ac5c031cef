#include <cuda_runtime.h>
#include <cuda_fp16.h>
__global__ void k(float* out, const __half* in) {
  float f = in[0];
  out[0] = f + static_cast<float>(in[1]);
}
