// Eight rows of 32 values, scaled by a factor per row and then by their own largest value,
// in one block of 32 x 8.
#include "driver.h"
#include LANES_FIXTURE

void drive() {
  STEP("scale_and_normalise") {
    float* data = input<float>(8 * 32, [](long long i) { return static_cast<float>((i * 7) % 29 + 1 + i / 32); });
    float* factors = input<float>(8, [](long long i) { return static_cast<float>(i + 2); });
    launch(scale_rows, dim3(1), dim3(32, 8), 0, data, factors, 32);
    launch(row_normalise, dim3(1), dim3(32, 8), 0, data, 32);
    record("data", data, 8 * 32);
  }
}
