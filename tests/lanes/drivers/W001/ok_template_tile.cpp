// Two blocks of 128 threads, with tiles of 16 and of 32 lanes: each lane's value less its
// tile's first, and the first value of each 32-lane group.
#include "driver.h"
#include LANES_FIXTURE

static const float* values() {
  return input<float>(256, [](long long i) { return static_cast<float>((i * 5) % 17 - 8); });
}

void drive() {
  STEP("tiles_of_16") {
    float* out = alloc<float>(256);
    float* firsts = alloc<float>(8);
    launch(centre_on_first<16>, dim3(2), dim3(128), 0, values(), out, firsts);
    record("out", out, 256);
    record("firsts", firsts, 8);
  }
  STEP("tiles_of_32") {
    float* out = alloc<float>(256);
    float* firsts = alloc<float>(8);
    launch(centre_on_first<32>, dim3(2), dim3(128), 0, values(), out, firsts);
    record("out", out, 256);
    record("firsts", firsts, 8);
  }
}
