#include <cuda_runtime.h>
__global__ void k(long* out) { long v = out[threadIdx.x]; out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, v, 1); }
