#include <cuda_runtime.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
#if defined(__HIP__)
#else
#include <cooperative_groups/reduce.h>
#endif
__global__ void k(float* out, const float* in) {
  auto t = cg::tiled_partition<16>(cg::this_thread_block());
  out[0] = cg::reduce(t, in[t.thread_rank()], cg::plus<float>());
}
