#include <cuda_runtime.h>
#include <cuda_fp16.h>
__global__ void k(__half* out, const __half* in) {
  __shared__ __half s[64];
  volatile __half* vs = s;
  vs[threadIdx.x] = in[threadIdx.x];
  __half v = vs[threadIdx.x ^ 1];
  out[threadIdx.x] = v;
}
