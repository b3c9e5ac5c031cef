#include <cuda_runtime.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(int* out) {
  __shared__ cg::block_tile_memory<64> scratch;
  cg::thread_block b = cg::this_thread_block(scratch);
  out[0] = b.thread_rank();
}
