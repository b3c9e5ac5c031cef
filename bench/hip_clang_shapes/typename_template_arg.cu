#include <cuda_runtime.h>
template <typename T> struct Traits { typedef float type; };
template <typename A> struct Box { A a; };
template <typename T>
__global__ void k(T* out) {
  Box<Traits<T>::type> b{1};
  out[0] = T(b.a);
}
template __global__ void k<float>(float*);
