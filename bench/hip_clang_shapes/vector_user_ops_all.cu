#include <cuda_runtime.h>
inline __host__ __device__ float2 operator-(float2 a) { return make_float2(-a.x, -a.y); }
__global__ void k(float2* v) { v[0] = -v[1]; }
