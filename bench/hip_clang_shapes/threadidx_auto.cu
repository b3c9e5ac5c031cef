#include <cuda_runtime.h>
__global__ void k(unsigned* out) { auto t = threadIdx.x; t += 1; out[0] = t; }
