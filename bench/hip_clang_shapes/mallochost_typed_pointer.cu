#include <cuda_runtime.h>
struct Lane { int a; float b; };
struct D { Lane* lanes_; float* costs_; void alloc(int n) { cudaMallocHost(&lanes_, sizeof(Lane) * n); cudaMallocHost((void**)&costs_, 4 * n); } };
void f(D& d) { d.alloc(3); }
