#include <cuda_runtime.h>
__global__ void k(int* out, size_t n) {
  int i = threadIdx.x;
  out[0] = max(i, n);
}
