#include <cuda_runtime.h>
#define HD inline __host__ __device__
HD float3 operator+(const float3& a, const float3& b) { return make_float3(a.x + b.x, a.y + b.y, a.z + b.z); }
HD float3 operator*(const float& a, const float3& b) { return make_float3(a * b.x, a * b.y, a * b.z); }
HD float3 operator*(const float3& a, const float& b) { return make_float3(a.x * b, a.y * b, a.z * b); }
__global__ void k(float3* v) { v[0] = v[1] + v[2]; v[3] = 2.f * v[1]; v[4] = v[1] * 3.f; }
