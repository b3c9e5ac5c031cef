#include <cuda_runtime.h>
#include <algorithm>
int host_fn(int a, unsigned b) { return min(a, b); }
