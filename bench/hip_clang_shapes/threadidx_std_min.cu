#include <cuda_runtime.h>
#include <algorithm>
__global__ void k(unsigned* out, unsigned n) { out[0] = std::min(threadIdx.x, n); }
