// Two blocks of 128 threads, with tiles of 16 and of 32 lanes: each lane's value less its
// tile's first, and the first value of each 32-lane group.
#include "driver.h"
#include LANES_FIXTURE

template <int kTile>
static void centre_and_record() {
  const float* values = input<float>(256, [](long long i) { return static_cast<float>((i * 5) % 17 - 8); });
  float* out = alloc<float>(256);
  float* firsts = alloc<float>(8);
  launch(centre_on_first<kTile>, dim3(2), dim3(128), 0, values, out, firsts);
  record("out", out, 256);
  record("firsts", firsts, 8);
}

void drive() {
  STEP("tiles_of_16") { centre_and_record<16>(); }
  STEP("tiles_of_32") { centre_and_record<32>(); }
}
