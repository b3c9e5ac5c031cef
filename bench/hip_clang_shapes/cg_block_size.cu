#include <cuda_runtime.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(int* out) {
  auto b = cg::this_thread_block();
  out[0] = b.size() + b.group_dim().x + b.group_index().x + b.thread_index().x;
}
