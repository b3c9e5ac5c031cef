#include <cuda_runtime.h>
template <typename T> struct Traits { typedef float type; };
template <typename T>
struct Holder {
  typedef Traits<T>::type V;
  __device__ V get() const { return V(1); }
};
__global__ void k(float* out) { out[0] = Holder<int>().get(); }
