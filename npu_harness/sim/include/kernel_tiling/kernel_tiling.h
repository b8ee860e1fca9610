// kernel_tiling/kernel_tiling.h - emulator stand-in for the real header declaring
// AscendC::tiling::TCubeTiling (ref §3).
#pragma once

#include "ascend_sim/cube_tiling.h"
