// Two blocks of 128 threads, each group of 32 values transformed on its own.
#include "driver.h"
#include LANES_FIXTURE

void drive() {
  STEP("hadamard32") {
    const int threads = 128, blocks = 2, n = threads * blocks;
    int* in = input<int>(n, [](long long i) { return static_cast<int>((i * 5) % 13) - 6; });
    int* out = alloc<int>(n);
    launch(hadamard32, dim3(blocks), dim3(threads), 0, in, out);
    record("out", out, n);
  }
}
