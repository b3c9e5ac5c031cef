// Block sums of 64 values, finished by the block's first 32 threads (block_max, whose mask
// is right already, is the linter's negative: nothing to run it against).
#include "driver.h"
#include LANES_FIXTURE

void drive() {
  STEP("block_sum") {
    float* in = input<float>(128, [](long long i) { return static_cast<float>(i % 11); });
    float* out = alloc<float>(2);
    launch(block_sum, dim3(2), dim3(64), 0, in, out);
    record("sums", out, 2);
  }
}
