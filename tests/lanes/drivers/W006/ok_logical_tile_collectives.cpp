// 32-thread tiles finishing a block reduction, and tile reductions with a shared slot per
// tile: each is the same block result on 32 and 64 lanes.
#include "driver.h"
#include LANES_FIXTURE

static float* values(long long n) {
  return input<float>(n, [](long long i) { return static_cast<float>((i * 29) % 97) - 40.f; });
}

void drive() {
  STEP("tree_then_tile") {
    float* out = alloc<float>(2);
    launch(tree_then_tile, dim3(2), dim3(256), 256 * sizeof(float), values(512), out);
    record("sums", out, 2);
  }
  STEP("tile_slots") {
    float* out = alloc<float>(2);
    launch(tile_slots, dim3(2), dim3(192), 0, values(384), out);
    record("totals", out, 2);
  }
}
