#include <cuda_runtime.h>
__global__ auto k(int* out) -> void { out[0] = 1; }
