#include <cuda_runtime.h>
template <typename T> __device__ void swp(T& a, T& b) { T t = a; a = b; b = t; }
__global__ void k(int2* v) { swp(v[0].x, v[0].y); }
