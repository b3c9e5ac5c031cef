// 32-lane tiles used as logical warps, nothing hardware-wide read: the block maximum and the
// ranks are the same on 32 and 64 lanes.
#include "driver.h"
#include LANES_FIXTURE

void drive() {
  STEP("block_peak") {
    float* in = input<float>(512, [](long long i) { return static_cast<float>((i * 53) % 211) - (i == 300 ? -500.f : 0.f); });
    float* out = alloc<float>(2);
    launch(block_peak, dim3(2), dim3(256), 0, in, out);
    record("peaks", out, 2);
  }
  STEP("tile_ranks") {
    int* ranks = alloc<int>(128);
    launch(tile_ranks, dim3(1), dim3(128), 0, ranks);
    record("ranks", ranks, 128);
  }
}
