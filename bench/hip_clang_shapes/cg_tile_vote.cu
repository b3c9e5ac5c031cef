#include <cuda_runtime.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(int* out, const float* in) {
  auto t = cg::tiled_partition<16>(cg::this_thread_block());
  out[0] = t.any(in[t.thread_rank()] > 0) + t.all(in[0] > 0) + __popcll(t.ballot(in[0] > 0));
}
