#include <cuda_runtime.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(int* out) {
  auto t = cg::tiled_partition<16>(cg::this_thread_block());
  out[0] = t.meta_group_rank() + t.meta_group_size();
}
