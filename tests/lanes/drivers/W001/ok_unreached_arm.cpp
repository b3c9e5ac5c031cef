// The total of 256 small integers, two blocks of 128 threads.
#include "driver.h"
#include LANES_FIXTURE

void drive() {
  STEP("block_total") {
    float* in = input<float>(256, [](long long i) { return static_cast<float>(i % 7); });
    float* total = alloc<float>(1);
    launch(block_total, dim3(2), dim3(128), 0, in, total);
    record("total", total, 1);
  }
}
