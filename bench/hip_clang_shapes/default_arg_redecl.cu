#include <cuda_runtime.h>
__device__ int f(int x, int y = 2);
__device__ int f(int x, int y = 2) { return x + y; }
__global__ void k(int* out) { out[0] = f(out[1]); }
