// A 32 x 32 transpose and group sums over a per-platform width: 32 and 64 lanes agree.
#include "driver.h"
#include LANES_FIXTURE

void drive() {
  STEP("transpose_square") {
    const int n = 40;
    float* in = input<float>(n * n, [](long long i) { return static_cast<float>(i % 17); });
    float* out = alloc<float>(n * n);
    transpose_square(in, out, n);
    record("out", out, n * n);
  }
  STEP("sum_groups") {
    const int rows = 4, cols = 300;
    float* x = input<float>(rows * cols, [](long long i) { return static_cast<float>(i % 7); });
    float* out = alloc<float>(rows);
    sum_groups(x, out, rows, cols);
    record("sums", out, rows);
  }
}
