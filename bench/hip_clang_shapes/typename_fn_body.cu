#include <cuda_runtime.h>
template <typename T> struct Traits { typedef float type; };
template <typename T>
__global__ void k(T* out) {
  typedef Traits<T>::type V;
  out[0] = T(V(1));
}
template __global__ void k<float>(float*);
