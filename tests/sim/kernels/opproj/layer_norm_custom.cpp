// op_kernel/layer_norm_custom.cpp: y = (x - mean) / sqrt(var + eps) * gamma + beta over the last axis.
// gamma and beta are loaded once per core into TBufs (synchronised by hand: a TBuf has no queue events);
// each row's statistics go to consecutive float slots of a TBuf (ReduceSum destinations that are only
// element-aligned, as the API allows) and are read back with GetValue.
#include "kernel_operator.h"
using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;

class KernelLayerNorm {
public:
    __aicore__ inline KernelLayerNorm() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR gamma, GM_ADDR beta, GM_ADDR y, const LayerNormCustomTilingData& t)
    {
        colNum = t.colNum;
        epsilon = t.epsilon;
        const uint32_t first = t.rowsPerCore * GetBlockIdx();
        rows = first >= t.rowNum ? 0 : (t.rowNum - first < t.rowsPerCore ? t.rowNum - first : t.rowsPerCore);
        xGm.SetGlobalBuffer((__gm__ DTYPE_X*)x + first * colNum, rows * colNum);
        yGm.SetGlobalBuffer((__gm__ DTYPE_Y*)y + first * colNum, rows * colNum);
        gammaGm.SetGlobalBuffer((__gm__ DTYPE_GAMMA*)gamma, colNum);
        betaGm.SetGlobalBuffer((__gm__ DTYPE_BETA*)beta, colNum);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, colNum * sizeof(float));
        pipe.InitBuffer(outQueueY, BUFFER_NUM, colNum * sizeof(float));
        pipe.InitBuffer(gammaBuf, colNum * sizeof(float));
        pipe.InitBuffer(betaBuf, colNum * sizeof(float));
        pipe.InitBuffer(workBuf, colNum * sizeof(float));
        pipe.InitBuffer(statBuf, 64 * sizeof(float));
        pipe.InitBuffer(reduceTmpBuf, 64 * sizeof(float));  // ReduceSum scratch: colNum / 64 per-repeat sums
    }
    __aicore__ inline void Process()
    {
        LocalTensor<float> g = gammaBuf.Get<float>();
        LocalTensor<float> b = betaBuf.Get<float>();
        DataCopy(g, gammaGm, colNum);
        DataCopy(b, betaGm, colNum);
        event_t ev = static_cast<event_t>(pipe.FetchEventID(HardEvent::MTE2_V));
        SetFlag<HardEvent::MTE2_V>(ev);
        WaitFlag<HardEvent::MTE2_V>(ev);
        for (uint32_t r = 0; r < rows; ++r) {
            CopyIn(r);
            Compute(r);
            CopyOut(r);
        }
    }

private:
    __aicore__ inline void CopyIn(uint32_t r)
    {
        LocalTensor<float> xLocal = inQueueX.AllocTensor<float>();
        DataCopy(xLocal, xGm[r * colNum], colNum);
        inQueueX.EnQue(xLocal);
    }
    __aicore__ inline void Compute(uint32_t r)
    {
        LocalTensor<float> xLocal = inQueueX.DeQue<float>();
        LocalTensor<float> yLocal = outQueueY.AllocTensor<float>();
        LocalTensor<float> work = workBuf.Get<float>();
        LocalTensor<float> stat = statBuf.Get<float>();
        LocalTensor<float> reduceTmp = reduceTmpBuf.Get<float>();
        const float inv = 1.0f / static_cast<float>(colNum);
        const uint32_t slot = (r % 16) * 2;  // two floats per row: mean, then variance
        ReduceSum(stat[slot], xLocal, reduceTmp, colNum);
        const float mean = stat.GetValue(slot) * inv;
        Adds(yLocal, xLocal, -mean, colNum);
        Mul(work, yLocal, yLocal, colNum);
        ReduceSum(stat[slot + 1], work, reduceTmp, colNum);
        const float var = stat.GetValue(slot + 1) * inv;
        Duplicate(work, var + epsilon, 8);  // sqrt on the vector unit
        Sqrt(work, work, 8);
        const float rstd = 1.0f / work.GetValue(0);
        Muls(yLocal, yLocal, rstd, colNum);
        Mul(yLocal, yLocal, gammaBuf.Get<float>(), colNum);
        Add(yLocal, yLocal, betaBuf.Get<float>(), colNum);
        outQueueY.EnQue<float>(yLocal);
        inQueueX.FreeTensor(xLocal);
    }
    __aicore__ inline void CopyOut(uint32_t r)
    {
        LocalTensor<float> yLocal = outQueueY.DeQue<float>();
        DataCopy(yGm[r * colNum], yLocal, colNum);
        outQueueY.FreeTensor(yLocal);
    }

private:
    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueY;
    TBuf<QuePosition::VECCALC> gammaBuf, betaBuf, workBuf, statBuf, reduceTmpBuf;
    GlobalTensor<DTYPE_X> xGm;
    GlobalTensor<DTYPE_GAMMA> gammaGm;
    GlobalTensor<DTYPE_BETA> betaGm;
    GlobalTensor<DTYPE_Y> yGm;
    uint32_t colNum = 0, rows = 0;
    float epsilon = 0.0f;
};

extern "C" __global__ __aicore__ void layer_norm_custom(GM_ADDR x, GM_ADDR gamma, GM_ADDR beta, GM_ADDR y, GM_ADDR workspace,
                                                        GM_ADDR tiling)
{
    GET_TILING_DATA(tiling_data, tiling);
    KernelLayerNorm op;
    op.Init(x, gamma, beta, y, tiling_data);
    op.Process();
}
