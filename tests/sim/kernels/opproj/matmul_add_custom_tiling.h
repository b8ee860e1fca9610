// Host tiling header of MatmulAddCustom: the Matmul API's TCubeTiling nested in the operator's tiling.
#ifndef MATMUL_ADD_CUSTOM_TILING_H
#define MATMUL_ADD_CUSTOM_TILING_H
#include "register/tilingdata_base.h"
#include "tiling/tiling_api.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(MatmulAddCustomTilingData)
TILING_DATA_FIELD_DEF_STRUCT(TCubeTiling, cubeTilingData);
TILING_DATA_FIELD_DEF(uint32_t, localWorkspaceBytes);
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(MatmulAddCustom, MatmulAddCustomTilingData)
}  // namespace optiling
#endif  // MATMUL_ADD_CUSTOM_TILING_H
