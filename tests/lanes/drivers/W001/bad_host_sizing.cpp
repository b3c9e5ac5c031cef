// Row sums through the host function that sizes the launch: on 64 lanes each wavefront's
// upper 32 lanes broadcast the other row's lane 0, so every second row's sum differs.
#include "driver.h"
#include LANES_FIXTURE

void drive() {
  STEP("sum_rows") {
    const int rows = 16, cols = 40;
    float* x = input<float>(rows * cols, [](long long i) { return static_cast<float>(i % 13) - 6.f; });
    float* out = alloc<float>(rows);
    sum_rows(x, out, rows, cols);
    record("sums", out, rows);
  }
}
