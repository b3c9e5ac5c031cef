#include <cuda_runtime.h>
struct Sample { int id; float weight; };
// Pinned and pitched allocations through a typed pointer: CUDA's C++ API has template
// overloads that take `T**`; HIP's counterparts had them only for some calls.
void allocate(Sample** pinned, float** mapped, float** rows, size_t* pitch, float** device_view) {
  cudaHostAlloc(pinned, 4 * sizeof(Sample), cudaHostAllocDefault);
  cudaHostAlloc(mapped, 64, cudaHostAllocMapped);
  cudaMallocPitch(rows, pitch, 256, 16);
  cudaHostGetDevicePointer(device_view, *mapped, 0);
}
