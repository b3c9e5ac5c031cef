#include <cuda_runtime.h>

__global__ void k(float3* v, float x) { float3 a{x}; v[0] = a; }
