#include <cuda_runtime.h>
#include <algorithm>
__device__ int f(int a, int b, int c) { return std::max({a, b, c}); }
__global__ void k(int* out) { out[0] = f(out[1], out[2], out[3]); }
