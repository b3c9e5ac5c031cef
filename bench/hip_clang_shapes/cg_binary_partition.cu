#include <cuda_runtime.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(int* out) {
  auto t = cg::tiled_partition<32>(cg::this_thread_block());
  auto p = cg::binary_partition(t, threadIdx.x & 1);
  out[0] = p.size();
}
