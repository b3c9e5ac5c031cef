#include <cuda_runtime.h>
__global__ void k(int* out) { int i = 0; again: if (++i < 3) goto again; out[0] = i; }
