// Array bounds counted in 32-lane warps, read under run-time warp counts (inputs as in
// W007/bad.cpp: lane 0 of every other 32 lanes holds a zero).
#include "driver.h"
#include LANES_FIXTURE

void drive() {
  STEP("block_count") {
    int* in = input<int>(256, [](long long i) { return i % 64 == 0 ? static_cast<int>(i / 64 + 1) : 0; });
    int* out = alloc<int>(1);
    launch(block_count, dim3(1), dim3(256), 0, in, out);
    record("total", out, 1);
  }
  STEP("bitset") {
    int* in = input<int>(64, [](long long i) { return static_cast<int>(i * 5); });
    unsigned* words = alloc<unsigned>(64);
    launch(bitset, dim3(1), dim3(64), 0, in, words, 1024, 256);
    record("words", words, 64);
  }
}
