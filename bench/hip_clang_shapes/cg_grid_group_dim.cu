#include <cuda_runtime.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(unsigned* out) {
  cg::grid_group g = cg::this_grid();
  out[0] = g.group_dim().x;
}
