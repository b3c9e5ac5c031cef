#include <cuda_runtime.h>
int host_only(int x) { return x + 1; }
__host__ __device__ int both(int x) { return host_only(x); }
__global__ void k(int* out) { out[0] = both(out[1]); }
