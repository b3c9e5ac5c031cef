#include <cuda_runtime.h>
template <typename T> struct Traits { typedef float type; };
template <typename T>
__device__ T conv(Traits<T>::type x) { return T(x); }
__global__ void k(float* out) { out[0] = conv<float>(1.0f); }
