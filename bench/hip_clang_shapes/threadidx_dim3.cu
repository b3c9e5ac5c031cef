#include <cuda_runtime.h>
__global__ void k(int* out) { dim3 t = threadIdx; uint3 u = blockIdx; out[0] = t.x + u.y; }
