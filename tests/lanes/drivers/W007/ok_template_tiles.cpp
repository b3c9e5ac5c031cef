// Tile sums of two 128-thread blocks, in tiles of 16 and of 32 lanes.
#include "driver.h"
#include LANES_FIXTURE

void drive() {
  STEP("tiles_of_32") {
    float* in = input<float>(256, [](long long i) { return static_cast<float>(i % 9); });
    float* out = alloc<float>(8);
    launch(in, out, 2, false, 0);
    record("sums", out, 8);
  }
  STEP("tiles_of_16") {
    float* in = input<float>(256, [](long long i) { return static_cast<float>(i % 5); });
    float* out = alloc<float>(16);
    launch(in, out, 2, true, 0);
    record("sums", out, 16);
  }
}
