#include <cuda_runtime.h>
#include <cuda_fp16.h>
__global__ void k(float4* o, const float4* p, __half* oh, const __half* ph, long long* ol, const long long* pl) {
  o[0] = __ldg(p); oh[0] = __ldg(ph); ol[0] = __ldg(pl);
}
