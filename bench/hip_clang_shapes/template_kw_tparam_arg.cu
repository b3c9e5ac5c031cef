#include <cuda_runtime.h>
struct Loader { template <int N> __device__ float at(const float* p) const { return p[N]; } };
template <typename L, int N>
__global__ void k(L l, float* out, const float* in) {
  out[0] = l.at<N>(in) + 1.0f;
}
template __global__ void k<Loader, 3>(Loader, float*, const float*);
