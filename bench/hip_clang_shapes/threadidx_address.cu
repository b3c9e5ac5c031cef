#include <cuda_runtime.h>
__global__ void k(int* out) { const unsigned* p = &threadIdx.x; out[0] = *p; }
