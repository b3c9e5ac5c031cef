#include <cuda_runtime.h>
template <typename T>
__global__ void k(T* out) {
  extern __shared__ T smem[];
  smem[threadIdx.x] = out[threadIdx.x];
  out[threadIdx.x] = smem[threadIdx.x ^ 1];
}
template __global__ void k<float>(float*);
template __global__ void k<double>(double*);
