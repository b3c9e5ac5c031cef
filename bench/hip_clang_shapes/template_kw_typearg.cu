#include <cuda_runtime.h>
struct Loader { template <typename T> __device__ T at(const float* p) const { return T(p[0]); } };
template <typename L>
__global__ void k(L l, float* out, const float* in) {
  out[0] = l.at<float>(in);
}
template __global__ void k<Loader>(Loader, float*, const float*);
