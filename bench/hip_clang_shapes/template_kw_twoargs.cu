#include <cuda_runtime.h>
struct Loader { template <int N, int M> __device__ float at(const float* p) const { return p[N + M]; } };
template <typename L, int K>
__global__ void k(L l, float* out, const float* in) {
  out[0] = l.at<K, 1>(in);
}
template __global__ void k<Loader, 2>(Loader, float*, const float*);
