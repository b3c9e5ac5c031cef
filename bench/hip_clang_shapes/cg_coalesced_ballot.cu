#include <cuda_runtime.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
// The active threads vote on a comparison against a pivot and count the winners.
__global__ void k(unsigned* counts, const unsigned* data, unsigned pivot) {
  cg::coalesced_group active = cg::coalesced_threads();
  unsigned above = active.ballot(data[threadIdx.x] > pivot);
  if (active.thread_rank() == 0) counts[blockIdx.x] = __popc(above);
}
