#include <cuda_runtime.h>
template <typename T> struct Frag { template <int N> __device__ T at() const { return T(N); } };
template <typename T>
__global__ void k(T* out) {
  Frag<T> f;
  out[0] = f.at<2>();
}
template __global__ void k<float>(float*);
