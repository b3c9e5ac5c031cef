#include <cuda_runtime.h>
template <typename T> struct Traits { typedef float type; };
template <typename T>
__device__ Traits<T>::type conv(T x) { return x; }
__global__ void k(float* out) { out[0] = conv(1.0f); }
