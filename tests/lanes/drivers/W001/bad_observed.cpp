// The shapes of ok_logical_shapes.cu beside operations that read the wavefront's width: on
// 64 lanes row broadcasts, per-warp maxima, tile ranks of a vote, row counts, spread sums and
// the tails of a down tree differ from CUDA's.
#include "driver.h"
#include LANES_FIXTURE

void drive() {
  STEP("row_sums") {
    const int rows = 8, cols = 40;
    float* x = input<float>(rows * cols, [](long long i) { return static_cast<float>(i % 13) - 6.f; });
    float* out = alloc<float>(rows * 32);
    launch(row_sums, dim3(2), dim3(128), 0, x, out, cols);
    record("broadcast", out, rows * 32);
  }
  STEP("group_max") {
    float* in = input<float>(256, [](long long i) { return static_cast<float>((i * 37) % 101); });
    float* out = alloc<float>(8);
    launch(group_max, dim3(2), dim3(128), 0, in, out);
    record("max", out, 8);
  }
  STEP("tile_votes") {
    int* in = input<int>(256, [](long long i) { return static_cast<int>((i * 5) % 9) - 4; });
    int* out = alloc<int>(256);
    launch(tile_votes, dim3(2), dim3(128), 0, in, out);
    record("ranks", out, 256);
  }
  STEP("rows_of_32") {
    float* in = input<float>(256, [](long long i) { return static_cast<float>((i * 7) % 5) - 2.f; });
    int* counts = alloc<int>(8);
    launch(rows_of_32, dim3(2), dim3(32, 4), 0, in, counts);
    record("counts", counts, 8);
  }
  STEP("spread") {
    float* in = input<float>(256, [](long long i) { return static_cast<float>(i % 11); });
    float* out = alloc<float>(256);
    launch(spread, dim3(2), dim3(128), 0, in, out);
    record("sums", out, 256);
  }
  STEP("prefix_tails") {
    float* in = input<float>(256, [](long long i) { return static_cast<float>(i % 11); });
    float* out = alloc<float>(256);
    launch(prefix_tails, dim3(2), dim3(128), 0, in, out);
    record("tails", out, 256);
  }
}
