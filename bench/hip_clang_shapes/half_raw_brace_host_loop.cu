#include <cuda_runtime.h>
#include <cuda_fp16.h>
// Host code of a .cu file walking every half bit pattern through braces.
float sum_all_halves() {
  float s = 0;
  for (unsigned i = 0; i < 65536u; ++i) s += float(__half(__half_raw{(unsigned short) i}));
  return s;
}
