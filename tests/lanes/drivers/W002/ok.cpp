// The 64-bit and run-time masks as a block uses them. Not run: the CUDA-only and ROCm-only
// arms (one of them is compiled per build) and `suppressed`, a hazard the code owner
// silenced.
#include "driver.h"
#include LANES_FIXTURE

__global__ void use(const float* in, float* total, unsigned long long* active_votes, int* ones) {
  const float v = in[threadIdx.x];
  const float s = warp_sum(v);
  if (threadIdx.x % warpSize == 0) atomicAdd(total, s);
  const unsigned long long m = active(v);
  if (threadIdx.x % warpSize == 0) atomicAdd(active_votes, static_cast<unsigned long long>(__popcll(m)));
  atomicAdd(ones, all_ones_int());
}

void drive() {
  STEP("masks") {
    float* in = input<float>(128, [](long long i) { return static_cast<float>(i % 5) - 2.f; });
    float* total = alloc<float>(1);
    auto* votes = alloc<unsigned long long>(1);
    int* ones = alloc<int>(1);
    launch(use, dim3(1), dim3(128), 0, in, total, votes, ones);
    record("total", total, 1);
    record("positive_votes", votes, 1);
    record("ones", ones, 1);
  }
}
