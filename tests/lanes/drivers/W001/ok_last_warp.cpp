// Block sums with barriers and sized by the wavefront, a header load, tiles per row. Not
// run: block_sum, whose last steps rely on lanes running in lockstep through volatile
// shared memory with no warp operation between them (the emulator runs lanes one after
// another between warp operations, so it cannot judge that), and tail_lanes, counts that
// no kernel of the fixture reads.
#include "driver.h"
#include LANES_FIXTURE

static float* data() {
  return input<float>(512, [](long long i) { return static_cast<float>(i % 19); });
}

void drive() {
  STEP("tree_with_barriers") {
    float* out = alloc<float>(2);
    launch(tree_with_barriers, dim3(2), dim3(256), 0, data(), out);
    record("sums", out, 2);
  }
  STEP("wave_sized") {
    float* out = alloc<float>(2);
    launch(wave_sized, dim3(2), dim3(256), 256 * sizeof(float), data(), out);
    record("sums", out, 2);
  }
  STEP("load_header") {
    int* words = input<int>(128, [](long long i) { return static_cast<int>(i * 3); });
    int* header = alloc<int>(128);
    launch(load_header, dim3(1), dim3(128), 0, words, header);
    record("header", header, 128);
  }
  STEP("tiles_per_row") {
    int* widths = input<int>(4, [](long long i) { return static_cast<int>(i * 45 + 7); });
    int* tiles = alloc<int>(4);
    launch(tiles_per_row, dim3(4), dim3(1), 0, widths, tiles);
    record("tiles", tiles, 4);
  }
}
