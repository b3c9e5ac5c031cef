#include <cuda_runtime.h>
__global__ void k(float* out) { float v = out[threadIdx.x]; out[threadIdx.x] = __shfl_xor(v, 1); }
