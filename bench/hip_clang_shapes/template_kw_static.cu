#include <cuda_runtime.h>
struct Loader { template <int N> __device__ static float at(const float* p) { return p[N]; } };
template <typename L>
__global__ void k(float* out, const float* in) {
  out[0] = L::at<1>(in);
}
template __global__ void k<Loader>(float*, const float*);
