// The block sum on both widths: 64 lanes take the barrier arm, 32 lanes the shuffle tail.
#include "driver.h"
#include LANES_FIXTURE

void drive() {
  STEP("block_sum") {
    float* in = input<float>(512, [](long long i) { return static_cast<float>(i % 19); });
    float* out = alloc<float>(2);
    launch(block_sum, dim3(2), dim3(256), 0, in, out);
    record("sums", out, 2);
  }
}
