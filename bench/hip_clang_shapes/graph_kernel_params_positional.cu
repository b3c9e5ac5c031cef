#include <cuda_runtime.h>
__global__ void kern(float* x) { x[0] = 1; }
void f(float* x) { void* args[] = {&x}; dim3 b(1), t(64);
  cudaKernelNodeParams p = { (void*) kern, b, t, 0, args, nullptr }; (void)p; }
