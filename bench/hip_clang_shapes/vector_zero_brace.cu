#include <cuda_runtime.h>
__global__ void k(int4* v) { int4 a = {0}; v[0] = a; }
