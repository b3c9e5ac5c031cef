#include <cuda_runtime.h>
template <typename T> struct Table { static __device__ T values[4]; };
template <typename T> __device__ T Table<T>::values[4];
__global__ void k(float* out) { out[0] = Table<float>::values[1]; }
