#include <cuda_runtime.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(int* out) {
  auto t = cg::tiled_partition<32>(cg::this_thread_block());
  auto p = cg::labeled_partition(t, threadIdx.x & 3);
  out[0] = p.size();
}
