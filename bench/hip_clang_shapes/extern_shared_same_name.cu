#include <cuda_runtime.h>
__global__ void a(float* out) { extern __shared__ float buf[]; buf[threadIdx.x] = 1; out[0] = buf[1]; }
__global__ void b(int* out) { extern __shared__ int buf[]; buf[threadIdx.x] = 1; out[0] = buf[1]; }
