// <cooperative_groups.h> for the lane emulator (cooperative groups live in warp_emulator.h).
#pragma once
#include "../warp_emulator.h"
