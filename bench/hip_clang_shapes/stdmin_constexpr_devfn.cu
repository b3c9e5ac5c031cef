#include <cuda_runtime.h>
#include <algorithm>
__device__ constexpr int tile_rows(int a, int b) { return std::max(a, b) / 2; }
__global__ void k(int* out) { out[0] = tile_rows(out[1], out[2]); }
