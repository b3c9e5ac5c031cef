// What a fixture driver uses: buffers, launches and recorded outputs, the same on the lane
// emulator (g++, LANES_WARP_SIZE 32 or 64) and on an NVIDIA GPU (nvcc).
//
// A driver is tests/lanes/drivers/<CODE>/<case>.cpp for fixtures/<CODE>/<case>.<ext>, and
// for its fixed output <case>.fixed.<ext> too. It includes this header, then the fixture
// (`#include LANES_FIXTURE`), and defines `void drive()` as a list of steps, each filling
// inputs, launching kernels and `record`ing every output whose value the test compares:
//   STEP("block_sum") { ...; record("sums", sums, n); }
// A run executes the step named by LANES_STEP (all steps without it), so a step that is
// reported (deadlock, undefined read) leaves the others' results; LANES_LIST=1 prints the
// steps (`@step <name>`) and runs none. Each record prints one line:
//   @record <name> <type> <count> <values...>
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#else
#include "warp_emulator.h"
#include "emulated_include/host_runtime.h"
#endif

namespace lanes_driver {

// The warp's width as a constant, for a driver's tile of one whole warp.
#if defined(__CUDACC__)
constexpr int kWarpLanes = 32;
#else
constexpr int kWarpLanes = LANES_WARP_SIZE;
#endif

#if defined(__CUDACC__)
inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "cuda: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(7);
  }
}
#endif

// `n` elements, zeroed, that host and device both read.
template <typename T>
T* alloc(size_t n) {
  T* p = nullptr;
#if defined(__CUDACC__)
  check(cudaMallocManaged(&p, n * sizeof(T)), "cudaMallocManaged");
#else
  p = static_cast<T*>(std::malloc(n * sizeof(T)));
#endif
  std::memset(static_cast<void*>(p), 0, n * sizeof(T));
  return p;
}

// `n` elements with value `f(i)` each.
template <typename T, typename F>
T* input(size_t n, F f) {
  T* p = alloc<T>(n);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<T>(f(static_cast<long long>(i)));
  return p;
}

template <typename... KArgs, typename... Args>
void launch(void (*kernel)(KArgs...), dim3 grid, dim3 block, size_t shared_bytes, Args... args) {
#if defined(__CUDACC__)
  kernel<<<grid, block, shared_bytes>>>(args...);
  check(cudaGetLastError(), "launch");
  check(cudaDeviceSynchronize(), "kernel");
#else
  ::lanes::launch(kernel, grid, block, shared_bytes, args...);
#endif
}

// Whether the step `name` runs now (see LANES_STEP, LANES_LIST above).
inline bool step(const char* name) {
  if (std::getenv("LANES_LIST")) {
    std::printf("@step %s\n", name);
    return false;
  }
  const char* only = std::getenv("LANES_STEP");
  return only == nullptr || std::strcmp(only, name) == 0;
}

template <typename T>
void record(const char* name, const T* p, size_t n) {
#if defined(__CUDACC__)
  check(cudaDeviceSynchronize(), "kernel");
#endif
  if (std::is_floating_point<T>::value) {
    std::printf("@record %s f %zu", name, n);
    for (size_t i = 0; i < n; ++i) std::printf(" %.9g", static_cast<double>(p[i]));
  } else if (std::is_signed<T>::value) {
    std::printf("@record %s i %zu", name, n);
    for (size_t i = 0; i < n; ++i) std::printf(" %lld", static_cast<long long>(p[i]));
  } else {
    std::printf("@record %s u %zu", name, n);
    for (size_t i = 0; i < n; ++i) std::printf(" %llu", static_cast<unsigned long long>(p[i]));
  }
  std::printf("\n");
}

}  // namespace lanes_driver

#define STEP(name) if (::lanes_driver::step(name))

using lanes_driver::alloc;
using lanes_driver::kWarpLanes;
using lanes_driver::input;
using lanes_driver::launch;
using lanes_driver::record;

void drive();

int main() {
  drive();
  std::fflush(stdout);
  return 0;
}
