#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(unsigned* out, const float* in) {
  __shared__ float s[64];
  __shared__ cg::block_tile_memory<64> scratch;
  cg::grid_group g = cg::this_grid();
  cg::thread_block b = cg::this_thread_block();
  auto t = cg::tiled_partition<16>(b);
  out[0] = g.num_blocks() + b.num_threads() + t.num_threads() + cg::this_thread_block().num_threads();
  cg::memcpy_async(b, s, in, 256);
  cg::wait(b);
  cooperative_groups::experimental::block_tile_memory<64>* p = nullptr;
  cg::invoke_one(b, [&] { out[1] = 1; });
}
