// Prefix sums of the first 32 values of each 128-thread block.
#include "driver.h"
#include LANES_FIXTURE

void drive() {
  STEP("first_prefix") {
    float* in = input<float>(256, [](long long i) { return static_cast<float>(i % 13); });
    float* out = alloc<float>(64);
    launch(first_prefix, dim3(2), dim3(128), 0, in, out);
    record("prefix", out, 64);
  }
}
