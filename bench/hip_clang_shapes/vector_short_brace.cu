#include <cuda_runtime.h>
__global__ void k(float3* v, float2 xy) { float3 a = {0.5f * xy.x, 0.5f * xy.y}; v[0] = a; }
