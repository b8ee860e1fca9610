// op_kernel/mse_loss_custom.cpp: loss = mean((predict - label)^2) over all elements. Each core sums its
// tiles' squared differences with the level-0 reductions in Counter mode (SetMaskCount + SetVectorMask:
// the whole tile, the repeats follow from the count), publishes its partial sum in the workspace, and after
// SyncAll core 0 adds the partial sums and writes the mean.
#include "kernel_operator.h"
using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;

class KernelMseLoss {
public:
    __aicore__ inline KernelMseLoss() {}
    __aicore__ inline void Init(GM_ADDR predict, GM_ADDR label, GM_ADDR loss, GM_ADDR workspace, const MseLossCustomTilingData& t)
    {
        totalLength = t.totalLength;
        blockLength = t.blockLength;
        tileLength = t.tileLength;
        ASSERT(tileLength != 0, "tileLength %u must be positive", tileLength);
        tileNum = blockLength / tileLength;
        pGm.SetGlobalBuffer((__gm__ DTYPE_PREDICT*)predict + blockLength * GetBlockIdx(), blockLength);
        lGm.SetGlobalBuffer((__gm__ DTYPE_LABEL*)label + blockLength * GetBlockIdx(), blockLength);
        lossGm.SetGlobalBuffer((__gm__ DTYPE_LOSS*)loss, 1);
        partGm.SetGlobalBuffer((__gm__ float*)workspace, GetBlockNum() * 8);
        pipe.InitBuffer(inQueueP, BUFFER_NUM, tileLength * sizeof(float));
        pipe.InitBuffer(inQueueL, BUFFER_NUM, tileLength * sizeof(float));
        pipe.InitBuffer(diffBuf, tileLength * sizeof(float));
        pipe.InitBuffer(sumBuf, 256 * sizeof(float));
        pipe.InitBuffer(outQueue, 1, 8 * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        float acc = 0.0f;
        for (uint32_t i = 0; i < tileNum; ++i) {
            CopyIn(i);
            acc += TileSum();
        }
        // this core's partial sum -> workspace slot (one 32-B block per core)
        LocalTensor<float> out = outQueue.AllocTensor<float>();
        Duplicate(out, acc, 8);
        outQueue.EnQue(out);
        out = outQueue.DeQue<float>();
        DataCopy(partGm[GetBlockIdx() * 8], out, 8);
        outQueue.FreeTensor(out);
        SyncAll();
        if (GetBlockIdx() == 0) {
            float total = 0.0f;
            for (int64_t b = 0; b < GetBlockNum(); ++b) total += partGm.GetValue(b * 8);
            LocalTensor<float> res = outQueue.AllocTensor<float>();
            Duplicate(res, total / static_cast<float>(totalLength), 8);
            outQueue.EnQue(res);
            res = outQueue.DeQue<float>();
            DataCopyPad(lossGm, res, DataCopyExtParams{1, sizeof(float), 0, 0, 0});  // the one float of the scalar output
            outQueue.FreeTensor(res);
        }
    }

private:
    __aicore__ inline void CopyIn(uint32_t i)
    {
        LocalTensor<float> p = inQueueP.AllocTensor<float>();
        LocalTensor<float> l = inQueueL.AllocTensor<float>();
        DataCopy(p, pGm[i * tileLength], tileLength);
        DataCopy(l, lGm[i * tileLength], tileLength);
        inQueueP.EnQue(p);
        inQueueL.EnQue(l);
    }
    __aicore__ inline float TileSum()
    {
        LocalTensor<float> p = inQueueP.DeQue<float>();
        LocalTensor<float> l = inQueueL.DeQue<float>();
        LocalTensor<float> d = diffBuf.Get<float>();
        LocalTensor<float> s = sumBuf.Get<float>();
        Sub(d, p, l, tileLength);
        Mul(d, d, d, tileLength);
        // one sum per 64-float repeat, then the sum of those: Counter mode over the whole tile
        SetMaskCount();
        SetVectorMask<float, MaskMode::COUNTER>(0, tileLength);
        WholeReduceSum<float, false>(s, d, MASK_PLACEHOLDER, 1, 1, 1, 8);
        SetVectorMask<float, MaskMode::COUNTER>(0, tileLength / 64);
        WholeReduceSum<float, false>(s[128], s, MASK_PLACEHOLDER, 1, 1, 1, 8);
        SetMaskNorm();
        ResetMask();
        const float v = s.GetValue(128);
        inQueueP.FreeTensor(p);
        inQueueL.FreeTensor(l);
        return v;
    }

private:
    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueP, inQueueL;
    TQue<QuePosition::VECOUT, 1> outQueue;
    TBuf<QuePosition::VECCALC> diffBuf, sumBuf;
    GlobalTensor<DTYPE_PREDICT> pGm;
    GlobalTensor<DTYPE_LABEL> lGm;
    GlobalTensor<DTYPE_LOSS> lossGm;
    GlobalTensor<float> partGm;
    uint32_t totalLength = 0, blockLength = 0, tileLength = 0, tileNum = 0;
};

extern "C" __global__ __aicore__ void mse_loss_custom(GM_ADDR predict, GM_ADDR label, GM_ADDR loss, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tiling_data, tiling);
    KernelMseLoss op;
    op.Init(predict, label, loss, workspace, tiling_data);
    op.Process();
}
