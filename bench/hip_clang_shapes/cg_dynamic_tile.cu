#include <cuda_runtime.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(int* out) {
  cg::thread_group t = cg::tiled_partition(cg::this_thread_block(), 16);
  out[t.thread_rank()] = t.size();
  t.sync();
}
