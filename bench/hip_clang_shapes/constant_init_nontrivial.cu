#include <cuda_runtime.h>
struct P { float a; __host__ __device__ P() : a(1) {} };
__constant__ P params;
__global__ void k(float* out) { out[0] = params.a; }
