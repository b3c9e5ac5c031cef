#include <cuda_runtime.h>
template <typename T> struct Traits { typedef float type; };
template <typename T>
__global__ void k(T* out) {
  using V = Traits<T>::type;
  out[0] = T(V(1));
}
template __global__ void k<float>(float*);
