#include <cuda_runtime.h>
union Packed { int2 pair; unsigned long long bits; };
__device__ void f(unsigned long long* p) {
  Packed old, assumed;
  old.bits = *p;
  assumed = old;
  *p = assumed.bits;
}
