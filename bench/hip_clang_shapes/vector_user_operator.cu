#include <cuda_runtime.h>
inline __host__ __device__ float2 operator+(float2 a, float2 b) { return make_float2(a.x + b.x, a.y + b.y); }
inline __host__ __device__ float2 operator*(float2 a, float s) { return make_float2(a.x * s, a.y * s); }
__global__ void k(float2* v) { v[0] = v[1] + v[2] * 2.f; }
