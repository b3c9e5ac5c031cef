// Block sums over 256 threads finished by "the last warp". Not run: block_sum, whose last
// steps rely on lanes running in lockstep through volatile shared memory with no warp
// operation between them (the emulator runs lanes one after another between warp
// operations, so it cannot judge that), and tail_lanes, a count no kernel of the fixture
// reads (its value does not depend on the warp, its meaning does).
#include "driver.h"
#include LANES_FIXTURE

static float* data() {
  return input<float>(512, [](long long i) { return static_cast<float>(i % 17); });
}

void drive() {
  const size_t shared = 256 * sizeof(float);
  STEP("block_sum_groups") {
    float* out = alloc<float>(2);
    launch(block_sum_groups, dim3(2), dim3(256), shared, data(), out);
    record("sums", out, 2);
  }
  STEP("block_sum_tiles") {
    float* out = alloc<float>(2);
    launch(block_sum_tiles, dim3(2), dim3(256), shared, data(), out);
    record("sums", out, 2);
  }
}
