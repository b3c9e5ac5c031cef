// Block sums over 256 threads finished by "the last warp" with shuffles sized by warpSize.
#include "driver.h"
#include LANES_FIXTURE

static float* data() {
  return input<float>(512, [](long long i) { return static_cast<float>(i % 17); });
}

void drive() {
  const size_t shared = 256 * sizeof(float);
  STEP("block_sum_groups") {
    float* out = alloc<float>(2);
    launch(block_sum_groups, dim3(2), dim3(256), shared, data(), out);
    record("sums", out, 2);
  }
  STEP("block_sum_tiles") {
    float* out = alloc<float>(2);
    launch(block_sum_tiles, dim3(2), dim3(256), shared, data(), out);
    record("sums", out, 2);
  }
}
