#include <cuda_runtime.h>
#include <algorithm>
template <int A, int B>
__global__ void k(int* out) {
  __shared__ int s[std::max(A, B)];
  s[threadIdx.x] = 1;
  out[0] = s[0];
}
template __global__ void k<4, 8>(int*);
