#include <cuda_runtime.h>
// The return type comes before the declarator-id: not yet in class scope.
template <typename T, int N>
struct Grid {
  typedef T& reference;
  __device__ reference at(int i);
  T* data;
};
template <typename T, int N>
__device__ Grid<T, N>::reference Grid<T, N>::at(int i) { return data[i % N]; }
__global__ void k(float* out) { Grid<float, 4> g{out}; g.at(1) = 2.0f; }
