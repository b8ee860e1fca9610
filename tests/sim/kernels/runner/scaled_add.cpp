// Hand-written AscendC kernel (not emitted by ascend-dsl) for the standalone runner:
// z = x + alpha * y, TPipe/TQue double-buffered, tail tile via DataCopyPad, tiling by value.
#include "kernel_operator.h"
#include "scaled_add_tiling.h"

using namespace AscendC;

class KernelScaledAdd {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, const ScaledAddTiling& t) {
        const uint32_t per = (t.totalLength + GetBlockNum() - 1) / GetBlockNum();
        const uint32_t start = per * GetBlockIdx();
        len_ = start < t.totalLength ? (t.totalLength - start < per ? t.totalLength - start : per) : 0;
        tile_ = t.tileLength;
        alpha_ = t.alpha;
        xGm.SetGlobalBuffer((__gm__ float*)x + start, len_);
        yGm.SetGlobalBuffer((__gm__ float*)y + start, len_);
        zGm.SetGlobalBuffer((__gm__ float*)z + start, len_);
        pipe.InitBuffer(inX, 2, tile_ * sizeof(float));
        pipe.InitBuffer(inY, 2, tile_ * sizeof(float));
        pipe.InitBuffer(outZ, 2, tile_ * sizeof(float));
    }
    __aicore__ inline void Process() {
        for (uint32_t off = 0; off < len_; off += tile_) {
            const uint32_t n = len_ - off < tile_ ? len_ - off : tile_;
            LocalTensor<float> x = inX.AllocTensor<float>();
            LocalTensor<float> y = inY.AllocTensor<float>();
            DataCopyPad(x, xGm[off], DataCopyExtParams{1, n * 4, 0, 0, 0}, DataCopyPadExtParams<float>{false, 0, 0, 0});
            DataCopyPad(y, yGm[off], DataCopyExtParams{1, n * 4, 0, 0, 0}, DataCopyPadExtParams<float>{false, 0, 0, 0});
            inX.EnQue(x);
            inY.EnQue(y);
            x = inX.DeQue<float>();
            y = inY.DeQue<float>();
            LocalTensor<float> z = outZ.AllocTensor<float>();
            Muls(z, y, alpha_, n);
            Add(z, z, x, n);
            outZ.EnQue(z);
            inX.FreeTensor(x);
            inY.FreeTensor(y);
            z = outZ.DeQue<float>();
            DataCopyPad(zGm[off], z, DataCopyExtParams{1, n * 4, 0, 0, 0});
            outZ.FreeTensor(z);
        }
    }

private:
    TPipe pipe;
    TQue<TPosition::VECIN, 1> inX, inY;
    TQue<TPosition::VECOUT, 1> outZ;
    GlobalTensor<float> xGm, yGm, zGm;
    uint32_t len_ = 0, tile_ = 0;
    float alpha_ = 0;
};

extern "C" __global__ __aicore__ void scaled_add(GM_ADDR x, GM_ADDR y, GM_ADDR z, ScaledAddTiling tiling) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    KernelScaledAdd op;
    op.Init(x, y, z, tiling);
    op.Process();
}

// Variant with the tiling in GM (op-project style) and a row-sum into one output through
// SetAtomicAdd: out[0:8] += sum of this block's x rows (8 floats per row).
extern "C" __global__ __aicore__ void row_sum_atomic(GM_ADDR x, GM_ADDR out, GM_ADDR tilingGm) {
    GET_TILING_DATA_WITH_STRUCT(ScaledAddTiling, t, tilingGm);
    TPipe pipe;
    TBuf<TPosition::VECCALC> ab, sb;
    pipe.InitBuffer(ab, 8 * sizeof(float));
    pipe.InitBuffer(sb, 8 * sizeof(float));
    LocalTensor<float> a = ab.Get<float>();
    LocalTensor<float> s = sb.Get<float>();
    GlobalTensor<float> xg, og;
    const uint32_t rows = t.totalLength / 8;
    const uint32_t per = (rows + GetBlockNum() - 1) / GetBlockNum();
    xg.SetGlobalBuffer((__gm__ float*)x, t.totalLength);
    og.SetGlobalBuffer((__gm__ float*)out, 8);
    Duplicate(s, 0.0f, 8);
    for (uint32_t r = per * GetBlockIdx(); r < rows && r < per * (GetBlockIdx() + 1); ++r) {
        DataCopy(a, xg[r * 8], 8);
        SetFlag<HardEvent::MTE2_V>(EVENT_ID0);  // TBufs: no queue events, synchronised by hand
        WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
        Add(s, s, a, 8);
        SetFlag<HardEvent::V_MTE2>(EVENT_ID0);  // the next row may overwrite `a` only after Add read it
        WaitFlag<HardEvent::V_MTE2>(EVENT_ID0);
    }
    SetAtomicAdd<float>();
    SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
    WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
    DataCopy(og, s, 8);
    SetAtomicNone();
}
