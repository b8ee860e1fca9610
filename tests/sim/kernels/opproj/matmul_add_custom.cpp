// op_kernel/matmul_add_custom.cpp: c = a @ b + d with float a, b (fp32 on the cube of A2) through the
// Matmul high-level API in a MIX kernel: every AIV drives a Matmul over its singleCoreM x singleCoreN
// block, fetches each baseM x baseN result into a VECIN tensor, adds the matching tile of d and writes
// it to c with strided DataCopy.
#include "kernel_operator.h"
#include "lib/matmul_intf.h"

using namespace AscendC;
using namespace matmul;

using AType = MatmulType<TPosition::GM, CubeFormat::ND, float>;
using BType = MatmulType<TPosition::GM, CubeFormat::ND, float>;
using CType = MatmulType<TPosition::VECIN, CubeFormat::ND, float>;

class KernelMatmulAdd {
public:
    __aicore__ inline KernelMatmulAdd() {}
    __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR d, GM_ADDR c, const MatmulAddCustomTilingData& t)
    {
        tiling = t.cubeTilingData;
        const int32_t nBlocks = (tiling.N + tiling.singleCoreN - 1) / tiling.singleCoreN;
        const int32_t idx = static_cast<int32_t>(GetBlockIdx());
        mBlock = idx / nBlocks;
        nBlock = idx % nBlocks;
        aGm.SetGlobalBuffer((__gm__ float*)a, tiling.M * tiling.Ka);
        bGm.SetGlobalBuffer((__gm__ float*)b, tiling.Kb * tiling.N);
        dGm.SetGlobalBuffer((__gm__ DTYPE_D*)d, tiling.M * tiling.N);
        cGm.SetGlobalBuffer((__gm__ DTYPE_C*)c, tiling.M * tiling.N);
        const uint32_t tile = tiling.baseM * tiling.baseN * sizeof(float);
        pipe.InitBuffer(mmQueue, 1, tile);
        pipe.InitBuffer(dQueue, 1, tile);
        pipe.InitBuffer(outQueue, 1, tile);
        pipe.InitBuffer(localWorkspace, t.localWorkspaceBytes);
    }
    template <class MM>
    __aicore__ inline void Process(MM& mm)
    {
        if (mBlock * tiling.singleCoreM >= tiling.M) return;  // no block for this core
        const int32_t rowsHere = tiling.M - mBlock * tiling.singleCoreM;
        const int32_t colsHere = tiling.N - nBlock * tiling.singleCoreN;
        const int32_t tailM = rowsHere < tiling.singleCoreM ? rowsHere : tiling.singleCoreM;
        const int32_t tailN = colsHere < tiling.singleCoreN ? colsHere : tiling.singleCoreN;
        mm.SetLocalWorkspace(localWorkspace.Get<uint8_t>());
        mm.SetTail(tailM, tailN);
        mm.SetTensorA(aGm[mBlock * tiling.singleCoreM * tiling.Ka]);
        mm.SetTensorB(bGm[nBlock * tiling.singleCoreN]);
        const int32_t mIter = (tailM + tiling.baseM - 1) / tiling.baseM;
        int32_t k = 0;
        while (mm.template Iterate<true>()) {
            LocalTensor<float> acc = mmQueue.AllocTensor<float>();
            mm.template GetTensorC<true>(acc, false, true);  // row i of the base block at i * baseN
            mmQueue.EnQue(acc);
            const int32_t row0 = mBlock * tiling.singleCoreM + (k % mIter) * tiling.baseM;
            const int32_t col0 = nBlock * tiling.singleCoreN + (k / mIter) * tiling.baseN;
            AddTile(row0, col0);
            ++k;
        }
        mm.End();
    }

private:
    __aicore__ inline DataCopyParams TileParams() const
    {
        // baseM rows of baseN floats; GM rows are N floats apart, UB rows baseN
        return DataCopyParams{static_cast<uint16_t>(tiling.baseM), static_cast<uint16_t>(tiling.baseN * sizeof(float) / 32), 0,
                              static_cast<uint16_t>((tiling.N - tiling.baseN) * sizeof(float) / 32)};
    }
    __aicore__ inline void AddTile(int32_t row0, int32_t col0)
    {
        const uint32_t off = static_cast<uint32_t>(row0 * tiling.N + col0);
        LocalTensor<DTYPE_D> dLocal = dQueue.AllocTensor<DTYPE_D>();
        DataCopyParams in = TileParams();
        in.srcStride = in.dstStride;
        in.dstStride = 0;
        DataCopy(dLocal, dGm[off], in);
        dQueue.EnQue(dLocal);
        dLocal = dQueue.DeQue<DTYPE_D>();
        LocalTensor<float> acc = mmQueue.DeQue<float>();
        LocalTensor<DTYPE_C> out = outQueue.AllocTensor<DTYPE_C>();
        Add(out, acc, dLocal, tiling.baseM * tiling.baseN);
        outQueue.EnQue(out);
        mmQueue.FreeTensor(acc);
        dQueue.FreeTensor(dLocal);
        out = outQueue.DeQue<DTYPE_C>();
        DataCopy(cGm[off], out, TileParams());
        outQueue.FreeTensor(out);
    }

    TPipe pipe;
    TQue<TPosition::VECIN, 1> mmQueue, dQueue;
    TQue<TPosition::VECOUT, 1> outQueue;
    TBuf<TPosition::VECCALC> localWorkspace;
    GlobalTensor<float> aGm, bGm;
    GlobalTensor<DTYPE_D> dGm;
    GlobalTensor<DTYPE_C> cGm;
    TCubeTiling tiling;
    int32_t mBlock = 0, nBlock = 0;

public:
    TPipe* GetPipe() { return &pipe; }
};

extern "C" __global__ __aicore__ void matmul_add_custom(GM_ADDR a, GM_ADDR b, GM_ADDR d, GM_ADDR c, GM_ADDR workspace, GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    GET_TILING_DATA(tilingData, tiling);
    SetSysWorkspace(workspace);
    if (GetSysWorkSpacePtr() == nullptr) {
        return;
    }
    KernelMatmulAdd op;
    op.Init(a, b, d, c, tilingData);
    Matmul<AType, BType, CType> mm;
    REGIST_MATMUL_OBJ(op.GetPipe(), GetSysWorkSpacePtr(), mm, &tilingData.cubeTilingData);
    op.Process(mm);
}
