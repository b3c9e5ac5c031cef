#include <cuda_runtime.h>
inline __host__ __device__ void operator-=(float2& a, const float2& b) { a.x -= b.x; a.y -= b.y; }
__global__ void k(float2* v) { float2 a = v[0]; a -= v[1]; v[2] = a; }
