// Host tiling header of MseLossCustom.
#ifndef MSE_LOSS_CUSTOM_TILING_H
#define MSE_LOSS_CUSTOM_TILING_H
#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(MseLossCustomTilingData)
TILING_DATA_FIELD_DEF(uint32_t, totalLength);
TILING_DATA_FIELD_DEF(uint32_t, blockLength);  // elements per core
TILING_DATA_FIELD_DEF(uint32_t, tileLength);   // elements per tile (a multiple of 64)
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(MseLossCustom, MseLossCustomTilingData)
}  // namespace optiling
#endif  // MSE_LOSS_CUSTOM_TILING_H
