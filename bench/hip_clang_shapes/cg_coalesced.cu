#include <cuda_runtime.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(int* out) {
  cg::coalesced_group a = cg::coalesced_threads();
  out[a.thread_rank()] = a.size();
  a.sync();
}
