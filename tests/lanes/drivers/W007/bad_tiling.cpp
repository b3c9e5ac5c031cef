// One partial sum per warp, then kSlots (a count of 32-lane warps) read. Not run: the
// launches of kernels the fixture only declares (per_warp, row_max).
#include "driver.h"
#include LANES_FIXTURE

void drive() {
  STEP("block_sum") {
    float* in = input<float>(512, [](long long i) { return static_cast<float>(i % 9); });
    float* out = alloc<float>(2);
    launch(block_sum<ReduceTraits<256>>, dim3(2), dim3(256), 0, in, out);
    record("sums", out, 2);
  }
}
