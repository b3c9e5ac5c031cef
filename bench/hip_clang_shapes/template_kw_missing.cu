#include <cuda_runtime.h>
struct Loader { template <int N> __device__ float at(const float* p) const { return p[N]; } };
template <typename L>
__global__ void k(L l, float* out, const float* in) {
  out[0] = l.at<1>(in);
}
template __global__ void k<Loader>(Loader, float*, const float*);
