#include <cuda_runtime.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(int* out) {
  cg::thread_block b = cg::this_thread_block();
  cg::thread_block_tile<32> w = cg::tiled_partition<32>(b);
  cg::thread_block_tile<8> q = cg::tiled_partition<8>(w);
  out[0] = q.thread_rank();
}
