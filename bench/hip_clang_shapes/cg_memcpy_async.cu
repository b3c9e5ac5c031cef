#include <cuda_runtime.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
#if defined(__HIP__)
#else
#include <cooperative_groups/memcpy_async.h>
#endif
__global__ void k(float* out, const float* in) {
  __shared__ float s[64];
  auto b = cg::this_thread_block();
  cg::memcpy_async(b, s, in, sizeof(float) * 64);
  cg::wait(b);
  out[b.thread_rank()] = s[b.thread_rank()];
}
