#include <cuda_runtime.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(unsigned* out) {
  cg::grid_group g = cg::this_grid();
  cg::thread_block b = cg::this_thread_block();
  auto t = cg::tiled_partition<16>(b);
  out[0] = g.num_blocks() + g.block_rank() + g.block_index().x + g.dim_blocks().x + g.num_threads();
  out[1] = b.num_threads() + b.dim_threads().x + t.num_threads();
}
