#include <cuda_runtime.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(unsigned long long* out, const int* in) {
  auto t = cg::tiled_partition<16>(cg::this_thread_block());
  out[0] = t.match_any(in[t.thread_rank()]);
}
