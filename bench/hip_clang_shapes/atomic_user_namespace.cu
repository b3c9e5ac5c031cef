#include <cuda_runtime.h>
namespace mine { __device__ float atomicMax(float* address, float val) { return val; } }
__global__ void k(float* m) { mine::atomicMax(m, 1.f); }
