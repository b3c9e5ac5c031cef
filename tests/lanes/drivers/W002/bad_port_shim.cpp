// The shim's broadcast within 32-lane groups (width 32), from rank 3 of each group.
#include "driver.h"
#include LANES_FIXTURE

__global__ void broadcast(unsigned* out) { out[threadIdx.x] = kit_broadcast(threadIdx.x * 5u, 3); }

void drive() {
  STEP("kit_broadcast") {
    unsigned* out = alloc<unsigned>(128);
    launch(broadcast, dim3(1), dim3(128), 0, out);
    record("out", out, 128);
  }
}
