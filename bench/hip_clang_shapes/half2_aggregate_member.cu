#include <cuda_runtime.h>
#include <cuda_fp16.h>
struct Pair { __half2 v; int n; };
__global__ void k(Pair* out, const __half* a) {
  Pair p = {{a[0], a[1]}, 2};
  out[0] = p;
}
