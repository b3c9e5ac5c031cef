// Eight rows of 32 values, each scaled by its own largest value, in one block of 32 x 8;
// then eight rows of 32 counts, each offset by its first count.
#include "driver.h"
#include LANES_FIXTURE

void drive() {
  STEP("row_normalise") {
    float* data = input<float>(8 * 32, [](long long i) { return static_cast<float>((i * 7) % 29 + 1 + i / 32); });
    launch(row_normalise, dim3(1), dim3(32, 8), 0, data, 32);
    record("data", data, 8 * 32);
  }
  STEP("row_offsets") {
    int* counts = input<int>(8 * 32, [](long long i) { return static_cast<int>((i * 5) % 17 + i / 32); });
    int* offsets = input<int>(8 * 32, [](long long) { return 0; });
    launch(row_offsets, dim3(1), dim3(32, 8), 0, counts, offsets);
    record("offsets", offsets, 8 * 32);
  }
}
