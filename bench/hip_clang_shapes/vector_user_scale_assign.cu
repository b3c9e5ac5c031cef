#include <cuda_runtime.h>
inline __host__ __device__ void operator*=(float2& a, float s) { a.x *= s; a.y *= s; }
__global__ void k(float2* v) { float2 a = v[0]; a *= 2.f; v[1] = a; }
