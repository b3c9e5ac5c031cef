#include <cuda_runtime.h>
__global__ void k(size_t* out, size_t n, int c) {
  out[0] = min(n, c);
}
