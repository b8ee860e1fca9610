// MTE2 re-read counters (ascend_sim/impl/reuse_rt.h): one block reads GM spans, writes, and reads parts of them again;
// the test checks the bytes it re-read by reuse distance (its GM bytes moved since their last read).
//   usage: reuse [shared]
#include "kernel_operator.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void reuse_kernel(GM_ADDR x, GM_ADDR y) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, 8192);
    yGm.SetGlobalBuffer((__gm__ float*)y, 1024);
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 32768);
    LocalTensor<float> ub = buf.Get<float>();
    DataCopy(ub, xGm[0], 4096);      // bytes [0, 16384) at clock 0
    PipeBarrier<PIPE_ALL>();
    DataCopy(ub, xGm[4096], 1024);   // [16384, 20480) at clock 16384
    PipeBarrier<PIPE_ALL>();
    DataCopy(yGm, ub, 1024);         // 4096 B written: clock 24576
    PipeBarrier<PIPE_ALL>();
    DataCopy(ub, xGm[3584], 1024);   // [14336, 18432): 2048 B read 24576 B ago, 2048 B read 8192 B ago
    PipeBarrier<PIPE_ALL>();
    DataCopy(ub, xGm[3584], 1024);   // the same span again, 4096 B later
    PipeBarrier<PIPE_ALL>();
}

// Two blocks read x[0, 1024) at clock 0; block 0 reads x[1024, 2048) at its clock 4096, block 1 at its clock 8192
// (after writing 4096 B): block 1's reads are re-reads of the launch at distances 0 and 4096.
extern "C" __global__ __aicore__ void shared_kernel(GM_ADDR x, GM_ADDR y) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, 8192);
    yGm.SetGlobalBuffer((__gm__ float*)y + 1024 * GetBlockIdx(), 1024);
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 4096);
    LocalTensor<float> ub = buf.Get<float>();
    DataCopy(ub, xGm[0], 1024);
    PipeBarrier<PIPE_ALL>();
    if (GetBlockIdx() == 1) {
        DataCopy(yGm, ub, 1024);
        PipeBarrier<PIPE_ALL>();
    }
    DataCopy(ub, xGm[1024], 1024);
    PipeBarrier<PIPE_ALL>();
}

int main(int argc, char** argv) {
    const bool shared = argc > 1 && argv[1][0] == 's';
    uint8_t* x = sim::GmAlloc(8192 * sizeof(float));
    uint8_t* y = sim::GmAlloc(2048 * sizeof(float));
    for (uint32_t i = 0; i < 8192; ++i) reinterpret_cast<float*>(x)[i] = float(i);
    const int errors = shared ? sim::Launch(2, [&] { shared_kernel(x, y); }) : sim::Launch(1, [&] { reuse_kernel(x, y); });
    sim::GmFree(x);
    sim::GmFree(y);
    return errors ? 1 : 0;
}
