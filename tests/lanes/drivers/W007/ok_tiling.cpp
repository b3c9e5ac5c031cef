// A tile copy whose "warps" are tiling arithmetic, and 32-lane logical warps summing partials.
#include "driver.h"
#include LANES_FIXTURE

void drive() {
  STEP("copy_tile") {
    const int rows = 128;
    float4* in = input<float4>(rows * 8, [](long long i) { return float4{float(i), float(i + 1), float(i + 2), float(i + 3)}; });
    float4* out = alloc<float4>(rows * 8);
    launch(copy_tile<TileTraits<128, 64>>, dim3(2), dim3(128), 0, in, out, rows);
    float* flat = reinterpret_cast<float*>(out);
    record("out", flat, rows * 8 * 4);
  }
  STEP("group_sum") {
    float* partial = input<float>(32, [](long long i) { return static_cast<float>(i + 1); });
    float* out = alloc<float>(2);
    launch(group_sum<256>, dim3(2), dim3(64), 0, partial, out);
    record("out", out, 2);
  }
}
