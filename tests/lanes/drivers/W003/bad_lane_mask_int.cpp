// A compaction of one warp per block (the kernel counts a block's kept values as its warp's),
// so each block is one whole warp: 32 threads on CUDA, 64 on a wavefront (a 32-thread block
// would leave lanes 32-63 idle and never reach the mask's upper half). Recorded: the kept
// values as a set, and how many the blocks count in all.
#include "driver.h"
#include LANES_FIXTURE

#include <algorithm>

void drive() {
  STEP("compact_positive") {
    const int n = 256, blocks = n / kWarpLanes;
    int* in = input<int>(n, [](long long i) { return (i * 7) % 13 - 5; });
    int* out = alloc<int>(n);
    int* count = alloc<int>(blocks);
    launch(compact_positive, dim3(blocks), dim3(kWarpLanes), 0, in, out, count);
    std::sort(out, out + n);
    int total[1] = {0};
    for (int b = 0; b < blocks; ++b) total[0] += count[b];
    record("kept", out, n);
    record("count", total, 1);
  }
}
