#include <cuda_runtime.h>
// Past the declarator-id of an out-of-line member definition, `Grid<T, N>::member` is a member
// of the current instantiation: no `typename` in the parameters or the body.
template <typename T, int N>
struct Grid {
  typedef int index_type;
  typedef T& reference;
  struct cell { typedef long bits_type; __device__ bits_type mask(bits_type b) const; };
  __device__ reference at(index_type i);
  T* data;
};
template <typename T, int N>
__device__ typename Grid<T, N>::reference Grid<T, N>::at(const Grid<T, N>::index_type i) {
  Grid<T, N>::index_type j = i % N;
  return const_cast<Grid<T, N>::reference>(data[j]);
}
template <typename T, int N>
__device__ typename Grid<T, N>::cell::bits_type Grid<T, N>::cell::mask(Grid<T, N>::cell::bits_type b) const {
  return b;
}
__global__ void k(float* out) { Grid<float, 4> g{out}; g.at(1) = 2.0f; }
template struct Grid<float, 4>;
