// Host tiling header of ReduceSumCustom (sum over the last axis).
#ifndef REDUCE_SUM_CUSTOM_TILING_H
#define REDUCE_SUM_CUSTOM_TILING_H
#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(ReduceSumCustomTilingData)
TILING_DATA_FIELD_DEF(uint32_t, rowNum);
TILING_DATA_FIELD_DEF(uint32_t, colNum);
TILING_DATA_FIELD_DEF(uint32_t, rowsPerCore);
TILING_DATA_FIELD_DEF_ARR(uint32_t, 2, reserved);
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(ReduceSumCustom, ReduceSumCustomTilingData)
}  // namespace optiling
#endif  // REDUCE_SUM_CUSTOM_TILING_H
