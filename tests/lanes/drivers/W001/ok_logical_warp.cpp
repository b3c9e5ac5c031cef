// Two blocks of 128 threads: prefix sums within groups of 32 and the groups' totals.
#include "driver.h"
#include LANES_FIXTURE

void drive() {
  STEP("group_prefix_sum") {
    const int threads = 128, blocks = 2, n = threads * blocks;
    int* in = input<int>(n, [](long long i) { return (i * 7) % 11 - 3; });
    int* out = alloc<int>(n);
    int* totals = alloc<int>(n / 32);
    launch(group_prefix_sum, dim3(blocks), dim3(threads), 0, in, out, totals);
    record("out", out, n);
    record("group_totals", totals, n / 32);
  }
}
