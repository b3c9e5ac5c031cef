// The runtime API calls fixtures make around their kernels, answered for the emulated device.
#pragma once
#include "../warp_emulator.h"

typedef void* hipStream_t;
typedef void* cudaStream_t;
typedef int hipError_t;
enum hipDeviceAttribute_t { hipDeviceAttributeWarpSize, hipDeviceAttributeMaxThreadsPerBlock };
struct hipDeviceProp_t {
  int warpSize = LANES_WARP_SIZE;
  int maxThreadsPerBlock = 1024;
};
inline hipError_t hipDeviceGetAttribute(int* value, hipDeviceAttribute_t attribute, int) {
  *value = attribute == hipDeviceAttributeWarpSize ? LANES_WARP_SIZE : 1024;
  return 0;
}
inline hipError_t hipGetDeviceProperties(hipDeviceProp_t* prop, int) {
  *prop = hipDeviceProp_t();
  return 0;
}
