#include <cuda_runtime.h>
struct Policy { template <int N> struct Tile { static constexpr int size = N; }; };
template <typename P>
__global__ void k(int* out) {
  out[0] = P::Tile<4>::size;
}
template __global__ void k<Policy>(int*);
