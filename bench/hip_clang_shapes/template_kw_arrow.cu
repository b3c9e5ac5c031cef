#include <cuda_runtime.h>
struct Loader { template <int N> __device__ float at(const float* p) const { return p[N]; } };
template <typename L>
__global__ void k(const L* l, float* out, const float* in) {
  out[0] = l->at<1>(in);
}
template __global__ void k<Loader>(const Loader*, float*, const float*);
