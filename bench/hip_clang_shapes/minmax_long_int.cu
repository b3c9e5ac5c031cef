#include <cuda_runtime.h>
__global__ void k(long* out, long n) {
  out[0] = min(n, 4);
}
