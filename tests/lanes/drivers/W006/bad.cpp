// 32-thread tiles taken for "the warp": one result per warp index from rank 0 of each tile,
// and a tile maximum read by lane 0 of each warp (`warp_max`). Not run: dynamic_tiles (a 64-thread tile,
// which CUDA has no warp for), rows and parented (they show how tile types are read: a
// constant, a parameter, a template argument).
#include "driver.h"
#include LANES_FIXTURE

static float* data() {
  return input<float>(128, [](long long i) { return static_cast<float>((i * 37) % 101); });
}

void drive() {
  STEP("row_sum") {
    float* out = alloc<float>(4);
    launch(row_sum, dim3(1), dim3(128), 0, data(), out);
    float total = out[0] + out[1] + out[2] + out[3];
    record("sum_of_warp_results", &total, 1);
  }
  STEP("tile_max") {
    float* in = input<float>(128, [](long long i) { return i == 40 ? 1000.f : static_cast<float>(i % 17); });
    float* out = alloc<float>(4);
    launch(warp_max, dim3(1), dim3(128), 0, in, out);
    float m = out[0];
    for (int i = 1; i < 4; ++i) m = out[i] > m ? out[i] : m;
    record("block_max", &m, 1);
  }
}
