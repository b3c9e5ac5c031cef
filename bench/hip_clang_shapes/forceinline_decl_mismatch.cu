#include <cuda_runtime.h>
__device__ int f(int);
__device__ __forceinline__ int f(int x) { return x + 1; }
__global__ void k(int* out) { out[0] = f(out[1]); }
