// Sign bits OR-ed over groups of four lanes: the HIP arm and the CUDA arm agree.
#include "driver.h"
#include LANES_FIXTURE

__global__ void pack(unsigned* out) { pack_signs(out, 1u << (threadIdx.x % 32)); }

void drive() {
  STEP("pack_signs") {
    unsigned* out = alloc<unsigned>(128);
    launch(pack, dim3(1), dim3(128), 0, out);
    record("out", out, 128);
  }
}
