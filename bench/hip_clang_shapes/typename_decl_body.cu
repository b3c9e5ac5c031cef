#include <cuda_runtime.h>
template <typename T> struct Traits { typedef float type; };
template <typename T>
__global__ void k(T* out) {
  Traits<T>::type v = 1;
  out[0] = T(v);
}
template __global__ void k<float>(float*);
