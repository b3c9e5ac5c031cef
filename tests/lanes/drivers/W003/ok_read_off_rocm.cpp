// Pairs of lanes OR-ed: the HIP arm and the CUDA arm (a 16-lane mask) agree.
#include "driver.h"
#include LANES_FIXTURE

void drive() {
  STEP("coalesce") {
    unsigned* out = alloc<unsigned>(128);
    launch(coalesce, dim3(1), dim3(128), 0, out, 0u);
    record("out", out, 128);
  }
}
