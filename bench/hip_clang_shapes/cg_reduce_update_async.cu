#include <cuda_runtime.h>
#include <cooperative_groups.h>
#if !defined(__HIP_PLATFORM_AMD__)
#include <cooperative_groups/reduce.h>
#include <cuda/atomic>
#endif
namespace cg = cooperative_groups;
// A tile's sum added to a counter in one call (the shape of a hash-set cardinality sketch).
__global__ void k(float* total, const float* in) {
  auto tile = cg::tiled_partition<32>(cg::this_thread_block());
  cuda::atomic_ref<float, cuda::thread_scope_device> sum(*total);
  cg::reduce_update_async(tile, sum, in[threadIdx.x], cg::plus<float>());
}
