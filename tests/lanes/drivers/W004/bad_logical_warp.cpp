// A width-32 loop under a wavefront-wide offset, read from "lane 0" (`& 31`): the block's
// total of what the lanes return. Not run: mixed_widths, whose width-32 xor inside
// `lane < 16` reads lanes outside the branch (undefined on CUDA already).
#include "driver.h"
#include LANES_FIXTURE

__global__ void total(const float* in, float* out) { atomicAdd(out, wave_loop_half_width(in[threadIdx.x])); }

void drive() {
  STEP("wave_loop_half_width") {
    float* in = input<float>(128, [](long long i) { return static_cast<float>(i % 5); });
    float* out = alloc<float>(1);
    launch(total, dim3(1), dim3(128), 0, in, out);
    record("total", out, 1);
  }
}
