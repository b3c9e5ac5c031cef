// <cuda_runtime.h> for the lane emulator.
#pragma once
#include "../warp_emulator.h"
#include "host_runtime.h"
