#include <cuda_runtime.h>
template <typename T> struct Traits { typedef float type; };
template <typename T>
__global__ void k(T* out, const T* in) {
  out[0] = static_cast<Traits<T>::type>(in[0]);
}
template __global__ void k<float>(float*, const float*);
