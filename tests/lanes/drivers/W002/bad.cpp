// Full-warp `_sync` calls, each used the way a block uses a warp's result: lane 0 of each
// warp adds its warp's sum, votes are OR-ed over the block, a broadcast of a value that is
// the same across each 64 threads.
#include "driver.h"
#include LANES_FIXTURE

__global__ void block_sum(const float* in, float* total) {
  const float s = warp_sum(in[threadIdx.x]);
  if (threadIdx.x % warpSize == 0) atomicAdd(total, s);
}
__global__ void block_any(const float* in, int* any) { atomicOr(any, any_positive(in[threadIdx.x]) ? 1 : 0); }
__global__ void synced(int* out) {
  sync_all();
  out[threadIdx.x] = threadIdx.x;
}
__global__ void broadcast(int* out) { out[threadIdx.x] = bcast(threadIdx.x / 64 * 10 + 7); }

void drive() {
  STEP("warp_sum") {
    float* in = input<float>(128, [](long long i) { return static_cast<float>(i % 9); });
    float* total = alloc<float>(1);
    launch(block_sum, dim3(1), dim3(128), 0, in, total);
    record("total", total, 1);
  }
  STEP("any_positive") {
    float* in = input<float>(128, [](long long i) { return i == 70 ? 2.f : -1.f; });
    int* any = alloc<int>(1);
    launch(block_any, dim3(1), dim3(128), 0, in, any);
    record("any", any, 1);
  }
  STEP("sync_all") {
    int* out = alloc<int>(128);
    launch(synced, dim3(1), dim3(128), 0, out);
    record("out", out, 128);
  }
  STEP("bcast") {
    int* out = alloc<int>(128);
    launch(broadcast, dim3(1), dim3(128), 0, out);
    record("out", out, 128);
  }
}
