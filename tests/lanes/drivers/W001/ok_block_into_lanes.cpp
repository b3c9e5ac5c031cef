// Blocks of 256 and 64 threads reduce into their first lane, and into their first 4 lanes
// (each the sum of the values whose thread index leaves that remainder by 4), through the
// helper as a caller out of the fixture's view would use it.
#include "driver.h"
#include LANES_FIXTURE

__global__ void block_sums(const float* in, float* out, int lanes) {
  __shared__ float scratch[256];
  const int tid = threadIdx.x;
  const float total = reduce_block_into_lanes(scratch, in[blockIdx.x * blockDim.x + tid], lanes);
  if (tid < lanes) out[blockIdx.x * lanes + tid] = total;
}

static float* values(int n) {
  return input<float>(n, [](long long i) { return static_cast<float>((i * 7) % 13 - 5); });
}

void drive() {
  STEP("one_lane_256") {
    float* out = alloc<float>(2);
    launch(block_sums, dim3(2), dim3(256), 0, values(512), out, 1);
    record("sums", out, 2);
  }
  STEP("four_lanes_256") {
    float* out = alloc<float>(8);
    launch(block_sums, dim3(2), dim3(256), 0, values(512), out, 4);
    record("sums", out, 8);
  }
  STEP("one_lane_64") {
    float* out = alloc<float>(3);
    launch(block_sums, dim3(3), dim3(64), 0, values(192), out, 1);
    record("sums", out, 3);
  }
}
