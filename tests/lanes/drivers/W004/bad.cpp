// Width-32 shuffles as a block uses a warp's result: a block sum from lane 0 of each warp,
// a warp-aggregated counter whose base lane 0 broadcasts, a block scan from warp scans and
// the warps' totals. Not run: next_lane and wrapped (a neighbour within the warp, whose last
// lane is the warp's by definition) and both_sides (pairs of lanes: the same on any warp).
#include "driver.h"
#include LANES_FIXTURE

__global__ void block_sum(const float* in, float* total) {
  const float s = warp_sum(in[threadIdx.x]);
  if (threadIdx.x % warpSize == 0) atomicAdd(total, s);
}

// Each warp reserves one slot per lane with a single atomic; every lane learns the base.
__global__ void reserve(int* counter, int* slot) {
  float base = 0.f;
  if (threadIdx.x % warpSize == 0) base = static_cast<float>(atomicAdd(counter, static_cast<int>(warpSize)));
  base = broadcast_first(base);
  slot[threadIdx.x] = static_cast<int>(base) + static_cast<int>(threadIdx.x % warpSize);
}

__global__ void block_scan(const float* in, float* out) {
  __shared__ float totals[64];
  const int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
  const float v = warp_scan(in[threadIdx.x], lane);
  if (lane == warpSize - 1) totals[warp] = v;
  __syncthreads();
  float offset = 0.f;
  for (int w = 0; w < warp; ++w) offset += totals[w];
  out[threadIdx.x] = v + offset;
}

static float* data() {
  return input<float>(128, [](long long i) { return static_cast<float>(i % 7); });
}

void drive() {
  STEP("warp_sum") {
    float* total = alloc<float>(1);
    launch(block_sum, dim3(1), dim3(128), 0, data(), total);
    record("total", total, 1);
  }
  STEP("broadcast_first") {
    int* counter = alloc<int>(1);
    int* slot = alloc<int>(128);
    launch(reserve, dim3(1), dim3(128), 0, counter, slot);
    // Every thread got its own slot: slots are a permutation of 0..127 (order aside).
    int* seen = alloc<int>(128);
    for (int i = 0; i < 128; ++i)
      if (slot[i] >= 0 && slot[i] < 128) seen[slot[i]] += 1;
    record("times_each_slot_taken", seen, 128);
  }
  STEP("warp_scan") {
    float* out = alloc<float>(128);
    launch(block_scan, dim3(1), dim3(128), 0, data(), out);
    record("scan", out, 128);
  }
}
