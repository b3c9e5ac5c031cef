#include <cuda_runtime.h>
inline __device__ void operator+=(float4& a, float4 b) { a.x += b.x; a.y += b.y; a.z += b.z; a.w += b.w; }
__global__ void k(float4* v) { float4 a = v[0]; a += v[1]; v[2] = a; }
