// Logical warps of 32 lanes run at 32 and 64 lanes: row sums, group maxima, a tile scan and
// rows of a dim3(32, 4) block, row maxima over tiles of 32, block sums
// read at each 32 lanes' root, a tree finished by a tile of 32; every result must be the same.
#include "driver.h"
#include LANES_FIXTURE

void drive() {
  STEP("row_sums") {
    const int rows = 8, cols = 40;
    float* x = input<float>(rows * cols, [](long long i) { return static_cast<float>(i % 13) - 6.f; });
    float* sums = alloc<float>(rows);
    launch(row_sums, dim3(2), dim3(128), 0, x, sums, cols);
    record("sums", sums, rows);
  }
  STEP("group_max") {
    float* in = input<float>(256, [](long long i) { return static_cast<float>((i * 37) % 101); });
    float* out = alloc<float>(8);
    launch(group_max, dim3(2), dim3(128), 0, in, out);
    record("max", out, 8);
  }
  STEP("tile_scan") {
    int* in = input<int>(256, [](long long i) { return static_cast<int>(i % 7) - 3; });
    int* out = alloc<int>(256);
    int* totals = alloc<int>(8);
    launch(tile_scan, dim3(2), dim3(128), 0, in, out, totals);
    record("scan", out, 256);
    record("totals", totals, 8);
  }
  STEP("rows_of_32") {
    float* in = input<float>(256, [](long long i) { return static_cast<float>(i % 5); });
    float* out = alloc<float>(256);
    launch(rows_of_32, dim3(2), dim3(32, 4), 0, in, out);
    record("rows", out, 256);
  }
  STEP("tile_row_max") {
    float* in = input<float>(256, [](long long i) { return static_cast<float>((i * 53) % 97); });
    for (int width : {32, 64, 128}) {
      float* out = alloc<float>(256);
      launch(tile_row_max, dim3(2), dim3(128), 0, in, out, width);
      record("row_max", out, 256);
    }
  }
  STEP("block_sum_roots") {
    float* in = input<float>(256, [](long long i) { return static_cast<float>(i % 9); });
    float* out = alloc<float>(2);
    launch(block_sum_roots, dim3(2), dim3(128), 0, in, out);
    record("sums", out, 2);
  }
  STEP("tile_tail_sum") {
    float* in = input<float>(512, [](long long i) { return static_cast<float>(i % 17); });
    float* out = alloc<float>(2);
    launch(tile_tail_sum, dim3(2), dim3(256), 0, in, out);
    record("sums", out, 2);
  }
}
