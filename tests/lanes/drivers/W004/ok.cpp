// Sub-warp segments and full-width sums as a block uses them. Not run: upper_half and
// lane_32 (a lane 32 that exists on 64-lane wavefronts only), the scans (a scan per warp
// by definition), default_width (a neighbour within the warp), the CUDA-only arm and the
// suppressed line.
#include "driver.h"
#include LANES_FIXTURE

__global__ void sums(const float* in, float* segments, float* total) {
  const float v = in[threadIdx.x];
  const float s16 = segment16_sum(v);
  if (threadIdx.x % 16 == 0) segments[threadIdx.x / 16] = s16;
  const float s = full_sum(v);
  if (threadIdx.x % warpSize == 0) atomicAdd(total, s);
}

void drive() {
  STEP("sums") {
    float* in = input<float>(128, [](long long i) { return static_cast<float>(i % 11); });
    float* segments = alloc<float>(8);
    float* total = alloc<float>(1);
    launch(sums, dim3(1), dim3(128), 0, in, segments, total);
    record("segments", segments, 8);
    record("total", total, 1);
  }
}
