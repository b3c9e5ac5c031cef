#include <cuda_runtime.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(int* out) {
  auto b = cg::this_thread_block();
  cg::invoke_one(b, [&] { out[0] = 1; });
}
