// A block maximum from warp maxima, and a warp-aggregated counter whose base is broadcast
// from lane 0 by `vote_lane`.
#include "driver.h"
#include LANES_FIXTURE

__global__ void block_max(const float* in, float* out) {
  const float m = warp_max(in[threadIdx.x]);
  out[threadIdx.x] = threadIdx.x % warpSize == 0 ? m : -1e30f;
}

__global__ void reserve(int* counter, int* slot) {
  int base = 0;
  if (threadIdx.x % warpSize == 0) base = atomicAdd(counter, static_cast<int>(warpSize));
  base = vote_lane(base, 0);
  slot[threadIdx.x] = base + static_cast<int>(threadIdx.x % warpSize);
}

void drive() {
  STEP("warp_max") {
    float* in = input<float>(128, [](long long i) { return static_cast<float>((i * 37) % 128); });
    float* out = alloc<float>(128);
    launch(block_max, dim3(1), dim3(128), 0, in, out);
    float m = -1e30f;
    for (int i = 0; i < 128; ++i) m = out[i] > m ? out[i] : m;
    record("max", &m, 1);
  }
  STEP("vote_lane") {
    int* counter = alloc<int>(1);
    int* slot = alloc<int>(128);
    launch(reserve, dim3(1), dim3(128), 0, counter, slot);
    int* seen = alloc<int>(128);
    for (int i = 0; i < 128; ++i)
      if (slot[i] >= 0 && slot[i] < 128) seen[slot[i]] += 1;
    record("times_each_slot_taken", seen, 128);
  }
}
