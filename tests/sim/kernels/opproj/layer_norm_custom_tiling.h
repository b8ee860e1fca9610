// Host tiling header of LayerNormCustom.
#ifndef LAYER_NORM_CUSTOM_TILING_H
#define LAYER_NORM_CUSTOM_TILING_H
#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(LayerNormCustomTilingData)
TILING_DATA_FIELD_DEF(uint32_t, rowNum);        // rows of x
TILING_DATA_FIELD_DEF(uint32_t, colNum);        // normalised length (a multiple of 64 floats)
TILING_DATA_FIELD_DEF(uint32_t, rowsPerCore);
TILING_DATA_FIELD_DEF(float, epsilon);
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(LayerNormCustom, LayerNormCustomTilingData)
}  // namespace optiling
#endif  // LAYER_NORM_CUSTOM_TILING_H
