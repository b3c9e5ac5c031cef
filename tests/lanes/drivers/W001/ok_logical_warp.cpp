// Two blocks of 128 threads: per-32 prefix sums and their group totals.
#include "driver.h"
#include LANES_FIXTURE

void drive() {
  const int threads = 128, blocks = 2, n = threads * blocks;
  int* in = input<int>(n, [](long long i) { return (i * 7) % 11 - 3; });
  int* out = alloc<int>(n);
  int* totals = alloc<int>(n / 32);
  launch(group_prefix_sum, dim3(blocks), dim3(threads), 0, in, out, totals);
  record("out", out, n);
  record("group_totals", totals, n / 32);
}
