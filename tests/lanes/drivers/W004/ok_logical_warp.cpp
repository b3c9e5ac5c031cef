// Dot products of 32-lane logical warps: 8 rows of 96 columns, 4 rows per 128-thread block.
#include "driver.h"
#include LANES_FIXTURE

void drive() {
  STEP("row_dot_32") {
    const int cols = 96;
    float* a = input<float>(8 * cols, [](long long i) { return static_cast<float>(i % 9) - 4.f; });
    float* b = input<float>(cols, [](long long i) { return static_cast<float>(i % 5); });
    float* out = alloc<float>(8);
    launch(row_dot_32, dim3(2), dim3(128), 0, a, b, out, cols);
    record("out", out, 8);
  }
}
