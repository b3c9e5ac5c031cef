// The host's scans of 32- and 16-lane segments, as scan_all runs them.
#include "driver.h"
#include LANES_FIXTURE

void drive() {
  STEP("scan_all") {
    int* data = input<int>(256, [](long long i) { return static_cast<int>(i % 4); });
    scan_all(data, 2, 128);
#if defined(__CUDACC__)
    lanes_driver::check(cudaDeviceSynchronize(), "kernel");
#endif
    record("data", data, 256);
  }
}
