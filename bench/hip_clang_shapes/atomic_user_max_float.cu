#include <cuda_runtime.h>
__device__ static float atomicMax(float* address, float val) {
  int* p = (int*)address; int old = *p, assumed;
  do { assumed = old; old = atomicCAS(p, assumed, __float_as_int(fmaxf(val, __int_as_float(assumed)))); } while (assumed != old);
  return __int_as_float(old);
}
__global__ void k(float* m, const float* in) { atomicMax(m, in[threadIdx.x]); }
