// A hand-written MIX kernel for `ascend-sim run` ("kernel_type": "mix"): C = A @ B, each AIV computes
// singleCoreM rows with IterateAll (the tiling is the plain TCubeTiling, passed by value).
#include "kernel_operator.h"
#include "lib/matmul_intf.h"
#include "kernel_tiling/kernel_tiling.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void mix_matmul(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR workspace,
                                                 AscendC::tiling::TCubeTiling tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    SetSysWorkspace(workspace);
    const int64_t m0 = GetBlockIdx() * tiling.singleCoreM;
    if (GetBlockIdx() >= tiling.usedCoreNum || m0 >= tiling.M) {
        return;
    }
    TPipe pipe;
    matmul::Matmul<MatmulType<TPosition::GM, CubeFormat::ND, half>, MatmulType<TPosition::GM, CubeFormat::ND, half>,
                   MatmulType<TPosition::GM, CubeFormat::ND, float>> mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &tiling);
    GlobalTensor<half> aGm, bGm;
    GlobalTensor<float> cGm;
    aGm.SetGlobalBuffer((__gm__ half*)a, uint64_t(tiling.M) * tiling.Ka);
    bGm.SetGlobalBuffer((__gm__ half*)b, uint64_t(tiling.Kb) * tiling.N);
    cGm.SetGlobalBuffer((__gm__ float*)c, uint64_t(tiling.M) * tiling.N);
    const int rows = tiling.M - m0 < tiling.singleCoreM ? int(tiling.M - m0) : tiling.singleCoreM;
    mm.SetTail(rows, tiling.N, tiling.Ka);
    mm.SetTensorA(aGm[m0 * tiling.Ka]);
    mm.SetTensorB(bGm);
    mm.IterateAll(cGm[m0 * tiling.N]);
    mm.End();
}
