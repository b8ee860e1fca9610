// op_kernel/reduce_sum_custom.cpp: y[r] = sum(x[r, :]) for float rows. Tiling key 1 (colNum a multiple
// of 512): BlockReduceSum (8 sums per 64-float repeat) then WholeReduceSum of those, the level-0 forms with
// explicit repeat strides; key 2: the count form ReduceSum. Rows are split over the cores; each core
// writes its row sums with one DataCopyPad.
#include "kernel_operator.h"
using namespace AscendC;

class KernelReduceSum {
public:
    __aicore__ inline KernelReduceSum() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, uint32_t rowNum, uint32_t colNum, uint32_t rowsPerCore)
    {
        this->colNum = colNum;
        const uint32_t first = rowsPerCore * GetBlockIdx();
        rows = first >= rowNum ? 0 : (rowNum - first < rowsPerCore ? rowNum - first : rowsPerCore);
        xGm.SetGlobalBuffer((__gm__ DTYPE_X*)x + first * colNum, rows * colNum);
        yGm.SetGlobalBuffer((__gm__ DTYPE_Y*)y + first, rows);
        pipe.InitBuffer(inQueueX, 2, colNum * sizeof(float));
        pipe.InitBuffer(outQueueY, 1, (rowsPerCore + 7) / 8 * 8 * sizeof(float));
        pipe.InitBuffer(workBuf, colNum / 8 * sizeof(float) + 256);
    }
    __aicore__ inline void ProcessBlockReduce()
    {
        LocalTensor<float> y = outQueueY.AllocTensor<float>();
        for (uint32_t r = 0; r < rows; ++r) {
            LocalTensor<float> x = CopyIn(r);
            LocalTensor<float> work = workBuf.Get<float>();
            const int32_t repeats = static_cast<int32_t>(colNum / 64);   // <= 255 with colNum <= 16320
            BlockReduceSum<float>(work, x, repeats, 64, 1, 1, 8);         // 8 partial sums per repeat
            const int32_t partials = static_cast<int32_t>(colNum / 8);   // 8 * repeats, a multiple of 64
            WholeReduceSum<float>(work[partials], work, 64, partials / 64, 1, 1, 8);
            WholeReduceSum<float>(y[r], work[partials], partials / 64, 1, 1, 1, 8);
            inQueueX.FreeTensor(x);
        }
        CopyOut(y);
    }
    __aicore__ inline void ProcessReduceSum()
    {
        LocalTensor<float> y = outQueueY.AllocTensor<float>();
        for (uint32_t r = 0; r < rows; ++r) {
            LocalTensor<float> x = CopyIn(r);
            ReduceSum(y[r], x, workBuf.Get<float>(), colNum);
            inQueueX.FreeTensor(x);
        }
        CopyOut(y);
    }

private:
    __aicore__ inline LocalTensor<float> CopyIn(uint32_t r)
    {
        LocalTensor<float> x = inQueueX.AllocTensor<float>();
        DataCopy(x, xGm[r * colNum], colNum);
        inQueueX.EnQue(x);
        return inQueueX.DeQue<float>();
    }
    __aicore__ inline void CopyOut(LocalTensor<float>& y)
    {
        outQueueY.EnQue(y);
        y = outQueueY.DeQue<float>();
        if (rows > 0) DataCopyPad(yGm, y, DataCopyExtParams{1, static_cast<uint32_t>(rows * sizeof(float)), 0, 0, 0});
        outQueueY.FreeTensor(y);
    }

    TPipe pipe;
    TQue<QuePosition::VECIN, 2> inQueueX;
    TQue<QuePosition::VECOUT, 1> outQueueY;
    TBuf<QuePosition::VECCALC> workBuf;
    GlobalTensor<DTYPE_X> xGm;
    GlobalTensor<DTYPE_Y> yGm;
    uint32_t colNum = 0, rows = 0;
};

extern "C" __global__ __aicore__ void reduce_sum_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tiling_data, tiling);
    KernelReduceSum op;
    op.Init(x, y, tiling_data.rowNum, tiling_data.colNum, tiling_data.rowsPerCore);
    if (TILING_KEY_IS(1)) {
        op.ProcessBlockReduce();
    } else if (TILING_KEY_IS(2)) {
        op.ProcessReduceSum();
    }
}
