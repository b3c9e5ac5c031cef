// Two blocks of 128 threads: each 32-lane group's sum of float2 values, through the wrappers.
#include "driver.h"
#include LANES_FIXTURE

void drive() {
  STEP("group_sums") {
    const int threads = 128, blocks = 2, n = threads * blocks, groups = n / 32;
    float2* in = alloc<float2>(n);
    for (int i = 0; i < n; ++i) {
      in[i].x = float((i * 7) % 11 - 3);
      in[i].y = float((i * 5) % 13);
    }
    float2* out = alloc<float2>(groups);
    launch(group_sums, dim3(blocks), dim3(threads), 0, in, out);
    float* xs = alloc<float>(groups);
    float* ys = alloc<float>(groups);
    for (int g = 0; g < groups; ++g) {
      xs[g] = out[g].x;
      ys[g] = out[g].y;
    }
    record("sum_x", xs, groups);
    record("sum_y", ys, groups);
  }
}
