#include <cuda_runtime.h>
template <typename T> __device__ T twice(T v) { return v * 2; }
__global__ void k(unsigned* out) { out[0] = twice(threadIdx.x); }
