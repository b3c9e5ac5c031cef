// <hip/hip_runtime.h> for the lane emulator: the device side is warp_emulator.h; the host
// side holds what fixtures call around their kernels.
#pragma once
#include "../../warp_emulator.h"
#include "../host_runtime.h"
