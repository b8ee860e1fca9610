// tiling/tiling_api.h - emulator stand-in for the host tiling API header: only the type names a tiling
// header needs (optiling::TCubeTiling). The host tiling functions (MultiCoreMatmulTiling, ...) are not
// emulated: the launch file gives the tiling values.
#pragma once
#ifndef ASCEND_SIM_TILING_TILING_API_H
#define ASCEND_SIM_TILING_TILING_API_H

#include "register/tilingdata_base.h"

#endif  // ASCEND_SIM_TILING_TILING_API_H
