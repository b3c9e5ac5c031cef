// Sign bits OR-ed over groups of four lanes: the HIP arm and the CUDA arm agree.
#include "driver.h"
#include LANES_FIXTURE

void drive() {
  STEP("pack_signs") {
    unsigned* out = alloc<unsigned>(128);
    launch(pack_signs, dim3(1), dim3(128), 0, out, 0x10u);
    record("out", out, 128);
  }
}
