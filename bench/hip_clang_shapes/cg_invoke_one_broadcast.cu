#include <cuda_runtime.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
// One lane of a tile reserves output slots, all lanes get the offset.
__global__ void k(unsigned* counter, unsigned* out) {
  auto tile = cg::tiled_partition<8>(cg::this_thread_block());
  unsigned base = cg::invoke_one_broadcast(tile, [&]() { return atomicAdd(counter, 8u); });
  out[base + tile.thread_rank()] = tile.thread_rank();
}
