#include <cuda_runtime.h>
__global__ void k(int2* v, int* out) {
  int2 p = v[0];
  auto [a, b] = p;
  out[0] = a + b;
}
