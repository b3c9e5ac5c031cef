#include <cuda_runtime.h>
#include <cuda_fp16.h>
__device__ __half2 pack(__half lo, __half hi) { return {lo, hi}; }
__global__ void k(__half2* out, const __half* a) { out[0] = pack(a[0], a[1]); }
