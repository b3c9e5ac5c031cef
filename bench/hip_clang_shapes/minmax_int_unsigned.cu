#include <cuda_runtime.h>
__global__ void k(int* out, unsigned n) {
  int i = threadIdx.x;
  out[0] = min(i, n);
}
