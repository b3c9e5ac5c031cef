// <cooperative_groups/reduce.h> for the lane emulator (cg::reduce lives in warp_emulator.h).
#pragma once
#include "../../warp_emulator.h"
