#include <cuda_runtime.h>
#include <algorithm>
__device__ float f(float a, float b) { return std::min(a, b); }
__device__ long g(long a, long b) { return std::max(a, b); }
__device__ size_t h(size_t a, size_t b) { return std::max(a, b); }
__global__ void k(float* out) { out[0] = f(out[1], out[2]) + g(1, 2) + h(1, 2); }
