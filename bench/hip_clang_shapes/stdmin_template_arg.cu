#include <cuda_runtime.h>
#include <algorithm>
template <int N> __device__ int val() { return N; }
template <int A, int B>
__global__ void k(int* out) {
  out[0] = val<std::min(A, B)>();
}
template __global__ void k<4, 8>(int*);
