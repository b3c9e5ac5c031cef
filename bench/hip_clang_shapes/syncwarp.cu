#include <cuda_runtime.h>
__global__ void k(float* out) { out[threadIdx.x] = 1; __syncwarp(); }
