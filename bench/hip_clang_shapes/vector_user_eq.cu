#include <cuda_runtime.h>
inline __host__ __device__ bool operator==(int2 a, int2 b) { return a.x == b.x && a.y == b.y; }
__global__ void k(int2* v, int* out) { out[0] = v[0] == v[1]; }
