// The maximum of each 256-value block, finished by the first 32 threads.
#include "driver.h"
#include LANES_FIXTURE

void drive() {
  STEP("block_max") {
    float* in = input<float>(512, [](long long i) { return static_cast<float>((i * 37) % 101); });
    float* out = alloc<float>(2);
    launch(block_max, dim3(2), dim3(256), 0, in, out);
    record("maxima", out, 2);
  }
}
