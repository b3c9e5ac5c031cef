#include <cuda_runtime.h>
// Other arguments than the template header's name another class, even in the body.
template <typename T, int N>
struct Grid {
  typedef int index_type;
  __device__ int scaled(int i) const;
};
template <typename T, int N>
__device__ int Grid<T, N>::scaled(int i) const {
  Grid<T*, N>::index_type j = i * N;
  return j;
}
template struct Grid<float, 4>;
