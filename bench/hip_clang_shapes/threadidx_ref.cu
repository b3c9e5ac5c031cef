#include <cuda_runtime.h>
__device__ int get(const unsigned& r) { return r; }
__global__ void k(int* out) { out[0] = get(threadIdx.x); const auto& r = blockIdx.x; out[1] = r; }
