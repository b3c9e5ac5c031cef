#include <cuda_runtime.h>
template <typename T> struct Base { T scale = 2; };
template <typename T>
struct Derived : Base<T> {
  __device__ T apply(T x) const { return x * scale; }
};
__global__ void k(float* out) { out[0] = Derived<float>().apply(1.f); }
