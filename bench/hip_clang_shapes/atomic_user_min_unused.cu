#include <cuda_runtime.h>
__device__ inline float atomicMin(float* address, float val) { return val; }
__global__ void k(float* m) { m[0] = 1; }
