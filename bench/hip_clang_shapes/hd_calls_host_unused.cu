#include <cuda_runtime.h>
int host_only(int x) { return x + 1; }
__host__ __device__ int both(int x) { return host_only(x); }
int main() { return both(1); }
